"""The catalog in the running app and the line mode: remote rows name their machine, the picker says
when the catalog was late or down, and what this machine publishes is kept current in the background."""

from __future__ import annotations

import asyncio
import queue
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from catalog_fixtures import machine_store
from log_events import answered, said
from pg_server import Catalog
from prompt_toolkit.data_structures import Size
from prompt_toolkit.formatted_text import to_plain_text
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from sessionref.catalog.connection import connect
from sessionref.catalog.publisher import Publisher, PublishReport
from sessionref.catalog.sharing import share
from sessionref.host.catalog_settings import open_configured_catalog
from sessionref.host.settings import load_settings
from sessionref.host.workspace import Workspace
from sessionref.models import DemoModel
from sessionref.store import open_store
from sessionref_tui.app import SessionrefApp
from sessionref_tui.repl.app import LineMode
from sessionref_tui.widgets.candidate_rows import RowFields
from sessionref_tui.widgets.mention_popup import MentionPopup
from sessionref_tui.widgets.sidebar import Sidebar
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.widgets import OptionList
from worker_wait import until, workers_done

NOW_MS = 1_800_000_000_000
DESK = "/srv/bob/deploy"
REMOTE_PLACE = "ann-laptop:/home/alice/billing"


@pytest.fixture
async def shared(catalog: Catalog, tmp_path: Path) -> Iterator[Catalog]:
    """alice published `a-billing` from her laptop and shared it with bob; bob's store has `b-deploy`."""
    catalog.admin("DELETE FROM sessionref.sessions")
    laptop = machine_store(
        tmp_path / "laptop",
        {"a-billing": ("/home/alice/billing", "billing retries", [said("why retry?"), answered("a budget")])},
    )
    publisher = Publisher(catalog.url("alice"), laptop, machine="ann-laptop", sources=["store"])
    try:
        await publisher.publish()
    finally:
        publisher.close()
        laptop.close()
    connection = connect(catalog.url("alice"))
    try:
        share(connection, "a-billing", "bob")
    finally:
        connection.close()
    machine_store(tmp_path / "desktop", {"b-deploy": (DESK, "deploy script", [said("ship it")])}).close()
    yield catalog


def _workspace(root: Path, url: str, *, deadline: float, publish: bool = False) -> Workspace:
    """bob's desktop workspace reading (and, with `publish`, publishing its store to) the catalog at `url`."""
    if publish:
        (root / "config.toml").write_text('[catalog]\npublish = ["store"]\n', encoding="utf-8")
    env = {"SESSIONREF_CATALOG_URL": url, "SESSIONREF_CATALOG_MACHINE": "desktop"}
    settings = load_settings(env, store_root=root)
    store = open_store(root)
    catalog = open_configured_catalog(settings.catalog, deadline=deadline)
    return Workspace(store, DemoModel(pace=0), cwd=DESK, settings=settings, catalog=catalog)


def _app(workspace: Workspace) -> SessionrefApp:
    return SessionrefApp(workspace, clock=lambda: NOW_MS, owns_workspace=True, cursor_blink=False)


async def settle(pilot: Pilot[Any]) -> None:
    await pilot.pause()
    await workers_done(pilot.app)
    await pilot.pause()


def _status(popup: MentionPopup) -> str:
    status = popup.query_one("#mention-status")
    return status.render_line(0).text


async def test_the_picker_sidebar_and_switcher_name_a_remote_sessions_machine(
    shared: Catalog, tmp_path: Path
) -> None:
    workspace = _workspace(tmp_path / "desktop", shared.url("bob"), deadline=5.0)
    async with _app(workspace).run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        sidebar = pilot.app.query_one(Sidebar)
        remote = next(entry for entry in sidebar.entries if entry.session_id == "a-billing")
        local = next(entry for entry in sidebar.entries if entry.session_id == "b-deploy")
        assert (remote.machine, local.machine) == ("ann-laptop", None)
        option_list = sidebar.query_one("#session-list", OptionList)
        prompts = [str(option_list.get_option_at_index(i).prompt) for i in range(option_list.option_count)]
        assert any("billing retries" in text and "ann-laptop:/ho" in text for text in prompts), prompts
        assert not any("deploy script" in text and ":" in text for text in prompts), prompts

        await pilot.press("@", *"i")
        await settle(pilot)
        popup = pilot.app.query_one(MentionPopup)
        rows: list[RowFields] = popup.candidate_list._rows
        assert {row.label: row.cwd for row in rows} == {
            "billing retries": REMOTE_PLACE,
            "deploy script": DESK,
        }
        assert "Tab/Enter pick" in _status(popup)  # the catalog answered: no note
        await pilot.press("escape")

        await pilot.press("ctrl+o", *"bill")
        await settle(pilot)
        palette = pilot.app.screen
        assert isinstance(palette, CommandPalette)
        shown = [str(option.prompt) for option in palette.query_one("CommandList").options]
        assert any(REMOTE_PLACE in text for text in shown), shown


async def test_the_picker_says_when_the_catalog_was_late(shared: Catalog, tmp_path: Path) -> None:
    workspace = _workspace(tmp_path / "desktop", shared.url("bob"), deadline=0.150)
    locker = psycopg.connect(shared.server.conninfo(database=shared.database))
    try:
        async with _app(workspace).run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            locker.execute("LOCK TABLE sessionref.sessions IN ACCESS EXCLUSIVE MODE")  # every read waits
            await pilot.press("@", *"deploy")
            await settle(pilot)
            popup = pilot.app.query_one(MentionPopup)
            assert [row.label for row in popup.candidate_list._rows] == ["deploy script"]
            assert "the catalog did not answer within 150 ms: local sessions only" in _status(popup)
            locker.rollback()
            # The next keystroke has the catalog again: the note goes. A loaded machine may take more
            # than 150 ms to answer even without the lock, so the deadline no longer decides it.
            assert workspace.catalog is not None
            workspace.catalog.deadline = 60.0
            await pilot.press("backspace")
            await settle(pilot)
            assert "did not answer" not in _status(popup)
    finally:
        locker.rollback()
        locker.close()


async def test_the_picker_says_when_the_catalog_is_down(shared: Catalog, tmp_path: Path) -> None:
    gone = f"host={tmp_path / 'no-server-here'} dbname={shared.database} user=bob"
    # A refused connection answers at once; a long deadline keeps a loaded machine from making it "late".
    workspace = _workspace(tmp_path / "desktop", gone, deadline=30.0)
    async with _app(workspace).run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("@", *"deploy")
        await settle(pilot)
        popup = pilot.app.query_one(MentionPopup)
        assert [row.label for row in popup.candidate_list._rows] == ["deploy script"]
        status = _status(popup)
        assert "the catalog is not available (CATALOG_UNREACHABLE): local sessions only" in status


def _published_texts(catalog: Catalog) -> list[str]:
    rows = catalog.admin(
        "SELECT m.text FROM sessionref.messages m JOIN sessionref.sessions s ON s.key = m.session_key"
        " WHERE s.machine = 'desktop' ORDER BY m.seq"
    )
    return [str(row[0]) for row in rows]


def _wait_until_published(reports: queue.Queue[PublishReport], catalog: Catalog, text: str) -> None:
    """Block until a background round has put `text` in the catalog (each round reports once)."""
    while not any(text in published for published in _published_texts(catalog)):
        reports.get(timeout=60)


async def test_the_running_app_publishes_a_new_message_in_the_background(
    shared: Catalog, tmp_path: Path
) -> None:
    workspace = _workspace(tmp_path / "desktop", shared.url("bob"), deadline=5.0, publish=True)
    reports: queue.Queue[PublishReport] = queue.Queue()
    async with _app(workspace).run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        # The app starts publishing once the sessions are on screen.
        await until(pilot, lambda: workspace.publishing is not None, "the app started publishing")
        assert workspace.publishing is not None
        workspace.publishing.on_report(reports.put)
        await asyncio.to_thread(_wait_until_published, reports, shared, "ship it")  # the first round

        await pilot.press(*"the rollout is green", "enter")
        await settle(pilot)
        await asyncio.to_thread(_wait_until_published, reports, shared, "the rollout is green")
        assert workspace.publishing.note is None
    assert "the rollout is green" in _published_texts(shared)


class WideOutput(DummyOutput):
    """A terminal wide enough for `/sessions` to show a whole folder."""

    def get_size(self) -> Size:
        return Size(rows=40, columns=200)


async def test_the_line_mode_names_a_remote_sessions_machine(shared: Catalog, tmp_path: Path) -> None:
    workspace = _workspace(tmp_path / "desktop", shared.url("bob"), deadline=5.0)
    with create_pipe_input() as pipe:
        mode = LineMode(workspace, input=pipe, output=WideOutput(), debounce=0, history=InMemoryHistory())
        changed = asyncio.Event()
        buffer = mode.session.default_buffer
        for event in (buffer.on_completions_changed, mode.lookups.on_update, mode.session.app.after_render):
            event += lambda *_args: changed.set()

        async def until(predicate: Callable[[], object]) -> None:
            async with asyncio.timeout(60):
                while not predicate():
                    changed.clear()
                    await changed.wait()

        def completions() -> list[Any]:
            state = buffer.complete_state
            return list(state.completions) if state is not None else []

        task = asyncio.get_running_loop().create_task(mode.run())
        task.add_done_callback(lambda _task: changed.set())
        pipe.send_text("/sessions bill\r")
        await until(lambda: any("billing retries" in line for line in mode.transcript.lines))
        (row,) = [line for line in mode.transcript.lines if "billing retries" in line]
        assert REMOTE_PLACE in row
        pipe.send_text("@bill")
        await until(lambda: any(to_plain_text(item.display) == "billing retries" for item in completions()))
        (remote,) = [item for item in completions() if to_plain_text(item.display) == "billing retries"]
        assert REMOTE_PLACE in to_plain_text(remote.display_meta)

        mode.request_exit()
        await task


async def test_publishing_to_a_catalog_that_is_down_is_a_note_and_stops_cleanly(
    shared: Catalog, tmp_path: Path
) -> None:
    gone = f"host={tmp_path / 'no-server-here'} dbname={shared.database} user=bob"
    workspace = _workspace(tmp_path / "desktop", gone, deadline=30.0, publish=True)
    notes: queue.Queue[str | None] = queue.Queue()
    try:
        publishing = workspace.start_publishing(notes.put)
        assert publishing is not None and workspace.start_publishing() is publishing
        note = await asyncio.to_thread(notes.get, timeout=60)
        assert note == "publishing to the catalog failed (CATALOG_UNREACHABLE): retrying in 1 s"
        publishing.nudge()  # a change while it waits for the backoff: nothing breaks
    finally:
        await workspace.close()  # stops the publishing thread (it is waiting for the backoff)
    assert publishing.note == note


async def test_nothing_is_published_when_publish_is_not_set(shared: Catalog, tmp_path: Path) -> None:
    workspace = _workspace(tmp_path / "desktop", shared.url("bob"), deadline=5.0)
    try:
        assert workspace.start_publishing() is None
    finally:
        await workspace.close()
