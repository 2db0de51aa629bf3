"""Start the Textual app: on the user's store (`run_chat`) or on a throw-away demo store (`run_demo`)."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from sessionref.contract.errors import CodedError, describe_error

from sessionref_tui.app import SessionrefApp
from sessionref_tui.display import inert
from sessionref_tui.store_loading import OpenAbandoned

if TYPE_CHECKING:
    from sessionref.host.settings import Settings
    from sessionref.host.workspace import Workspace
    from sessionref.service.protocols import Progress
    from sessionref.sources import SourceKind
    from sessionref.store import SessionStore
    from sessionref.store.foreign_state import ForeignRoot

# Only what the first frame needs is imported with this module. The store, the workspace, the
# model client, the conversation index and the sources' readers (with pydantic, httpx, SQLite) are
# imported where they are used: by `WorkspaceOpener` in the app's opening thread, after the first
# frame is painted, so `sessionref chat` shows its window without waiting for them.


def open_store(root: Path, **options: Any) -> SessionStore:
    """`sessionref.store.open_store`, imported on first use (see above)."""
    from sessionref.store import open_store as open_session_store

    return open_session_store(root, **options)


EXIT_OK = 0
EXIT_FAILED = 1
DEMO_PACE = 0.04
"""Seconds between the demo model's streamed words: slow enough to send again while it is still replying."""


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
    code, message = describe_error(error)
    stream.write(f"sessionref: {inert(message)} ({inert(code)})\n")
    return EXIT_FAILED


class WorkspaceOpener:
    """Opens the user's workspace for the app (in its worker thread) and remembers the store to close.

    The store is opened from its discovery index without the catch-up walk (`catch_up=False`);
    the app runs `refresh()` after the sessions are on screen. A directory without an index is
    indexed during the open, reporting `progress(done, total)` to the app's progress bar.
    """

    def __init__(
        self,
        settings: Settings,
        cwd: str,
        sources: Sequence[ForeignRoot] | Callable[[], Sequence[ForeignRoot]] = (),
    ) -> None:
        self.settings = settings
        self.cwd = cwd
        self.sources = sources
        """The other agents' histories the store reads, or a function `run_chat` gives that resolves
        them (called in the opening thread: it loads the sources' readers and the store)."""
        self.store: SessionStore | None = None
        self._lock = threading.Lock()
        self._closed = False

    def __call__(self, progress: Progress) -> Workspace:
        """Open the store and build the model; store and settings errors propagate with their code.

        Raises `OpenAbandoned` (closing the store) if `close` was called while the store opened.
        """
        from sessionref.host.catalog_settings import open_configured_catalog
        from sessionref.host.model_choice import build_model
        from sessionref.host.workspace import Workspace
        from sessionref.textsearch.store_index import StoreConversationIndex

        sources = self.sources() if callable(self.sources) else self.sources
        store = open_store(
            self.settings.store_root,
            progress=progress,
            catch_up=False,
            sources=tuple(sources),
        )
        with self._lock:
            if self._closed:
                store.close()
                raise OpenAbandoned("the app closed while the store was opening")
            self.store = store
        model = build_model(self.settings)
        conversations = StoreConversationIndex(store)  # opened and built later, in the background
        catalog = open_configured_catalog(self.settings.catalog)
        return Workspace(
            store, model, cwd=self.cwd, settings=self.settings, conversations=conversations, catalog=catalog
        )

    def close(self) -> None:
        """Close the store if it was opened, or as soon as its open finishes (idempotent)."""
        with self._lock:
            self._closed = True
            if self.store is not None:
                self.store.close()


def _coded(error: BaseException) -> bool:
    return isinstance(error, CodedError)


def run_chat(
    store_root: Path | None, *, cwd: str | None = None, sources: Sequence[SourceKind] | None = None
) -> int:
    """Run the chat app on the user's store; returns the exit status.

    The app paints first and opens the store in a thread (progress on screen while a large
    directory, or an agent's history seen for the first time, is indexed). `sources` is the
    command line's `--sources` (None: the settings decide). Settings and store errors are
    reported on stderr as `sessionref: <message> (<CODE>)`, never a traceback.
    """
    from sessionref.host.settings import load_settings

    try:
        settings = load_settings(store_root=store_root)
    except Exception as error:
        if not _coded(error):
            raise
        return _fail(sys.stderr, error)

    def roots() -> list[ForeignRoot]:
        from sessionref.host.sources import enabled_roots, resolve_sources

        return enabled_roots(resolve_sources(settings, selection=sources))

    opener = WorkspaceOpener(settings, cwd or os.getcwd(), roots)
    app = SessionrefApp(open_workspace=opener, owns_workspace=True)
    try:
        with exit_on_hangup(app):
            app.run()
    finally:
        opener.close()
    open_error = app.open_error
    if open_error is not None:
        if not _coded(open_error):
            raise open_error
        return _fail(sys.stderr, open_error)
    return EXIT_OK


def run_demo(*, pace: float | None = None) -> int:
    """Run the app on a fresh temporary store seeded with demo sessions and the offline demo model.

    The app starts on a new session that its first message creates. No key and no network are
    used, and the user's own agent histories are never read: small Claude Code, Codex CLI and
    Gemini CLI homes are written beside the store and are the demo's only sources. The temporary
    directory is removed on exit.
    """
    from sessionref.host.settings import load_settings
    from sessionref.host.workspace import Workspace
    from sessionref.models import DemoModel
    from sessionref.store.foreign_state import ForeignRoot
    from sessionref.textsearch.store_index import StoreConversationIndex

    from sessionref_tui.demo import seed_demo_store
    from sessionref_tui.demo_histories import seed_demo_histories

    root = Path(tempfile.mkdtemp(prefix="sessionref-demo-"))
    try:
        store_root = root / "store"
        store_root.mkdir()
        cwd = os.getcwd()
        now_ms = time.time_ns() // 1_000_000
        homes = seed_demo_histories(root / "agents", cwd, now_ms=now_ms)
        settings = load_settings({}, store_root=store_root)
        sources = [ForeignRoot.of(kind, home) for kind, home in homes.items()]
        store = open_store(store_root, sources=sources)
        try:
            seed_demo_store(store, cwd, now_ms=now_ms)
            model = DemoModel(pace=DEMO_PACE if pace is None else pace)
            conversations = StoreConversationIndex(store)
            workspace = Workspace(store, model, cwd=cwd, settings=settings, conversations=conversations)
            app = SessionrefApp(workspace, owns_workspace=True)
            with exit_on_hangup(app):
                app.run()
        finally:
            store.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return EXIT_OK
