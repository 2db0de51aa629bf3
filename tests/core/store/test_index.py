from __future__ import annotations

import json
import logging
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sessionref.store import StoreError, open_store
from sessionref.store import catalog as catalog_module
from sessionref.store import scan as scan_module
from sessionref.store.index import INDEX_FILE_NAME
from store_fixtures import mark_as_ours, write_zstd_frames


def write_log(
    root: Path, folder: str, header: dict[str, Any], events: list[dict[str, Any]] | None = None
) -> Path:
    path = root / folder / "session.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(header)] + [json.dumps(event) for event in events or []]
    path.write_text("\n".join(lines) + "\n")
    return path


def header(session_id: str, created_at: Any = 1, cwd: str | None = "/w") -> dict[str, Any]:
    value: dict[str, Any] = {"type": "session", "version": 0, "id": session_id, "createdAt": created_at}
    if cwd is not None:
        value["cwd"] = cwd
    return value


def title_event(seq: int, title: str, time: int = 1) -> dict[str, Any]:
    return {"type": "session/title", "seq": seq, "time": time, "data": {"title": title, "messageSeqs": []}}


async def test_growth_outside_the_store_is_caught_up_incrementally(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_log(tmp_path, "--w--/s1", header("s1"), [title_event(0, "first")])
    store = open_store(tmp_path, write_foreign=True)
    assert store.title("s1") == "first"
    offset_before = store.state.catalog.by_id["s1"].offset
    assert offset_before == path.stat().st_size
    read_from: list[int] = []
    real_lseek = os.lseek

    def tracking_lseek(fd: int, position: int, how: int) -> int:
        read_from.append(position)
        return real_lseek(fd, position, how)

    with open(path, "a") as file:
        file.write(json.dumps(title_event(1, "second")) + "\n")
    write_log(tmp_path, "--w--/s2", header("s2", created_at=7))
    monkeypatch.setattr(scan_module.os, "lseek", tracking_lseek)
    store.refresh()
    monkeypatch.undo()
    # The grown log is read from where the index left off; the new one from its start.
    assert read_from == [offset_before]
    assert store.title("s1") == "second"
    assert [record.id for record in await store.list_sessions()] == ["s2", "s1"]
    store.append("s1", [{"type": "turn/start", "data": {}}])
    assert store.read_log("s1")[1][-1]["seq"] == 2
    store.close()


async def test_discovery_never_reads_a_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_log(tmp_path, "--w--/s1", header("s1"), [title_event(0, "alpha")])
    write_log(tmp_path, "--w--/s2", header("s2"))
    store = open_store(tmp_path)

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a log was read during discovery")

    monkeypatch.setattr(scan_module, "read_log_fd", forbidden)
    monkeypatch.setattr("builtins.open", forbidden)
    monkeypatch.setattr(os, "open", forbidden)
    assert len(await store.list_sessions()) == 2
    assert await store.read_titles(["s1", "s2"]) == {"s1": "alpha", "s2": None}
    found = await store.search_candidates(exclude_id="x", target_cwd="/w", needle="alp", limit=5)
    assert [(record.id, label) for record, label in found] == [("s1", "alpha")]
    monkeypatch.undo()
    store.close()


@pytest.mark.parametrize("damage", ["delete", "garbage", "old-schema"])
async def test_index_is_rebuilt_when_missing_or_corrupt(tmp_path: Path, damage: str) -> None:
    write_log(tmp_path, "--w--/s1", header("s1"), [title_event(0, "kept title")])
    open_store(tmp_path).close()
    index = tmp_path / INDEX_FILE_NAME
    assert index.exists()
    if damage == "delete":
        index.unlink()
    elif damage == "garbage":
        for suffix in ("-wal", "-shm"):
            Path(str(index) + suffix).unlink(missing_ok=True)
        index.write_bytes(b"this is not sqlite at all" * 100)
    else:
        with sqlite3.connect(index) as connection:
            connection.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    store = open_store(tmp_path)
    assert store.state.index.rebuilt
    assert store.title("s1") == "kept title"
    store.close()


async def test_first_open_reports_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog_module, "PROGRESS_EVERY", 2)
    for number in range(5):
        write_log(tmp_path, f"--w--/s{number}", header(f"s{number}"))
    calls: list[tuple[int, int]] = []
    open_store(tmp_path, progress=lambda done, total: calls.append((done, total))).close()
    assert calls == [(2, 5), (4, 5), (5, 5)]
    calls.clear()
    open_store(tmp_path, progress=lambda done, total: calls.append((done, total))).close()
    assert calls == []


async def test_faults_keep_discovery_working(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write_log(tmp_path, "--w--/good", header("good", created_at=5), [title_event(0, "Good")])
    (tmp_path / "stray.txt").write_text("foreign file")
    (tmp_path / "--w--" / "notes.md").write_text("foreign file")
    (tmp_path / "--w--" / "emptydir").mkdir()
    garbage = tmp_path / "--w--" / "garbage" / "session.jsonl"
    garbage.parent.mkdir()
    garbage.write_bytes(b"\x00\xff not json\n")
    write_log(tmp_path, "--w--/no-id", {"type": "session", "createdAt": 1})
    write_log(
        tmp_path,
        "--w--/bad-middle",
        header("bad-middle", created_at=4),
        [title_event(0, "Mid")],
    )
    with open(tmp_path / "--w--" / "bad-middle" / "session.jsonl", "a") as file:
        file.write("{broken\n" + json.dumps({"type": "turn/end", "seq": 2, "time": 1, "data": {}}) + "\n")
    write_log(tmp_path, "--w--/future", header("future", created_at=2**52))
    write_log(tmp_path, "--w--/negative", header("negative", created_at=-10))
    write_log(tmp_path, "--w--/text-time", header("text-time", created_at="yesterday"))
    bad_zstd = tmp_path / "--w--" / "bad-zstd" / "session.jsonl.zstd"
    bad_zstd.parent.mkdir()
    bad_zstd.write_bytes(b"not zstd")
    write_log(tmp_path, "--w--/bad-cwd", {**header("bad-cwd", created_at=3), "cwd": 42})
    with caplog.at_level(logging.WARNING, logger="sessionref.store"):
        store = open_store(tmp_path, write_foreign=True)
    records = {record.id: record for record in await store.list_sessions()}
    # Most recent activity first: bad-cwd has no events (its createdAt, 3); good and bad-middle
    # were last active at time 1; a createdAt after the year 9999 reads as 0 like any bad one.
    assert [record.id for record in await store.list_sessions()] == [
        "bad-cwd",
        "bad-middle",
        "good",
        "future",
        "negative",
        "text-time",
    ]
    assert records["negative"].created_at == 0 and records["future"].created_at == 0
    assert records["bad-cwd"].cwd is None
    assert store.title("bad-middle") == "Mid"
    messages = "\n".join(caplog.messages)
    for fragment in ("garbage", "no-id", "bad-zstd", "negative", "yesterday"):
        assert fragment in messages
    # One bad line does not hide the session: the readable events, and the line that was skipped.
    assert store.read_log_report("bad-middle").skipped_lines == (3,)
    assert [event["seq"] for event in store.read_log("bad-middle")[1]] == [0, 2]
    assert (await store.read_surface("bad-middle"))["capturedThroughSeq"] == 2
    # A createdAt before 1970 reads as 0 everywhere, the surface as the index (docs/reliability.md).
    assert (await store.read_surface("negative"))["session"]["createdAt"] == 0
    store.append("bad-middle", [{"type": "turn/start", "data": {}}])
    assert b"{broken" in (tmp_path / "--w--" / "bad-middle" / "session.jsonl").read_bytes()
    store.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
async def test_unreadable_session_is_skipped_and_reads_fail_clearly(tmp_path: Path) -> None:
    path = write_log(tmp_path, "--w--/locked", header("locked"))
    write_log(tmp_path, "--w--/open", header("open"))
    store = open_store(tmp_path)
    path.chmod(0)
    try:
        with pytest.raises(StoreError) as caught:
            await store.read_surface("locked")
        assert caught.value.code == "STORE_UNREADABLE"
        store.refresh()
        assert [record.id for record in await store.list_sessions()] == ["open"]
    finally:
        path.chmod(0o644)
        store.close()


async def test_unreadable_file_gives_a_stable_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_log(tmp_path, "--w--/s1", header("s1"))
    store = open_store(tmp_path)
    from sessionref.store import logfile

    def denied(fd: int) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(logfile, "read_fd", denied)
    with pytest.raises(StoreError) as caught:
        await store.read_surface("s1")
    assert caught.value.code == "STORE_UNREADABLE"
    monkeypatch.undo()
    store.close()


async def test_duplicate_ids_keep_the_canonical_folder(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_log(tmp_path, "--a--/copy-of-dup", header("dup", cwd="/a"), [title_event(0, "copy")])
    write_log(tmp_path, "--b--/dup", header("dup", cwd="/b"), [title_event(0, "original")])
    write_log(tmp_path, "--c--/zz-other", header("dup", cwd="/c"), [title_event(0, "other")])
    with caplog.at_level(logging.WARNING, logger="sessionref.store"):
        store = open_store(tmp_path)
    assert [record.cwd for record in await store.list_sessions()] == ["/b"]
    assert store.title("dup") == "original"
    assert "already stored" in caplog.text
    store.close()
    (tmp_path / "--b--" / "dup" / "session.jsonl").unlink()
    store = open_store(tmp_path)
    assert store.title("dup") == "copy"
    store.close()


async def test_torn_tail_of_our_log_is_moved_aside_by_the_next_append_not_by_open(tmp_path: Path) -> None:
    path = mark_as_ours(
        write_log(
            tmp_path,
            "_no-cwd/s1",
            header("s1", cwd=None),
            [{"type": "turn/start", "seq": 0, "time": 1, "data": {}}],
        )
    )
    with open(path, "ab") as file:
        file.write(b'{"type":"turn/end","seq":1,"time":1,"da')
    before = path.read_bytes()
    store = open_store(tmp_path)
    store.refresh()
    assert path.read_bytes() == before
    assert not (tmp_path / "_no-cwd" / "s1" / "session.jsonl.torn").exists()
    written = store.append("s1", [{"type": "turn/end", "data": {}}])
    assert (tmp_path / "_no-cwd" / "s1" / "session.jsonl.torn").read_bytes().startswith(b'{"type":"turn/end"')
    assert written[0]["seq"] == 1
    assert [event["seq"] for event in store.read_log("s1")[1]] == [0, 1]
    store.close()


async def test_append_after_unterminated_complete_line_adds_the_newline(tmp_path: Path) -> None:
    path = mark_as_ours(write_log(tmp_path, "_no-cwd/s1", header("s1", cwd=None)))
    store = open_store(tmp_path)
    with open(path, "a") as file:
        file.write(json.dumps({"type": "turn/start", "seq": 0, "time": 1, "data": {}}))
    store.append("s1", [{"type": "turn/end", "data": {}}])
    assert [event["seq"] for event in store.read_log("s1")[1]] == [0, 1]
    store.close()


async def test_zstd_sessions_are_listed_read_only(tmp_path: Path) -> None:
    folder = tmp_path / "--w--" / "z1"
    folder.mkdir(parents=True)
    message = {
        "source": {"kind": "user"},
        "content": [{"type": "text", "text": "zstd hello"}],
        "role": "user",
    }
    lines = [
        header("z1"),
        {"type": "user/message", "seq": 0, "time": 1, "data": message, "surfaceOp": "append"},
    ]
    write_zstd_frames(folder / "session.jsonl.zstd", "".join(json.dumps(x) + "\n" for x in lines).encode())
    store = open_store(tmp_path)
    assert store.title("z1") == "zstd hello"
    assert not store.is_writable("z1")
    assert len((await store.read_surface("z1"))["events"]) == 1
    for action in (
        lambda: store.append("z1", []),
        lambda: store.rename("z1", "x"),
        lambda: store.delete_session("z1"),
    ):
        with pytest.raises(StoreError) as caught:
            action()
        assert caught.value.code == "STORE_READ_ONLY"
    store.close()


async def test_removed_logs_disappear_on_refresh(tmp_path: Path) -> None:
    path = write_log(tmp_path, "--w--/s1", header("s1"))
    store = open_store(tmp_path)
    path.unlink()
    store.refresh()
    assert await store.list_sessions() == []
    with pytest.raises(StoreError) as caught:
        await store.read_surface("s1")
    assert caught.value.code == "STORE_SESSION_NOT_FOUND"
    store.close()


async def test_read_only_root_keeps_its_index_in_the_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_log(tmp_path / "dsh", "--w--/s1", header("s1"), [title_event(0, "cached")])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from sessionref.store import index as index_module

    real_access = os.access
    monkeypatch.setattr(
        index_module.os,
        "access",
        lambda path, mode: False if Path(path) == tmp_path / "dsh" else real_access(path, mode),
    )
    store = open_store(tmp_path / "dsh")
    assert not (tmp_path / "dsh" / INDEX_FILE_NAME).exists()
    assert store.state.index.path.is_relative_to(tmp_path / "cache")
    assert store.title("s1") == "cached"
    store.close()


async def test_unusable_index_file_falls_back_to_memory(tmp_path: Path) -> None:
    write_log(tmp_path, "--w--/s1", header("s1"), [title_event(0, "still listed")])
    (tmp_path / INDEX_FILE_NAME).mkdir()
    store = open_store(tmp_path)
    assert store.title("s1") == "still listed"
    store.close()


async def test_a_log_compressed_in_place_stays_listed(tmp_path: Path) -> None:
    path = write_log(tmp_path, "--w--/s1", header("s1"), [title_event(0, "before compression")])
    store = open_store(tmp_path)
    write_zstd_frames(path.with_name("session.jsonl.zstd"), path.read_bytes())
    path.unlink()
    store.refresh()
    assert store.title("s1") == "before compression"
    assert not store.is_writable("s1")
    store.close()


async def test_latest_usable_title_wins_and_fallback_needs_no_title(tmp_path: Path) -> None:
    message = {"source": {"kind": "user"}, "content": [{"type": "text", "text": "first prompt words here"}]}
    prompt = {"type": "user/message", "seq": 0, "time": 1, "data": message, "surfaceOp": "append"}
    write_log(
        tmp_path,
        "--w--/a",
        header("a"),
        [title_event(0, "Old"), title_event(1, "New"), title_event(2, "\x1b[0m")],
    )
    write_log(tmp_path, "--w--/b", header("b"), [prompt])
    path = write_log(tmp_path, "--w--/c", header("c"), [prompt])
    store = open_store(tmp_path)
    assert await store.read_titles(["a", "b", "c"]) == {
        "a": "New",
        "b": "first prompt words here",
        "c": "first prompt words here",
    }
    with open(path, "a") as file:
        file.write(json.dumps(title_event(1, "Renamed elsewhere")) + "\n")
    store.refresh()
    assert store.title("c") == "Renamed elsewhere"
    store.close()
