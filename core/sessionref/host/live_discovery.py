"""Keeping a running app's store current: new, grown, renamed and deleted sessions, here and in other agents.

While the app or the line mode runs, `LiveDiscovery` watches the top folders of the store and of
every source and re-walks the store when something changed, then tells its listener, off the
event loop, when the walk found something the store did not know (its own writes are known
already):

* **watching** (the default where it works): the platform's file-change notification through
  `watchfiles`, on a bounded set of folders, each watched on its own (`WatchPlan`: each root's
  top levels, such as the store's project folders, where new, renamed and deleted sessions show
  up), so setting it up costs the same on a store of 100 sessions or 100,000. Grown sessions
  below the watched folders are found by `ActivityProbe` (a few hundred stats of the recently
  active sessions twice a second), and a whole walk every `SWEEP_SECONDS` catches what neither
  sees (an old session growing below the watched folders). Changes arriving within
  `DEBOUNCE_MS` of each other are one re-walk, so an agent writing its log many times a second
  costs a few re-walks a second. A batch re-walks only the folders its changed paths are in
  (`refresh_changed`: a new session file in one project folder lists that folder, not the other
  30,000 sessions); the first batch, and one that names something other than a path, walk
  everything (`refresh`: one stat per unchanged file, only new bytes read). A folder created
  where the plan watches whole levels is watched from then on (the watch restarts; its first
  batch re-walks the new folders, for what was written before the new watch was in place);
* **re-scanning** (the fallback: `watchfiles` missing, or the watch failing — too many folders,
  a file system without notification): a re-walk every `POLL_SECONDS`.

`mode` says which is in use (`sessionref sources` prints it). A re-walk that fails is logged
and the next change tries again; nothing here ever raises into the app.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Final, Protocol

from sessionref.host.activity_probe import RECENT_SESSIONS, ActivityProbe
from sessionref.host.watch_plan import MAX_LISTED_PER_ROOT, MAX_WATCHED_PER_ROOT, WatchPlan

__all__ = ["DEBOUNCE_MS", "POLL_SECONDS", "SWEEP_SECONDS", "LiveDiscovery", "Watcher", "available_mode"]

log = logging.getLogger("sessionref.host")

DEBOUNCE_MS: Final = 250
"""Changes closer together than this are one re-walk."""
PROBE_MS: Final = 500
"""How often the recently active sessions are probed; while nothing changes the watch wakes this often."""
SWEEP_SECONDS: Final = 300.0
"""While watching, how often everything is walked anyway: what neither the watch nor the probe sees (an
old session growing below the watched folders) is listed at most this late."""
POLL_SECONDS: Final = 1.0
"""How often the fallback re-walks."""
WATCHING: Final = (
    f"watching for file changes (watchfiles): each root's top folders, the {RECENT_SESSIONS} most recent"
    f" sessions probed every {PROBE_MS / 1000:g} s, everything walked every {SWEEP_SECONDS / 60:g} min"
)
RESCANNING: Final = f"re-scanning every {POLL_SECONDS:g} s (no file-change notification)"


class Watcher(Protocol):
    """Blocks yielding once per batch of changes in `folders` (each watched on its own, not recursively)
    until `stop` is set."""

    def __call__(self, folders: Sequence[Path], stop: threading.Event) -> Iterable[Collection[object]]:
        """One collection per coalesced batch of changes; an empty one now and then while nothing changes
        (the first item, empty or not, says the watch is in place)."""
        ...


def _watchfiles(folders: Sequence[Path], stop: threading.Event) -> Iterable[Collection[object]]:
    import watchfiles  # loaded only when watching starts

    yield from watchfiles.watch(
        *folders,
        stop_event=stop,
        debounce=DEBOUNCE_MS,
        step=50,
        rust_timeout=PROBE_MS,
        yield_on_timeout=True,
        recursive=False,
        raise_interrupt=False,
        ignore_permission_denied=True,
    )


def available_mode() -> str:
    """The mode a `LiveDiscovery` starts in here (watching when `watchfiles` can be imported)."""
    return WATCHING if importlib.util.find_spec("watchfiles") is not None else RESCANNING


_ADDED: Final = 1
_DELETED: Final = 3
"""`watchfiles.Change.added` and `.deleted` (an `IntEnum`), without importing it here."""
WALK_FOLDER: Final = "*"
"""A name inside a folder: `refresh_changed` re-walks the folder holding each path it is given."""


def _changed_paths(batch: Collection[object]) -> list[Path] | None:
    """The paths of a batch of `(change, path)` items as `watchfiles` reports them; None when an item is
    something else (the watch could not say where: walk everything)."""
    paths: list[Path] = []
    for item in batch:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str)):
            return None
        paths.append(Path(item[1]))
    return paths


class LiveDiscovery:
    """One thread keeping a store current: watch the top folders and probe the recently active sessions
    (watching), or re-walk every second (re-scanning)."""

    def __init__(
        self,
        refresh: Callable[[], bool],
        folders: Sequence[Path],
        on_change: Callable[[], None],
        *,
        refresh_changed: Callable[[Collection[Path]], bool] | None = None,
        recent_files: Callable[[int], Sequence[str]] | None = None,
        watcher: Watcher | None = None,
        poll_seconds: float = POLL_SECONDS,
        probe_seconds: float = PROBE_MS / 1000,
        sweep_seconds: float = SWEEP_SECONDS,
        max_watched: int = MAX_WATCHED_PER_ROOT,
        max_listed: int = MAX_LISTED_PER_ROOT,
    ) -> None:
        self._refresh = refresh
        self._refresh_changed = refresh_changed
        self._recent_files = recent_files
        self._folders = [folder for folder in folders if folder.is_dir()]
        self._on_change = on_change
        self._watcher: Watcher | None = (
            watcher if watcher is not None else (_watchfiles if available_mode() == WATCHING else None)
        )
        self._poll_seconds = poll_seconds
        self._probe_seconds = probe_seconds
        self._budgets = (max_watched, max_listed)
        self._plan = WatchPlan(max_watched=max_watched)
        self._probe = ActivityProbe()
        self._probed_at = 0.0
        self._sweep_seconds = sweep_seconds
        self._swept_at = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.mode = WATCHING if self._watcher is not None else RESCANNING
        """What keeps the store current now (it becomes re-scanning if the watch fails)."""
        self.ready = threading.Event()
        """Set once changes are being seen (the watch is in place, or re-scanning began)."""

    @property
    def watched(self) -> list[Path]:
        """The folders watched now, each on its own (bounded per root, whatever the store's size)."""
        return self._plan.watched()

    @property
    def probed(self) -> int:
        """How many paths each probe of the recently active sessions stats or lists (bounded)."""
        return self._probe.probed

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="sessionref-live-discovery", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop watching; returns once the thread has ended (a re-walk under way finishes first)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def _rewalk(self, batch: Collection[object] | None = None) -> None:
        """Walk what `batch` names (everything when None, when it names something not a path, or
        without `refresh_changed`); tell the listener when the walk found something new."""
        paths = _changed_paths(batch) if batch is not None and self._refresh_changed is not None else None
        try:
            found = (
                self._refresh()
                if paths is None or self._refresh_changed is None
                else self._refresh_changed(paths)
            )
        except Exception as error:  # the index is a cache: the next change tries again
            log.warning("could not catch up with changed sessions: %s", error)
            return
        if found and not self._stop.is_set():  # the app's own writes are known already: nothing to redraw
            self._follow_recent()
            self._on_change()

    def _follow_recent(self) -> None:
        """Probe the most recently active sessions from now on (those the watch does not see)."""
        if self._recent_files is None:
            return
        try:
            files = self._recent_files(RECENT_SESSIONS)
        except Exception as error:  # a closed store, say: the probe keeps what it had
            log.warning("could not list the recently active sessions: %s", error)
            return
        self._probe.follow(files, self._plan.is_watched)

    def _probe_due(self) -> None:
        """Probe the recently active sessions when `probe_seconds` have passed since the last probe; walk
        everything when `sweep_seconds` have passed since the last sweep."""
        now = time.monotonic()
        if now - self._swept_at >= self._sweep_seconds:
            self._swept_at = self._probed_at = now
            self._rewalk()
            return
        if now - self._probed_at < self._probe_seconds:
            return
        self._probed_at = now
        changed = self._probe.changed()
        if changed:
            self._rewalk({(0, path) for path in changed})

    def _reshape(self, batch: Collection[object]) -> tuple[list[str], bool]:
        """Follow the folders a batch created or deleted: watched ones join or leave the plan, young ones
        below the watched levels are probed. Returns the folders that joined and whether the plan
        changed (then the watch restarts)."""
        joined: list[str] = []
        gone: list[str] = []
        for item in batch:
            if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str)):
                continue
            change, path = item
            path = os.path.normpath(path)
            if change == _DELETED:
                gone.append(path)
            elif change == _ADDED and os.path.isdir(path) and not os.path.islink(path):
                if self._plan.admit(path):
                    joined.append(path)
                else:
                    self._probe.add_young(path)
        left = bool(gone) and self._plan.forget(gone)
        return joined, bool(joined) or left

    def _run(self) -> None:
        if self._watcher is not None and self._folders:
            try:
                self._plan = self._new_plan()
                self._watch(self._watcher)
                return
            except Exception as error:  # too many folders, no notification support, …
                log.warning("watching for file changes failed (%s); re-scanning instead", error)
                self.mode = RESCANNING
        self.ready.set()
        while not self._stop.wait(self._poll_seconds):
            self._rewalk()

    def _new_plan(self) -> WatchPlan:
        return WatchPlan.of(self._folders, max_watched=self._budgets[0], max_listed=self._budgets[1])

    def _watch(self, watcher: Watcher) -> None:
        """Watch the plan's folders until stopped, restarting the watch whenever folders join or leave it."""
        joined: list[str] | None = None  # None: the first watch (walk everything once it is in place)
        while not self._stop.is_set():
            restart = False
            batches = iter(watcher(self._plan.watched(), self._stop))
            try:
                for batch in batches:
                    if self._stop.is_set():
                        return
                    if joined is None:
                        self.ready.set()
                        self._follow_recent()  # before the walk: what changes after it is probed
                        self._rewalk()  # what changed between the store's catch-up and the watch
                        self._swept_at = self._probed_at = time.monotonic()
                        joined = []
                        continue
                    elif joined:  # written in the new folders before their watch was in place
                        self._rewalk({(0, os.path.join(folder, WALK_FOLDER)) for folder in joined})
                        joined = []
                    elif batch:
                        joined, restart = self._reshape(batch)
                        self._rewalk(batch)
                    self._probe_due()
                    if restart:
                        break
                else:
                    return  # the watch ended
            except Exception:
                if joined is None:
                    raise  # the first watch failed: re-scan instead
                # A folder that joined may be gone already (a temporary one): plan again, once.
                log.debug("restarting the watch failed; planning it again", exc_info=True)
                self._plan = self._new_plan()
                joined = None
            finally:
                close = getattr(batches, "close", None)
                if close is not None:
                    close()  # the watch's own resources go now, before the next one is set up
