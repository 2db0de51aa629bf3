"""The only paths outside a source's root the store accepts: the databases the source's own list names.

Every path in the discovery index must lie below its source's root (`inside_root`), with one
exception: a source whose databases live in the projects it lists (Crush: `projects.json` names
projects, each with its own `<project>/.crush/crush.db`). For such a source the reader's
`DatabaseListing.linked_files` says which files those are now, each re-checked (a regular file
reached through no symbolic link, exactly where the format puts it); an index row naming any
other path outside the root is refused, as before (docs/reliability.md, "Links").
"""

from __future__ import annotations

from pathlib import Path

from sessionref.sources.registry import registered
from sessionref.store.foreign_state import ForeignRoot, inside_root

__all__ = ["holds", "linked_files"]


def linked_files(source: ForeignRoot) -> frozenset[str]:
    """The files outside `source`'s root its own list names now (empty, and no reader loaded, for most)."""
    info = registered(source.kind)
    if not info.linked:
        return frozenset()
    listing = info.reader().database
    return frozenset() if listing is None else listing.linked_files(Path(source.root))


def holds(path: object, root: str, linked: frozenset[str]) -> bool:
    """Whether an index row's `path` belongs to the source at `root`: below it, or one of `linked`."""
    return inside_root(path, root) or (isinstance(path, str) and path in linked)
