"""Workspace: conversation search from the session on screen, started by the UI, closed with the workspace."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sessionref.host.workspace import Workspace
from sessionref.models import DemoModel
from sessionref.store import open_store
from sessionref.textsearch.store_index import StoreConversationIndex

HERE = "/home/ana/app"


def said(text: str) -> dict[str, object]:
    data = {
        "source": {"kind": "user"},
        "content": [{"type": "text", "text": text}],
        "role": "user",
        "id": text,
    }
    return {"type": "user/message", "data": data, "surfaceOp": "append"}


async def test_search_from_a_session_leaves_it_out_and_ranks_its_folder(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    for session_id, cwd in (("mine", HERE), ("here", HERE), ("there", "/srv/other")):
        store.create_session(cwd=cwd, session_id=session_id)
        store.append(session_id, [said(f"the flaky parser test in {session_id}")])
    workspace = Workspace(store, DemoModel(pace=0), cwd=HERE, conversations=StoreConversationIndex(store))
    assert workspace.conversations is not None
    before = await workspace.search_conversations(None, "flaky parser")
    assert before.status == "indexing"  # not started: not built yet
    workspace.start_conversation_search()
    await asyncio.to_thread(workspace.conversations.drain, 30)
    found = await workspace.search_conversations(workspace.agent("mine"), "flaky parser")
    assert {match.session_id: match.same_workspace for match in found.matches} == {
        "here": True,
        "there": False,
    }
    seen_from_nowhere = await workspace.search_conversations(None, "flaky parser", 1)
    assert len(seen_from_nowhere.matches) == 1
    await workspace.close()
    assert workspace.conversations.status.phase == "closed"


async def test_without_a_conversation_index_the_search_says_it_is_unavailable(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    workspace = Workspace(store, DemoModel(pace=0), cwd=HERE)
    workspace.start_conversation_search()  # nothing to start
    found = await workspace.search_conversations(None, "anything")
    assert (found.matches, found.status) == ((), "off")
    await workspace.close()
