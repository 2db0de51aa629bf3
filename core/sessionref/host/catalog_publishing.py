"""Keeping this machine's published sources current while a UI runs (`[catalog] publish`).

`BackgroundPublishing` owns one thread with an event loop of its own, so the UI's loop never runs
a publish: it publishes once at start, again soon after `nudge` (the store appended to a log,
live discovery saw a change; rounds are at least `settle` apart) and otherwise every
`interval` seconds. Each round is the
publisher's incremental publish (`catalog.publisher.Publisher.publish`: only what changed since
the catalog's copy is sent). A failure is never raised to the UI: `note` says it in one line,
and the next round waits for the backoff (`BACKOFF_SECONDS`, longer after each failure, nudges
or not); the next round that succeeds clears the note. See docs/catalog.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Final, TypeVar

from sessionref.catalog.conninfo import scrub
from sessionref.catalog.errors import CatalogError
from sessionref.catalog.publisher import BACKOFF_SECONDS, Publisher, PublishReport

PUBLISH_INTERVAL_SECONDS: Final = 30.0
"""How often the running app publishes without a nudge (changes of other agents' histories)."""
SETTLE_SECONDS: Final = 1.0
"""After a round, how long nudges gather before the next one (a streaming reply appends often)."""
FAILED_NOTE: Final = "publishing to the catalog failed ({code}): retrying in {wait:g} s"

ReportListener = Callable[[PublishReport], None]
NoteListener = Callable[[str | None], None]
T = TypeVar("T")


class BackgroundPublishing:
    """Runs `publisher`'s incremental publish in its own thread: at start, after a nudge, on a timer."""

    def __init__(
        self,
        publisher: Publisher,
        *,
        interval: float = PUBLISH_INTERVAL_SECONDS,
        settle: float = SETTLE_SECONDS,
        on_note: NoteListener | None = None,
    ) -> None:
        self.publisher = publisher
        self.interval = interval
        self.settle = settle
        self.note: str | None = None
        """One line saying the last round failed and when it is tried again (None: it succeeded)."""
        self._report_listeners: list[ReportListener] = []
        self._on_note = on_note
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the publishing thread (its first round runs at once); calling it again does nothing."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="catalog-publish", daemon=True)
            self._thread.start()

    def nudge(self) -> None:
        """Ask for a round soon (from any thread): something that may be published changed."""
        self._wake.set()

    def stop(self) -> None:
        """Stop after the round in progress (blocking: call it off the UI loop) and close the connection."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
        self.publisher.close()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        failures = 0
        try:
            while not self._stop.is_set():
                self._wake.clear()
                wait = self._round(loop, failures)
                if wait is not None:  # the catalog failed: nudges wait for the backoff too
                    failures += 1
                    self._stop.wait(wait)
                    continue
                failures = 0
                if self._stop.wait(self.settle):
                    break
                self._wake.wait(self.interval)
        finally:
            loop.close()

    def _round(self, loop: asyncio.AbstractEventLoop, failures: int) -> float | None:
        """One publish; None when it succeeded, else the seconds to wait before the next."""
        try:
            report = loop.run_until_complete(self.publisher.publish())
        except Exception as error:  # never raised to the UI: a note says it, the next round retries
            wait = BACKOFF_SECONDS[min(failures, len(BACKOFF_SECONDS) - 1)]
            if isinstance(error, CatalogError) and error.is_connection_failure:
                with contextlib.suppress(Exception):  # a connection to a dead server may fail to close
                    self.publisher.close()
            code = getattr(error, "code", type(error).__name__)
            self._set_note(scrub(FAILED_NOTE.format(code=code, wait=wait), self.publisher.conninfo))
            return wait
        self._set_note(None)
        for listener in list(self._report_listeners):
            _heard(listener, report)
        return None

    def _set_note(self, note: str | None) -> None:
        if note == self.note:
            return
        self.note = note
        if self._on_note is not None:
            _heard(self._on_note, note)

    def on_report(self, listener: ReportListener) -> Callable[[], None]:
        """Call `listener(report)` after every round that succeeded (in the publishing thread);
        returns the unsubscribe function."""
        self._report_listeners.append(listener)

        def remove() -> None:
            if listener in self._report_listeners:
                self._report_listeners.remove(listener)

        return remove


def _heard(listener: Callable[[T], None], value: T) -> None:
    """`listener(value)`; a listener that fails (its UI already gone) never stops the publishing."""
    with contextlib.suppress(Exception):
        listener(value)
