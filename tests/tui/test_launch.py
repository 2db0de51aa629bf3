"""Launching: the app paints before the store is open (progress while indexing), errors are one
clear line, a stale index is caught up after the sessions are shown, the demo store is seeded,
used and removed."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sessionref.host.settings import load_settings
from sessionref.host.workspace import Workspace
from sessionref.models import DemoModel
from sessionref.store import SessionStore, StoreError, open_store
from sessionref_tui import launch
from sessionref_tui.app import SessionrefApp
from sessionref_tui.demo import HOSTILE_TITLE, demo_session_id, seed_demo_store
from sessionref_tui.event_view import is_checkpoint, message_of
from sessionref_tui.store_loading import OpenAbandoned, Progress, StoreLoading
from sessionref_tui.widgets.composer import Composer
from sessionref_tui.widgets.sidebar import Sidebar
from textual.pilot import Pilot
from textual.widgets import Label
from worker_wait import workers_done

GUARD = 10.0
"""Seconds a cross-thread wait may take before the test fails instead of hanging."""
CWD = "/work/here"


class GatedOpener:
    """Opens a real workspace in the app's worker thread, but only after reporting progress and
    waiting for `release`: the test sees the app as it is while a large store is indexed."""

    def __init__(self, root: Path, progress_steps: list[tuple[int, int]]) -> None:
        self.root = root
        self.steps = progress_steps
        self.reported = threading.Event()
        self.release = threading.Event()
        self.store: Any = None

    def __call__(self, progress: Progress) -> Workspace:
        for done, total in self.steps:
            progress(done, total)
        self.reported.set()
        assert self.release.wait(GUARD), "the test never released the open"
        self.store = open_store(self.root)
        settings = load_settings({}, store_root=self.root)
        return Workspace(self.store, DemoModel(pace=0), cwd=CWD, settings=settings)


def loading_text(app: SessionrefApp) -> str:
    labels = ("#store-loading-status", "#store-loading-count")
    return " ".join(str(app.query_one(label, Label).render()) for label in labels)


async def test_the_app_paints_first_shows_indexing_progress_then_the_sessions(tmp_path: Path) -> None:
    seeded = open_store(tmp_path)
    ids = seed_demo_store(seeded, CWD)
    seeded.close()
    opener = GatedOpener(tmp_path, [(250, 1_000), (500, 1_000)])
    app = SessionrefApp(open_workspace=opener, owns_workspace=True, cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert opener.reported.wait(GUARD)
        await pilot.pause()
        assert app.query_one(StoreLoading).display and not app.query_one(Sidebar).display
        assert loading_text(app) == "Indexing sessions… 500 of 1,000"
        composer = app.query_one(Composer)
        assert composer.busy and not app.chat.workspace_ready
        # Typing is kept while the store opens; Enter does not send yet; no action reaches the store.
        await pilot.press("h", "i", "enter")
        assert composer.value.startswith("hi")
        chat = app.chat
        assert not chat.check_action("new_session", ()) and not chat.check_action("switch_session", ())
        assert app.chat.check_action("quit", ()) and app.chat.check_action("toggle_inspector", ())
        with pytest.raises(RuntimeError):
            _ = app.workspace

        opener.release.set()
        await workers_done(app)
        await pilot.pause()
        await workers_done(app)
        await pilot.pause()
        assert app.chat.workspace_ready and not app.query(StoreLoading)
        assert app.query_one(Sidebar).display and not composer.busy
        listed = {entry.session_id for entry in app.query_one(Sidebar).entries}
        assert set(ids) <= listed
        assert composer.value.startswith("hi")
        # Launching wrote no session: the one on screen is created by its first message.
        assert app.chat.is_draft
        assert {record.id for record in await app.workspace.store.list_sessions()} == set(ids)
    assert app.open_error is None


async def test_closing_the_app_stops_a_running_open_at_its_next_progress_report(tmp_path: Path) -> None:
    started, release, finished = threading.Event(), threading.Event(), threading.Event()
    outcome: list[BaseException] = []

    def opener(progress: Progress) -> Workspace:
        try:
            progress(1, 3)
            started.set()
            assert release.wait(GUARD)
            progress(2, 3)
        except BaseException as error:
            outcome.append(error)
            raise
        finally:
            finished.set()
        raise AssertionError("the open went on after the app closed")

    app = SessionrefApp(open_workspace=opener, owns_workspace=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert started.wait(GUARD)
    release.set()
    assert finished.wait(GUARD)
    assert [type(error) for error in outcome] == [OpenAbandoned]
    assert app.open_error is None


async def test_a_real_first_index_stops_when_the_app_closes(tmp_path: Path) -> None:
    for number in range(4):
        write_session(tmp_path, f"s{number}")
    app = SessionrefApp(open_workspace=lambda progress: None, owns_workspace=True)  # type: ignore[arg-type,return-value]
    app.stop_opening()  # as on unmount
    with pytest.raises(OpenAbandoned):
        open_store(tmp_path, progress=app.report_progress)
    store = open_store(tmp_path)  # the aborted walk wrote nothing and left nothing locked
    assert len(await store.list_sessions()) == 4
    store.close()


def write_session(root: Path, session_id: str) -> None:
    folder = root / "--w--" / session_id
    folder.mkdir(parents=True)
    header = {"type": "session", "version": 0, "id": session_id, "createdAt": 1, "cwd": "/w"}
    (folder / "session.jsonl").write_text(json.dumps(header) + "\n")


def append_line(path: Path, record: dict[str, Any]) -> None:
    with open(path, "a") as file:
        file.write(json.dumps(record) + "\n")


def headless(monkeypatch: pytest.MonkeyPatch, until: Any) -> list[SessionrefApp]:
    """Make `SessionrefApp.run` headless, driven by `until(pilot)`; returns the apps that ran."""
    ran: list[SessionrefApp] = []
    real_run = SessionrefApp.run

    def run(self: SessionrefApp, *args: Any, **kwargs: Any) -> Any:
        ran.append(self)
        return real_run(self, headless=True, size=(120, 36), auto_pilot=until)

    monkeypatch.setattr(SessionrefApp, "run", run)
    return ran


async def settle(
    pilot: Pilot[Any], done: Callable[[], bool] = lambda: False, *, held: str | None = None
) -> bool:
    """Run the app's workers and messages until `done()` holds or nothing is left to run.

    The open, the catch-up and the sidebar reload are each a worker whose result comes back as a
    message that may start the next one; every round finishes the running workers and then the
    messages they posted. Workers of the group `held` (blocked by the test) are not waited for.
    Bounded, so a missing step fails the test instead of hanging it.
    """

    def waited() -> list[Any]:
        return [worker for worker in pilot.app.workers if worker.group != held]

    for _ in range(50):
        if done():
            return True
        await workers_done(pilot.app, skip_group=held)
        await pilot.pause()
        if not done() and all(worker.is_finished for worker in waited()):
            await pilot.pause()  # a callback scheduled after the last refresh may start one more
            if all(worker.is_finished for worker in waited()):
                return done()
    return done()


def test_run_chat_shows_a_stale_index_then_catches_it_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = open_store(tmp_path)
    record = store.create_session(cwd=CWD, session_id="elsewhere")
    store.rename(record.id, "before")
    path = tmp_path / next(p for p in store.state.catalog.states)
    store.close()
    # Another process renames it while sessionref is not running: the index is now stale.
    renamed = {"type": "session/title", "seq": 1, "time": 1, "data": {"title": "after", "messageSeqs": []}}
    append_line(path, renamed)
    seen: dict[str, Any] = {}
    walking, walk = threading.Event(), threading.Event()
    real_refresh = SessionStore.refresh

    def gated_refresh(self: SessionStore, progress: Any = None) -> None:
        walking.set()
        assert walk.wait(GUARD), "the test never let the catch-up run"
        real_refresh(self, progress)

    monkeypatch.setattr(SessionStore, "refresh", gated_refresh)

    def label(app: SessionrefApp) -> str | None:
        titles = {entry.session_id: entry.title for entry in app.query_one(Sidebar).entries}
        return titles.get("elsewhere")

    async def until(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, SessionrefApp)
        # The sessions come from the index first, while the catch-up waits to walk the logs.
        ready = lambda: app.chat.workspace_ready and label(app) is not None and walking.is_set()  # noqa: E731
        await settle(pilot, ready, held="catch-up")
        seen["first"] = (label(app), app.workspace.store.caught_up)
        walk.set()
        await settle(pilot, lambda: label(app) == "after")
        seen["then"] = (label(app), app.workspace.store.caught_up)
        app.exit()

    ran = headless(monkeypatch, until)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert launch.run_chat(tmp_path, cwd=CWD) == launch.EXIT_OK
    assert seen["first"] == ("before", False)
    assert seen["then"] == ("after", True)
    assert ran[0].open_error is None
    with pytest.raises(Exception) as caught:
        ran[0].workspace.store.title("elsewhere")
    assert getattr(caught.value, "code", None) == "STORE_CLOSED"


def test_a_store_that_cannot_be_opened_is_one_line_with_a_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def unopenable(root: Path, **_options: Any) -> Any:
        raise StoreError("STORE_UNREADABLE", f"cannot open the store at {root}: disk on fire")

    async def until(pilot: Pilot[Any]) -> None:
        await settle(pilot)

    monkeypatch.setattr(launch, "open_store", unopenable)
    ran = headless(monkeypatch, until)
    assert launch.run_chat(tmp_path, cwd=CWD) == launch.EXIT_FAILED
    assert ran[0].return_code == 1
    err = capsys.readouterr().err
    assert err.startswith("sessionref: ") and "(STORE_UNREADABLE)" in err
    assert "Traceback" not in err


def test_the_opener_closes_a_store_that_finishes_opening_after_the_app_closed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    opened: list[SessionStore] = []
    opener = launch.WorkspaceOpener(load_settings({}, store_root=tmp_path), CWD)

    def slow_open(root: Path, **options: Any) -> SessionStore:
        opener.close()  # the app is gone before the (slow) open returns
        opened.append(open_store(root, **options))
        return opened[-1]

    monkeypatch.setattr(launch, "open_store", slow_open)
    with pytest.raises(OpenAbandoned):
        opener(lambda done, total: None)
    assert opener.store is None and len(opened) == 1
    with pytest.raises(StoreError) as caught:
        opened[0].title("any")
    assert caught.value.code == "STORE_CLOSED"


def test_invalid_settings_are_one_line_with_a_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("SESSIONREF_PLACEMENT", "sideways")
    assert launch.run_chat(tmp_path) == launch.EXIT_FAILED
    err = capsys.readouterr().err
    assert err.startswith("sessionref: ") and "(SETTINGS_INVALID)" in err
    assert "Traceback" not in err


def test_run_demo_starts_on_a_new_session_offline_and_removes_its_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, Any] = {}

    def fake_run(self: SessionrefApp, *args: Any, **kwargs: Any) -> None:
        store = self.workspace.store
        seen["root"] = Path(store.root)
        seen["model"] = self.workspace.model
        seen["session"] = self.chat.first_session_id
        seen["stored"] = {record.id for record in asyncio.run(store.list_sessions())}
        seen["root_existed"] = Path(store.root).exists()
        seen["sources"] = store.sources()

    monkeypatch.setattr(SessionrefApp, "run", fake_run)
    assert launch.run_demo(pace=0) == launch.EXIT_OK
    assert isinstance(seen["model"], DemoModel) and seen["model"].pace == 0
    assert seen["session"] is None  # the app starts on a draft session
    names = ("retry", "index", "release", "migration", "incident", "hostile", "untitled", "trip")
    own = {session_id for session_id in seen["stored"] if ":" not in session_id}
    assert own == {demo_session_id(name) for name in names}
    foreign = sorted(session_id.split(":")[0] for session_id in seen["stored"] - own)
    others = ["antigravity", "copilot", "crush", "cursor", "cursor-agent", "opencode", "qwen-code"]
    assert foreign == sorted(["claude-code", "claude-code", "codex", "gemini", *others])
    demo_folder = seen["root"].parent
    # Only the homes the demo wrote are read, never the user's own histories.
    kinds = [count.source.kind for count in seen["sources"]]
    assert sorted(kinds) == sorted(["claude-code", "codex", "gemini", *others])
    assert all(Path(count.source.root).is_relative_to(demo_folder) for count in seen["sources"])
    assert seen["root_existed"] and not demo_folder.exists()


class TestDemoSeed:
    def test_sessions_are_varied(self, tmp_path: Path) -> None:
        store = open_store(tmp_path)
        ids = seed_demo_store(store, "/here", now_ms=1_800_000_000_000)
        assert len(ids) == 8 and len(set(ids)) == 8
        cwds = {store.record(session_id).cwd for session_id in ids}
        assert {"/here", None} <= cwds and len(cwds) >= 4
        ages = [store.record(session_id).created_at for session_id in ids]
        assert ages == sorted(set(ages), reverse=True)  # all different, newest first

    def test_one_is_compacted_and_one_is_longer_than_a_reference_budget(self, tmp_path: Path) -> None:
        store = open_store(tmp_path)
        seed_demo_store(store, "/here")
        _, release = store.read_log(demo_session_id("release"))
        assert any(is_checkpoint(message_of(event) or {}) for event in release)
        _, incident = store.read_log(demo_session_id("incident"))
        text_bytes = sum(
            len(str(message_of(event) or {}).encode()) for event in incident if message_of(event)
        )
        assert text_bytes > 65_536

    def test_hostile_title_keeps_its_markup_as_text(self, tmp_path: Path) -> None:
        store = open_store(tmp_path)
        seed_demo_store(store, "/here")
        title = store.title(demo_session_id("hostile")) or ""
        assert "[bold]not bold[/bold]" in title
        assert "[bold]" in HOSTILE_TITLE and "\x1b" in HOSTILE_TITLE

    def test_no_empty_session_is_seeded(self, tmp_path: Path) -> None:
        store = open_store(tmp_path)
        for session_id in seed_demo_store(store, "/here"):
            _, events = store.read_log(session_id)
            assert any(event["type"] == "user/message" for event in events)
