"""Sessions sessionref did not create are read-only unless the user opts in (issue 8)."""

from __future__ import annotations

import json
import os
from contextlib import closing
from pathlib import Path

import pytest
from sessionref.agent import AgentError
from sessionref.host.workspace import Workspace
from sessionref.store import StoreError, open_store
from sessionref.store.locking import FOREIGN_LOCK_DIR, LOCK_FILE_NAME
from test_index import header, write_log

CWD = "/w"


class NoModel:
    """A model the refused sends never reach."""

    name = "none"


def dsh_session(root: Path, session_id: str = "dsh-1") -> Path:
    start = {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}}
    return write_log(root, f"--w--/{session_id}", header(session_id, cwd=CWD), [start])


async def test_sending_into_a_dsh_session_is_refused_with_the_next_step(tmp_path: Path) -> None:
    log = dsh_session(tmp_path)
    before = log.read_bytes()
    with closing(open_store(tmp_path)) as store:
        assert not store.is_writable("dsh-1")
        refusal = store.write_refusal("dsh-1")
        assert refusal is not None and refusal.code == "STORE_READ_ONLY"
        assert "not created by sessionref" in refusal.message
        assert "start a new session and mention it with @" in refusal.message
        for action in (
            lambda: store.append("dsh-1", [{"type": "turn/end", "data": {}}]),
            lambda: store.rename("dsh-1", "mine now"),
            lambda: store.delete_session("dsh-1"),
        ):
            with pytest.raises(StoreError) as caught:
                action()
            assert caught.value.code == "STORE_READ_ONLY"
        workspace = Workspace(store, NoModel(), cwd=CWD)
        agent = workspace.agent("dsh-1")
        with pytest.raises(AgentError) as refused:
            await workspace.submit(agent, "hello from sessionref")
        assert refused.value.code == "AGENT_READ_ONLY"
        assert refused.value.message == refusal.message
        assert agent.status == "idle"
    assert log.read_bytes() == before
    assert sorted(path.name for path in log.parent.iterdir()) == ["session.jsonl"]


async def test_sessions_we_create_carry_our_lock_file_and_stay_writable(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    record = store.create_session(cwd=CWD)
    store.close()
    (log,) = tmp_path.glob("*/*/session.jsonl")
    assert (log.parent / LOCK_FILE_NAME).is_file()
    reopened = open_store(tmp_path)
    assert reopened.is_writable(record.id) and reopened.write_refusal(record.id) is None
    assert reopened.append(record.id, [{"type": "turn/start", "data": {}}])[0]["seq"] == 0
    reopened.delete_session(record.id)
    assert not log.parent.exists()
    reopened.close()


async def test_the_opt_in_writes_a_foreign_session_under_a_lock_of_ours(tmp_path: Path) -> None:
    log = dsh_session(tmp_path)
    store = open_store(tmp_path, write_foreign=True)
    assert store.is_writable("dsh-1")
    written = store.append("dsh-1", [{"type": "turn/end", "data": {"turn": 1}}])
    assert written[0]["seq"] == 1
    assert [event["seq"] for event in store.read_log("dsh-1")[1]] == [0, 1]
    # Nothing was added to the other program's folder; the lock lives in a folder of ours.
    assert sorted(path.name for path in log.parent.iterdir()) == ["session.jsonl"]
    assert len(list((tmp_path / FOREIGN_LOCK_DIR).iterdir())) == 1
    assert [record.id for record in await store.list_sessions()] == ["dsh-1"]
    store.close()


async def test_a_foreign_log_being_written_is_refused_even_with_the_opt_in(tmp_path: Path) -> None:
    log = dsh_session(tmp_path)
    line = (json.dumps({"type": "turn/end", "seq": 1, "time": 6, "data": {"turn": 1}}) + "\n").encode()
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    os.write(fd, line[:25])  # the other program is in the middle of this line
    store = open_store(tmp_path, write_foreign=True)
    before = log.read_bytes()
    with pytest.raises(StoreError) as caught:
        store.append("dsh-1", [{"type": "turn/start", "data": {"turn": 2}}])
    assert caught.value.code == "STORE_LOG_BUSY"
    assert log.read_bytes() == before
    assert not log.with_name("session.jsonl.torn").exists()
    os.write(fd, line[25:])
    os.close(fd)
    assert store.append("dsh-1", [{"type": "turn/start", "data": {"turn": 2}}])[0]["seq"] == 2
    store.close()


async def test_a_session_whose_folder_vanished_is_not_writable_and_says_so(tmp_path: Path) -> None:
    import shutil

    store = open_store(tmp_path)
    store.create_session(cwd=CWD, session_id="gone")
    shutil.rmtree(tmp_path / "--w--" / "gone")  # removed by hand while the store is open
    assert not store.is_writable("gone")
    with pytest.raises(StoreError) as caught:
        store.append("gone", [{"type": "turn/start", "data": {}}])
    assert caught.value.code == "STORE_SESSION_NOT_FOUND"
    with pytest.raises(StoreError) as caught:
        store.is_writable("never-existed")
    assert caught.value.code == "STORE_SESSION_NOT_FOUND"
    store.close()
