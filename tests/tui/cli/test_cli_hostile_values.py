"""Issue 20 through the real entry point: one hostile value costs its line, never the store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_store import HERE
from sessionref.store import StoreError, open_store
from sessionref_tui.cli import EXIT_OK, main

DSH_FOLDER = "--home-ana-app--"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def said(seq: int, text: str, **overrides: Any) -> dict[str, Any]:
    data = {
        "source": {"kind": "user"},
        "content": [{"type": "text", "text": text}],
        "role": "user",
        "id": f"m{seq}",
    }
    return {
        "type": "user/message",
        "seq": seq,
        "time": 1_700_000_000_000 + seq,
        "data": data,
        "surfaceOp": "append",
    } | overrides


def dsh_log(
    root: Path, session_id: str, lines: list[dict[str, Any]], created_at: int = 1_700_000_000_000
) -> None:
    """A DSH-written log (no lock file of ours) in the folder of HERE."""
    header = {"type": "session", "version": 0, "id": session_id, "createdAt": created_at, "cwd": HERE}
    folder = root / DSH_FOLDER / session_id
    folder.mkdir(parents=True)
    text = "\n".join(json.dumps(line) for line in [header, *lines]) + "\n"
    (folder / "session.jsonl").write_text(text, "utf-8")


def store_with(tmp_path: Path, session_id: str, hostile: list[dict[str, Any]]) -> Path:
    """A store holding an unrelated good DSH session and one whose log carries `hostile` lines."""
    root = tmp_path / "store"
    dsh_log(root, "good", [said(0, "the unrelated zeppelin")])
    dsh_log(root, session_id, [said(0, "before the zeppelin"), *hostile, said(9, "after the zeppelin")])
    return root


def shown_texts(capsys: pytest.CaptureFixture[str], root: Path, session_id: str) -> list[str]:
    code, out, err = run(capsys, "show", session_id, "--store", str(root), "--json")
    assert code == EXIT_OK, err
    return [item["text"] for item in json.loads(out)["conversation"]]


def searched(capsys: pytest.CaptureFixture[str], root: Path, text: str) -> set[str]:
    code, out, err = run(capsys, "search", text, "--store", str(root), "--json")
    assert code == EXIT_OK, err
    answer = json.loads(out)
    assert answer["status"] == "ok"
    return {match["sessionId"] for match in answer["matches"]}


HUGE_VALUES = {
    "seq 2^63": {"type": "turn/start", "seq": 2**63, "time": 1, "data": {}},
    "seq 2^70 mid-log": said(2**70, "huge seq"),
    "time 2^70": said(5, "huge time", time=2**70),
    "time before 1970": said(5, "negative time", time=-1),
    "no type": {"seq": 5, "time": 1, "data": {}},
    "type not a string": {"type": 7, "seq": 5, "time": 1, "data": {}},
    "data not an object": said(5, "x", data="text"),
    "surfaceOp delete": said(5, "deleted", surfaceOp="delete"),
    "replace of seqs not on the surface": said(
        5, "replaced", surfaceOp={"op": "replace", "start": 3, "end": 4}, sourceEventSeqs=[3, 4]
    ),
    "replace beyond int64": said(
        5, "replaced", surfaceOp={"op": "replace", "start": 0, "end": 2**64}, sourceEventSeqs=[0]
    ),
    "log-only event with a surfaceOp": {
        "type": "turn/start",
        "seq": 5,
        "time": 1,
        "data": {},
        "surfaceOp": "append",
    },
}


@pytest.mark.parametrize("hostile", list(HUGE_VALUES.values()), ids=list(HUGE_VALUES))
def test_one_hostile_line_costs_that_line_in_sessions_show_and_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], hostile: dict[str, Any]
) -> None:
    root = store_with(tmp_path, "bad", [hostile])
    code, out, err = run(capsys, "sessions", "--store", str(root), "--json")
    assert code == EXIT_OK, err
    assert {row["sessionId"] for row in json.loads(out)} == {"good", "bad"}
    assert shown_texts(capsys, root, "good") == ["the unrelated zeppelin"]
    assert shown_texts(capsys, root, "bad") == ["before the zeppelin", "after the zeppelin"]
    assert searched(capsys, root, "zeppelin") == {"good", "bad"}
    assert searched(capsys, root, "before") == {"bad"}
    assert searched(capsys, root, "after") == {"bad"}


def test_a_missing_surface_op_costs_one_line_in_snapshot_too(tmp_path: Path, capsys) -> None:
    missing = said(5, "no op")
    del missing["surfaceOp"]
    root = store_with(tmp_path, "bad", [missing])
    code, out, err = run(capsys, "snapshot", "bad", "--store", str(root), "--json")
    assert code == EXIT_OK, err
    assert "before the zeppelin" in out and "after the zeppelin" in out and "no op" not in out


async def test_the_store_counts_a_replace_it_cannot_fold_as_a_skipped_line(tmp_path: Path) -> None:
    bad = said(5, "replaced", surfaceOp={"op": "replace", "start": 3, "end": 4}, sourceEventSeqs=[3, 4])
    root = store_with(tmp_path, "bad", [bad])
    store = open_store(root)
    try:
        report = await store.read_surface_report("bad")
        assert [event["seq"] for event in report.snapshot["events"]] == [0, 9]
        assert report.skipped_lines == (3,)
    finally:
        store.close()


@pytest.mark.parametrize(
    "created_at", [2**53 - 1, 253_402_300_800_000, -1], ids=["2^53-1", "year 10000", "1969"]
)
def test_a_header_created_at_out_of_the_clock_still_shows(tmp_path: Path, capsys, created_at: int) -> None:
    root = tmp_path / "store"
    dsh_log(root, "odd", [said(0, "still here")], created_at=created_at)
    assert shown_texts(capsys, root, "odd") == ["still here"]
    code, out, err = run(capsys, "show", "odd", "--store", str(root))
    assert code == EXIT_OK, err
    assert "created: 1970-01-01T00:00:00+00:00" in out


@pytest.mark.parametrize("created_at", [2**53 - 1, 253_402_300_800_000])
def test_create_session_refuses_a_created_at_the_clock_cannot_show(tmp_path: Path, created_at: int) -> None:
    store = open_store(tmp_path)
    try:
        with pytest.raises(StoreError) as refused:
            store.create_session(cwd=None, session_id="late", created_at=created_at)
        assert refused.value.code == "STORE_INVALID_EVENT"
    finally:
        store.close()


def test_a_read_only_store_with_an_unusable_cache_folder_is_read_with_an_index_in_memory(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sessionref.store.index as index_module

    root = store_with(tmp_path, "bad", [])
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder's parent should be", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "cache"))  # mkdir fails, even for root
    real_access = index_module.os.access
    monkeypatch.setattr(  # the store root reads as read-only (chmod does not stop root)
        index_module.os, "access", lambda path, mode: False if Path(path) == root else real_access(path, mode)
    )
    before = sorted(path.name for path in root.iterdir())
    code, out, err = run(capsys, "sessions", "--store", str(root), "--json")
    assert code == EXIT_OK, err
    assert {row["sessionId"] for row in json.loads(out)} == {"good", "bad"}
    assert shown_texts(capsys, root, "bad") == ["before the zeppelin", "after the zeppelin"]
    assert searched(capsys, root, "zeppelin") == {"good", "bad"}
    assert sorted(path.name for path in root.iterdir()) == before


def test_an_unreadable_session_folder_is_unreadable_not_missing(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sessionref.store.catalog as catalog_module

    root = store_with(tmp_path, "other", [])
    locked = root / DSH_FOLDER / "locked"  # mode 000 for anyone but root: its log cannot be seen
    locked.mkdir()
    real_scandir = catalog_module.os.scandir

    def scandir(path):  # what mode 000 does to anyone but root
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(catalog_module.os, "scandir", scandir)
    code, _out, err = run(capsys, "show", "locked", "--store", str(root))
    assert code != EXIT_OK
    assert "STORE_UNREADABLE" in err and "Permission denied" in err and "not found" not in err
    _code, _out, err = run(capsys, "show", "nothing-here", "--store", str(root))
    assert "not found" in err
