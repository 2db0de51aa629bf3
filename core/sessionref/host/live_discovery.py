"""Keeping a running app's store current: new, grown, renamed and deleted sessions, here and in other agents.

While the app or the line mode runs, `LiveDiscovery` watches the store's folder and every
source's folder and re-walks the store when something changed, then tells its listener, off the
event loop, when the walk found something the store did not know (its own writes are known
already):

* **watching** (the default where it works): the platform's file-change notification through
  `watchfiles`; changes arriving within `DEBOUNCE_MS` of each other are one re-walk, so an
  agent writing its log many times a second costs a few re-walks a second, and idle folders
  cost nothing. A batch re-walks only the folders its changed paths are in (`refresh_changed`:
  a new session file in one project folder lists that folder, not the other 30,000 sessions);
  the first batch, and one that names something other than a path, walk everything (`refresh`:
  one stat per unchanged file, only new bytes read);
* **re-scanning** (the fallback: `watchfiles` missing, or the watch failing — too many folders,
  a file system without notification): a re-walk every `POLL_SECONDS`.

`mode` says which is in use (`sessionref sources` prints it). A re-walk that fails is logged
and the next change tries again; nothing here ever raises into the app.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Final, Protocol

__all__ = ["DEBOUNCE_MS", "POLL_SECONDS", "LiveDiscovery", "Watcher", "available_mode"]

log = logging.getLogger("sessionref.host")

DEBOUNCE_MS: Final = 250
"""Changes closer together than this are one re-walk."""
IDLE_TICK_MS: Final = 1000
"""While nothing changes the watch wakes this often, only to say it is in place (nothing is walked)."""
POLL_SECONDS: Final = 1.0
"""How often the fallback re-walks."""
WATCHING: Final = "watching for file changes (watchfiles)"
RESCANNING: Final = f"re-scanning every {POLL_SECONDS:g} s (no file-change notification)"


class Watcher(Protocol):
    """Blocks yielding once per batch of changes under `folders` until `stop` is set."""

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
        rust_timeout=IDLE_TICK_MS,
        yield_on_timeout=True,
        raise_interrupt=False,
        ignore_permission_denied=True,
    )


def available_mode() -> str:
    """The mode a `LiveDiscovery` starts in here (watching when `watchfiles` can be imported)."""
    return WATCHING if importlib.util.find_spec("watchfiles") is not None else RESCANNING


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
    """One thread keeping a store current: re-walk on change (watching) or every second (re-scanning)."""

    def __init__(
        self,
        refresh: Callable[[], bool],
        folders: Sequence[Path],
        on_change: Callable[[], None],
        *,
        refresh_changed: Callable[[Collection[Path]], bool] | None = None,
        watcher: Watcher | None = None,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self._refresh = refresh
        self._refresh_changed = refresh_changed
        self._folders = [folder for folder in folders if folder.is_dir()]
        self._on_change = on_change
        self._watcher: Watcher | None = (
            watcher if watcher is not None else (_watchfiles if available_mode() == WATCHING else None)
        )
        self._poll_seconds = poll_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.mode = WATCHING if self._watcher is not None else RESCANNING
        """What keeps the store current now (it becomes re-scanning if the watch fails)."""
        self.ready = threading.Event()
        """Set once changes are being seen (the watch is in place, or re-scanning began)."""

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
            self._on_change()

    def _run(self) -> None:
        if self._watcher is not None and self._folders:
            try:
                for batch in self._watcher(self._folders, self._stop):
                    if self._stop.is_set():
                        return
                    if not self.ready.is_set():
                        self.ready.set()
                        self._rewalk()  # what changed between the store's catch-up and the watch
                    elif batch:
                        self._rewalk(batch)
                return
            except Exception as error:  # too many folders, no notification support, …
                log.warning("watching for file changes failed (%s); re-scanning instead", error)
                self.mode = RESCANNING
        self.ready.set()
        while not self._stop.wait(self._poll_seconds):
            self._rewalk()
