"""What the UIs read, write and follow of the store goes through `Workspace` (its last block of methods)."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Any

from sessionref.agent import make_user_message
from sessionref.host.workspace import Workspace
from sessionref.models import DemoModel
from sessionref.store import open_store

CWD = "/home/ana/app"


async def test_titles_renames_and_records_are_the_stores(tmp_path: Path) -> None:
    with closing(open_store(tmp_path)) as store:
        workspace = Workspace(store, DemoModel(pace=0), cwd=CWD)
        session_id = store.create_session(cwd=CWD).id
        assert workspace.has_session(session_id) and not workspace.has_session("no-such-session")
        assert workspace.record(session_id).cwd == CWD
        await workspace.rename(session_id, "Parser review")
        assert workspace.title(session_id) == "Parser review" == store.title(session_id)
        assert workspace.store_root == Path(store.root)


def test_the_log_and_its_appends_are_followed_through_the_workspace(tmp_path: Path) -> None:
    with closing(open_store(tmp_path)) as store:
        workspace = Workspace(store, DemoModel(pace=0), cwd=CWD)
        session_id = store.create_session(cwd=CWD).id
        seen: list[tuple[str, list[dict[str, Any]]]] = []
        unsubscribe = workspace.on_log_appended(lambda sid, events: seen.append((sid, events)))
        event = {"type": "user/message", "data": make_user_message("hello"), "surfaceOp": "append"}
        store.append(session_id, [event])
        unsubscribe()
        store.append(session_id, [event])
        seen_types = [(sid, [e["type"] for e in events]) for sid, events in seen]
        assert seen_types == [(session_id, ["user/message"])], "one append, before the unsubscribe"
        report = workspace.read_log(session_id)
        assert [e["type"] for e in report.events].count("user/message") == 2
        assert report.skipped_lines == ()


def test_a_store_opened_from_its_index_alone_catches_up_through_the_workspace(tmp_path: Path) -> None:
    with closing(open_store(tmp_path)) as first:
        first.create_session(cwd=CWD)
    with closing(open_store(tmp_path, catch_up=False)) as store:
        workspace = Workspace(store, DemoModel(pace=0), cwd=CWD)
        assert not workspace.caught_up
        workspace.catch_up()
        assert workspace.caught_up
