"""Listing a source's folders without leaving its root and without reading any file.

Every walker starts from a source root and lists directories with `os.scandir`. An entry that
is a symlink is followed only when it resolves inside the root (a link elsewhere is left
alone, as if it were not there); unreadable or vanished folders are skipped, since other
programs create and delete them while we list.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from sessionref.sources.lines import is_inside

__all__ = ["env_root", "list_dirs", "list_files", "real_root"]


def env_root(env: Mapping[str, str] | None, variable: str, home: Path | None, *default: str) -> Path:
    """`$variable` when set and non-empty, else `home / default...` (home: `Path.home()`)."""
    environment = os.environ if env is None else env
    configured = environment.get(variable, "")
    if configured:
        return Path(configured).expanduser()
    return (Path.home() if home is None else home).joinpath(*default)


def real_root(root: Path) -> str:
    """The resolved root that walked paths must stay inside."""
    return os.path.realpath(root)


def _entries(directory: Path, root: str) -> list[os.DirEntry[str]]:
    """The entries of `directory` sorted by name, or [] when it cannot be listed or leaves the root."""
    if not is_inside(os.path.realpath(directory), root):
        return []
    try:
        with os.scandir(directory) as listing:
            entries = list(listing)
    except OSError:
        return []
    entries.sort(key=lambda entry: entry.name)
    return entries


def _stays_inside(entry: os.DirEntry[str], root: str) -> bool:
    try:
        return not entry.is_symlink() or is_inside(os.path.realpath(entry.path), root)
    except OSError:
        return False


def list_dirs(directory: Path, root: str) -> Iterator[Path]:
    """The sub-directories of `directory` (symlinks only when they resolve inside `root`)."""
    for entry in _entries(directory, root):
        try:
            if _stays_inside(entry, root) and entry.is_dir():
                yield Path(entry.path)
        except OSError:
            continue


def list_files(directory: Path, root: str, prefix: str, suffixes: tuple[str, ...]) -> Iterator[Path]:
    """Regular files in `directory` named `prefix*suffix` (symlinks only when they resolve inside `root`)."""
    for entry in _entries(directory, root):
        name = entry.name
        if not name.startswith(prefix) or not name.endswith(suffixes):
            continue
        try:
            if _stays_inside(entry, root) and entry.is_file():
                yield Path(entry.path)
        except OSError:
            continue
