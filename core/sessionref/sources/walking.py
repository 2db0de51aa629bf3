"""Listing a source's folders without leaving its root and without reading any file.

Every walker starts from a source root and lists directories with `os.scandir`. An entry that
is a symlink is followed only when it resolves inside the root (a link elsewhere is left
alone, as if it were not there); unreadable or vanished folders are skipped, since other
programs create and delete them while we list.

Inside `only_under(folders)` a walk is narrowed to those folders, for a re-walk of what a file
watch reported changed: `list_dirs` yields only the sub-directories inside one of them or on the
way to one, and `list_files` yields files of a folder inside one of them or on the way to one (a
walker's top-level files, a database say, are still listed). Readers need not know: every walker
lists through these two functions.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from sessionref.sources.lines import is_inside

__all__ = ["env_root", "list_dirs", "list_files", "only_under", "real_root"]

_ONLY_UNDER: ContextVar[tuple[str, ...] | None] = ContextVar("sessionref_walk_only_under", default=None)
"""The folders a walk is narrowed to (None: the whole root)."""


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


@contextmanager
def only_under(folders: Collection[Path]) -> Iterator[None]:
    """Within the block, walks in this thread list only `folders` (absolute) and the way to them."""
    token = _ONLY_UNDER.set(tuple(os.path.normpath(folder) for folder in folders))
    try:
        yield
    finally:
        _ONLY_UNDER.reset(token)


def _relation(directory: str, folders: tuple[str, ...]) -> tuple[bool, bool]:
    """`(inside one of folders, on the way to one)` for `directory` (normalised, absolute)."""
    inside = any(is_inside(directory, folder) for folder in folders)
    return inside, inside or any(is_inside(folder, directory) for folder in folders)


def _listed(directory: Path) -> bool:
    """Whether a walk narrowed by `only_under` lists anything in `directory` (always, when not narrowed)."""
    folders = _ONLY_UNDER.get()
    return folders is None or _relation(os.path.normpath(directory), folders)[1]


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
    if not _listed(directory):
        return
    folders = _ONLY_UNDER.get()
    for entry in _entries(directory, root):
        if folders is not None and not _relation(os.path.normpath(entry.path), folders)[1]:
            continue
        try:
            if _stays_inside(entry, root) and entry.is_dir():
                yield Path(entry.path)
        except OSError:
            continue


def list_files(directory: Path, root: str, prefix: str, suffixes: tuple[str, ...]) -> Iterator[Path]:
    """Regular files in `directory` named `prefix*suffix` (symlinks only when they resolve inside `root`)."""
    if not _listed(directory):
        return
    for entry in _entries(directory, root):
        name = entry.name
        if not name.startswith(prefix) or not name.endswith(suffixes):
            continue
        try:
            if _stays_inside(entry, root) and entry.is_file():
                yield Path(entry.path)
        except OSError:
            continue
