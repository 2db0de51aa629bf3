"""Which folders live discovery watches: each root and its folders level by level, while a level fits.

A recursive watch costs one watch per folder, and the store keeps one folder per session: on a
store of 100,000 sessions that is 100,000 watches to add (about 2 s holding the interpreter, and
more than a default `max_user_watches`). `WatchPlan` watches each folder on its own instead
(not recursively), and only the top of each root: the root, then its sub-folders level by level,
a whole level at a time while the root's folders stay within `MAX_WATCHED_PER_ROOT` and listing
them within `MAX_LISTED_PER_ROOT` entries. On a big store that is the root and its project
folders, where new, renamed and deleted session folders show up; in a Claude Code home it is
`projects/` and its project folders, where the session files themselves live. What lies below the
last whole level is left to `ActivityProbe` (`sessionref.host.activity_probe`). Setting up the
plan lists at most `MAX_LISTED_PER_ROOT` entries per root, whatever the store's size
(docs/sources/other-agents.md, "Live discovery").
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

__all__ = ["MAX_LISTED_PER_ROOT", "MAX_WATCHED_PER_ROOT", "WatchPlan"]

MAX_WATCHED_PER_ROOT: Final = 400
"""The most folders watched in one root (nine sources, the store and a few linked folders stay far
below a default `max_user_watches` of 8,192)."""
MAX_LISTED_PER_ROOT: Final = 5_000
"""The most directory entries listed in one root to choose its folders (this bounds the set-up)."""
MAX_DEPTH: Final = 6
"""The deepest level watched below a root (Codex CLI's day folders are at 4)."""


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a watched folder is: its root and its level below it (0: the root)."""

    root: str
    depth: int


@dataclass(slots=True)
class WatchPlan:
    """The folders watched, each on its own, and the level down to which each root is watched whole."""

    max_watched: int = MAX_WATCHED_PER_ROOT
    places: dict[str, _Place] = field(default_factory=dict)
    whole_depth: dict[str, int] = field(default_factory=dict)
    """Per root, the deepest level all of whose folders are watched (new folders there are admitted)."""
    counts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        roots: Iterable[Path],
        *,
        max_watched: int = MAX_WATCHED_PER_ROOT,
        max_listed: int = MAX_LISTED_PER_ROOT,
    ) -> WatchPlan:
        """The plan for `roots` (existing folders): each root's top levels, within the budgets. A root
        inside another (Antigravity's inside Gemini's) is planned first, with its own budget, and the
        outer root's levels stop at it."""
        plan = cls(max_watched=max_watched)
        texts = {os.path.normpath(os.path.abspath(root)) for root in roots}
        for text in sorted(texts, key=lambda text: (-text.count(os.sep), text)):
            if text not in plan.places and os.path.isdir(text):
                plan._plan_root(text, max_listed)
        return plan

    def _plan_root(self, root: str, max_listed: int) -> None:
        level = [root]
        depth = 0
        listed = 0
        count = 0
        while level and depth <= MAX_DEPTH and count + len(level) <= self.max_watched:
            for folder in level:
                self.places.setdefault(folder, _Place(root, depth))
            count += len(level)
            self.whole_depth[root] = depth
            below: list[str] = []
            for folder in level:
                found, used = _sub_folders(folder, max_listed - listed)
                listed += used
                if found is None:  # too many entries to list: this level is the last watched
                    self.counts[root] = count
                    return
                below.extend(found)
            level = [folder for folder in below if folder not in self.places]
            depth += 1
        self.counts[root] = count

    def watched(self) -> list[Path]:
        """The folders to watch (each on its own, not recursively), sorted."""
        return [Path(folder) for folder in sorted(self.places)]

    def is_watched(self, folder: str) -> bool:
        """Whether `folder` (absolute, normalised) is watched."""
        return folder in self.places

    def admit(self, folder: str) -> bool:
        """Watch `folder`, just created in a watched folder, when its level is watched whole and its
        root has room; whether it was added (False: the activity probe looks after it)."""
        folder = os.path.normpath(folder)
        parent = self.places.get(os.path.dirname(folder))
        if folder in self.places or parent is None:
            return False
        root = parent.root
        if parent.depth + 1 > self.whole_depth.get(root, -1) or self.counts.get(root, 0) >= self.max_watched:
            return False
        self.places[folder] = _Place(root, parent.depth + 1)
        self.counts[root] = self.counts.get(root, 0) + 1
        return True

    def forget(self, folders: Sequence[str]) -> bool:
        """Stop watching `folders` (deleted or renamed away) and what is below them; whether any was."""
        gone = [
            watched
            for watched, place in self.places.items()
            if place.depth > 0 and any(watched == f or watched.startswith(f + os.sep) for f in folders)
        ]
        for folder in gone:
            root = self.places.pop(folder).root
            self.counts[root] = self.counts.get(root, 1) - 1
        return bool(gone)


def _sub_folders(folder: str, budget: int) -> tuple[list[str] | None, int]:
    """`folder`'s sub-folders (symlinks not followed) and the entries listed; None past `budget` entries."""
    found: list[str] = []
    listed = 0
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                listed += 1
                if listed > budget:
                    return None, listed
                try:
                    if entry.is_dir(follow_symlinks=False):
                        found.append(os.path.normpath(entry.path))
                except OSError:
                    continue
    except OSError:  # vanished or unreadable meanwhile: nothing below it to watch
        return [], listed
    return found, listed
