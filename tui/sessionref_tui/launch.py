"""Start the Textual app: on the user's store (`run_chat`) or on a throw-away demo store (`run_demo`)."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from sessionref.models import DemoModel
from sessionref.settings import build_model, load_settings
from sessionref.store import open_store
from sessionref.workspace import Workspace

from sessionref_tui.app import SessionrefApp
from sessionref_tui.demo import seed_demo_store

EXIT_OK = 0
EXIT_FAILED = 1
DEMO_PACE = 0.04
"""Seconds between the demo model's streamed words: slow enough to send again while it is still replying."""


class IndexProgress:
    """Writes `Indexing sessions… done/total` on one stderr line while a big store is indexed.

    `begin` announces the open (a large store takes seconds even when already indexed);
    `finish` ends the line with a newline after indexing progress, or erases the announcement.
    """

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self._stream = stream
        self._shown = False
        self._announced = False

    def begin(self, root: Path) -> None:
        """Say which store is being opened (only on a terminal: pipes get no chatter)."""
        if self._stream.isatty():
            self._announced = True
            self._stream.write(f"Opening sessions in {root}…")
            self._stream.flush()

    def __call__(self, done: int, total: int) -> None:
        """Report progress (called by the store); the line is rewritten in place."""
        self._shown = True
        self._stream.write(f"\rIndexing sessions… {done:,}/{total:,}")
        self._stream.flush()

    def finish(self) -> None:
        """End the progress line, or erase the announcement, whichever was written."""
        if self._shown:
            self._stream.write("\n")
        elif self._announced:
            self._stream.write("\r\x1b[K")
        self._stream.flush()


@contextmanager
def exit_on_hangup(app: SessionrefApp) -> Iterator[None]:
    """While running `app`, a closed terminal (SIGHUP) or SIGTERM asks it to exit cleanly.

    A clean exit closes the workspace (a running reply is cancelled and what streamed so
    far is logged) and lets `run_demo` remove its temporary store.
    """
    signals = [getattr(signal, name) for name in ("SIGHUP", "SIGTERM") if hasattr(signal, name)]
    previous = {sig: signal.getsignal(sig) for sig in signals}
    for sig in signals:
        signal.signal(sig, lambda _sig, _frame: app.exit())
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _fail(stream: TextIO, error: BaseException) -> int:
    code = getattr(error, "code", type(error).__name__)
    message = getattr(error, "message", None) or str(error)
    stream.write(f"sessionref: {message} ({code})\n")
    return EXIT_FAILED


def run_chat(store_root: Path | None, *, cwd: str | None = None) -> int:
    """Open the user's store (showing indexing progress) and run the chat app; returns the exit status.

    Settings and store errors are reported on stderr as `sessionref: <message> (<CODE>)`, never a traceback.
    """
    try:
        settings = load_settings(store_root=store_root)
        progress = IndexProgress()
        progress.begin(settings.store_root)
        try:
            store = open_store(settings.store_root, progress=progress)
        finally:
            progress.finish()
    except Exception as error:
        if getattr(error, "code", None) is None:
            raise
        return _fail(sys.stderr, error)
    try:
        model = build_model(settings)
        workspace = Workspace(store, model, cwd=cwd or os.getcwd(), settings=settings)
        app = SessionrefApp(workspace, owns_workspace=True)
        with exit_on_hangup(app):
            app.run()
    finally:
        store.close()
    return EXIT_OK


def run_demo(*, pace: float | None = None) -> int:
    """Run the app on a fresh temporary store seeded with demo sessions and the offline demo model.

    No key and no network are used; the temporary directory is removed on exit.
    """
    root = Path(tempfile.mkdtemp(prefix="sessionref-demo-"))
    try:
        settings = load_settings({}, store_root=root)
        store = open_store(root)
        try:
            cwd = os.getcwd()
            session_ids = seed_demo_store(store, cwd)
            model = DemoModel(pace=DEMO_PACE if pace is None else pace)
            workspace = Workspace(store, model, cwd=cwd, settings=settings)
            app = SessionrefApp(workspace, session_id=session_ids[-1], owns_workspace=True)
            with exit_on_hangup(app):
                app.run()
        finally:
            store.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return EXIT_OK
