"""Build a `SessionrefApp` over a seeded temporary store, deterministic enough for SVG snapshots.

Ids come from the demo seeding (uuid5 of fixed names), ages from a fixed clock,
and the model is either the instant demo model or a `GatedModel` that holds the
agent in `running` until the test releases it (no sleeps anywhere).
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import uuid
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sessionref.host.settings import load_settings
from sessionref.host.workspace import DraftSession, Workspace
from sessionref.models import DemoModel
from sessionref.store import SessionStore, open_store
from sessionref.store.foreign_state import ForeignRoot
from sessionref.textsearch.store_index import StoreConversationIndex
from sessionref_tui.app import SessionrefApp
from sessionref_tui.demo import DEMO_NAMESPACE, demo_session_id, seed_demo_store
from sessionref_tui.demo_histories import seed_demo_histories
from worker_wait import until, workers_done

FIXED_NOW_MS = 1_800_000_000_000
"""The clock every factory app reads: ages in the sidebar and popup never drift between runs."""

PROJECT_CWD = "/home/ana/src/payments"
"""The workspace folder of the factory app ("This folder" in the sidebar while a session of it is shown)."""

HOME_DIR = "/home/ana"
"""The home folder the factory app shortens to `~` (fixed, so pictures do not depend on the machine)."""


class GatedModel:
    """Streams its first word, then waits for `release` before the rest: the agent stays `running`.

    `started` is set once a reply has begun; `calls` records every conversation it was given.
    """

    def __init__(self, words: Iterable[str] = ("Looking", " at", " it", " now.")) -> None:
        self.name = "gated model"
        self.provider = "test"
        self.model = "gated"
        self.context_window: int | None = None
        self.words = list(words)
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.calls: list[list[dict[str, Any]]] = []

    async def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        """Yield the first word, signal `started`, wait for `release`, then yield the rest."""
        self.calls.append(messages)
        yield self.words[0]
        self.started.set()
        await self.release.wait()
        for word in self.words[1:]:
            yield word

    async def summarize(self, messages: list[dict[str, Any]]) -> str:
        """A fixed summary."""
        return f"Summary of {len(messages)} messages."

    async def aclose(self) -> None:
        """Nothing to release."""


class FailingModel(GatedModel):
    """Raises a ModelError as soon as it is asked to reply."""

    async def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        """Fail at once with a coded error."""
        from sessionref.models import ModelError

        raise ModelError("MODEL_AUTH", "the API key was rejected")
        yield ""  # pragma: no cover - makes this an async generator


@dataclass
class Harness:
    """An app, its workspace and the seeded session ids."""

    app: SessionrefApp
    workspace: Workspace
    store: SessionStore
    session_ids: list[str]

    @property
    def current_id(self) -> str:
        """The session on screen (a draft's id until its first message creates it)."""
        current = self.app.chat.current_session_id
        assert current is not None
        return current

    def events(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """The raw log of a session (the current one by default)."""
        return self.store.read_log(session_id or self.current_id)[1]


def session_id_for(name: str) -> str:
    """The id of the seeded demo session `name` (retry, index, release, migration, incident, ...)."""
    return demo_session_id(name)


def draft_id(number: int) -> str:
    """The id of the `number`-th draft session a factory workspace hands out (1-based)."""
    return str(uuid.uuid5(DEMO_NAMESPACE, f"draft-{number}"))


def with_stable_drafts(workspace: Workspace) -> Workspace:
    """Make `workspace.draft_session()` hand out `draft_id(1)`, `draft_id(2)`, … (stable ids in pictures)."""
    numbers = itertools.count(1)

    def draft_session(cwd: str | None = None) -> DraftSession:
        return DraftSession(draft_id(next(numbers)), workspace.cwd if cwd is None else cwd)

    workspace.draft_session = draft_session  # type: ignore[method-assign]
    return workspace


def with_fixed_clock(store: SessionStore) -> SessionStore:
    """Sessions the app creates (a draft's first message) are stamped FIXED_NOW_MS, not the wall clock,
    and so are the events it appends where the store stamps events with a time (`time_ms`): ages in
    the sidebar ("just now") then never depend on the day the test runs."""
    create = store.create_session

    def create_session(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("created_at", FIXED_NOW_MS)
        return create(*args, **kwargs)

    store.create_session = create_session  # type: ignore[method-assign]
    for name in ("append", "rename", "write_compaction"):
        method = getattr(store, name)
        if "time_ms" in inspect.signature(method).parameters:
            setattr(store, name, _stamped(method))
    return store


def _stamped(method: Any) -> Any:
    def stamped(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("time_ms", FIXED_NOW_MS)
        return method(*args, **kwargs)

    return stamped


def build_harness(
    root: Path,
    *,
    model: Any | None = None,
    show_inspector: bool = False,
    seed: bool = True,
    open_session: str | None = None,
    histories: Path | None = None,
    text_search: bool = False,
) -> Harness:
    """A seeded store under `root`, a workspace in PROJECT_CWD and an app on a new (draft) session,
    or on the seeded session `open_session` (a `session_id_for` name). `seed=False`: an empty store.
    `histories`: also write the demo's Claude Code, Codex CLI and Gemini CLI homes there and read them.
    `text_search=True`: the workspace searches what was said (the picker's second group); the app
    starts building its index once the first session is shown (`await_text_index` waits for it)."""
    sources = []
    if histories is not None:
        homes = seed_demo_histories(histories, PROJECT_CWD, now_ms=FIXED_NOW_MS)
        sources = [ForeignRoot.of(kind, home) for kind, home in homes.items()]
    store = with_fixed_clock(open_store(root, sources=sources))
    session_ids = seed_demo_store(store, PROJECT_CWD, now_ms=FIXED_NOW_MS) if seed else []
    settings = load_settings({}, store_root=root)
    conversations = StoreConversationIndex(store) if text_search else None
    workspace = Workspace(
        store, model or DemoModel(pace=0), cwd=PROJECT_CWD, settings=settings, conversations=conversations
    )
    with_stable_drafts(workspace)
    app = SessionrefApp(
        workspace,
        session_id=None if open_session is None else session_id_for(open_session),
        clock=lambda: FIXED_NOW_MS,
        owns_workspace=True,
        show_inspector=show_inspector,
        cursor_blink=False,
    )
    app.chat.home_dir = HOME_DIR
    return Harness(app=app, workspace=workspace, store=store, session_ids=session_ids)


async def await_text_index(pilot: Any, harness: Harness) -> None:
    """Wait until the app has started the conversation index and it is built
    (`build_harness(text_search=True)`)."""
    conversations = harness.workspace.conversations
    assert conversations is not None
    # The app starts it after its first frames.
    await until(pilot, lambda: conversations.status.phase != "idle", "the app started the conversation index")
    await asyncio.to_thread(conversations.drain, 30)


async def search_palette(pilot: Any, key: str, typed: str = "") -> None:
    """Open a palette with `key` (`ctrl+p` commands, `ctrl+o` the session switcher), type `typed`
    into it and wait until its hits are listed."""
    await pilot.press(key)
    await pilot.pause()
    if typed:
        await pilot.press(*typed)
    await workers_done(pilot.app)
    await pilot.pause()
