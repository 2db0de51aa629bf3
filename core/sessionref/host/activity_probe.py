"""Finding grown sessions where nothing is watched: a few stats of the recently active ones.

`WatchPlan` watches only the top levels of each root, so a session file below them (a store
session's `session.jsonl` in its own folder, once the store is big) grows unseen by the watch.
`ActivityProbe` looks after a bounded set instead, each time live discovery asks (twice a second):

* the files of the `RECENT_SESSIONS` most recently active sessions whose folder is not watched,
  and those folders: a grown or replaced file changes its size or mtime, a new file beside it
  changes its folder's mtime (one stat each);
* the `YOUNG_FOLDERS` newest folders created below the watched levels while the app runs (a new
  session's folder, whose files are not known yet): listed a few levels deep, a few entries each.

An old session that grows in an unwatched folder without being among these is seen at the next
walk that covers its folder. The cost does not depend on how many sessions there are.
"""

from __future__ import annotations

import os
import stat
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Final

__all__ = ["RECENT_SESSIONS", "YOUNG_FOLDERS", "ActivityProbe"]

RECENT_SESSIONS: Final = 200
"""How many of the most recently active sessions are probed."""
YOUNG_FOLDERS: Final = 64
"""How many folders created while the app runs are probed (the newest)."""
YOUNG_DEPTH: Final = 3
"""How deep a young folder is listed (Antigravity keeps a session's file three levels down)."""
YOUNG_ENTRIES: Final = 32
"""The most entries listed in one young folder."""

Signature = tuple[tuple[str, int, int], ...]
"""What a probe saw: `(path, size, mtime_ns)` per file or folder (size -1 for a folder)."""


def _stat(path: str) -> tuple[int, int] | None:
    """`(size, mtime_ns)` of `path` (size -1 for a folder), None when it is not there."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (-1 if stat.S_ISDIR(info.st_mode) else info.st_size), info.st_mtime_ns


def _listing(folder: str) -> Signature:
    """Files and folders under `folder`, `YOUNG_DEPTH` levels deep and `YOUNG_ENTRIES` entries at most."""
    seen: list[tuple[str, int, int]] = []
    level = [folder]
    for _ in range(YOUNG_DEPTH):
        below: list[str] = []
        for directory in level:
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        if len(seen) >= YOUNG_ENTRIES:
                            return tuple(sorted(seen))
                        try:
                            info = entry.stat(follow_symlinks=False)
                            is_folder = entry.is_dir(follow_symlinks=False)
                        except OSError:
                            continue
                        seen.append((entry.path, -1 if is_folder else info.st_size, info.st_mtime_ns))
                        if is_folder:
                            below.append(entry.path)
            except OSError:
                continue
        level = below
    return tuple(sorted(seen))


class ActivityProbe:
    """The recently active sessions' files and the young folders, and how each looked when last probed."""

    def __init__(self, *, young_folders: int = YOUNG_FOLDERS) -> None:
        self._files: dict[str, tuple[int, int] | None] = {}
        """Recent session files (and their folders) → (size, mtime_ns) when last probed."""
        self._folders: set[str] = set()
        """Which of `_files` are the folders."""
        self._young: OrderedDict[str, Signature] = OrderedDict()
        """Young folders, oldest first → their listing when last probed."""
        self._young_limit = young_folders

    @property
    def probed(self) -> int:
        """How many paths one probe stats or lists (bounded, whatever the store's size)."""
        return len(self._files) + len(self._young)

    def follow(self, files: Iterable[str], is_watched: Callable[[str], bool]) -> None:
        """Probe these recently active sessions' files (absolute) from now on, those whose folder is not
        watched, and their folders; paths followed already keep what they looked like."""
        wanted: dict[str, tuple[int, int] | None] = {}
        folders: set[str] = set()
        for path in files:
            folder = os.path.dirname(path)
            if is_watched(folder):
                continue
            folders.add(folder)
            for item in (path, folder):
                if item not in wanted:
                    wanted[item] = self._files[item] if item in self._files else _stat(item)
        self._files = wanted
        self._folders = folders
        for folder in [folder for folder in self._young if folder in wanted]:
            del self._young[folder]  # its session is known now: probed as a recent one

    def add_young(self, folder: str) -> None:
        """Probe `folder`, created below the watched levels, until newer ones push it out (nothing in it
        is known yet: the first probe reports every file in it)."""
        folder = os.path.normpath(folder)
        if folder in self._files or folder in self._young:
            return
        self._young[folder] = ()
        while len(self._young) > self._young_limit:
            self._young.popitem(last=False)

    def changed(self) -> list[str]:
        """Probe everything once; the paths that changed since the last probe (a folder's changed files,
        or a recent file itself when only its folder changed: the walk of its folder finds the rest)."""
        found: list[str] = []
        for path, before in list(self._files.items()):
            now = _stat(path)
            if now != before:
                self._files[path] = now
                # A file grew, appeared or vanished; a folder gained or lost a file: walk the folder
                # (the store re-walks the folder holding each path it is given).
                found.append(os.path.join(path, "*") if path in self._folders else path)
        for folder, listed in list(self._young.items()):
            listing = _listing(folder)
            if listing != listed:
                self._young[folder] = listing
                old = set(listed)
                found.extend(item[0] for item in listing if item[1] >= 0 and item not in old)
        return sorted(set(found))
