"""A re-walk narrowed to what a file watch reported: news in one folder without listing the others."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest
from sessionref.store import SessionStore, StoreError, open_store
from sessionref.store.foreign_state import ForeignRoot
from sessionref.store.index import INDEX_FILE_NAME


def native(number: int) -> str:
    return f"7a9e7ed0-0000-4000-8000-{number:012d}"


def write_line(path: Path, record: dict[str, object]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def prompt(path: Path, text: str) -> None:
    """Append a user line to the Claude Code session file `path`."""
    record = {
        "type": "user", "uuid": f"{path.stem}-{text}", "parentUuid": None, "cwd": "/home/ana/p",
        "timestamp": "2026-03-20T10:00:00.000Z", "message": {"role": "user", "content": text},
    }  # fmt: skip
    write_line(path, record)


class Touched:
    """Every folder listed and file statted while counting (the reader's walk and the store's stats)."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def under(self, folder: Path) -> list[str]:
        """The touched paths inside `folder`."""
        prefix = str(folder) + os.sep
        return [path for path in self.paths if path == str(folder) or path.startswith(prefix)]


@contextmanager
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[Touched]:
    touched = Touched()
    scandir, stat = os.scandir, os.stat

    def listing(path: object = ".") -> object:
        touched.paths.append(os.fspath(path))  # type: ignore[arg-type]
        return scandir(path)  # type: ignore[call-overload]

    def statting(path: object, *args: object, **kwargs: object) -> os.stat_result:
        touched.paths.append(os.fspath(path))  # type: ignore[arg-type]
        return stat(path, *args, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(os, "scandir", listing)
        patch.setattr(os, "stat", statting)
        yield touched


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A Claude Code home with two project folders of two sessions each."""
    claude = tmp_path / "claude"
    for number, project in enumerate(["-home-ana-a", "-home-ana-a", "-home-ana-b", "-home-ana-b"]):
        folder = claude / "projects" / project
        folder.mkdir(parents=True, exist_ok=True)
        prompt(folder / f"{native(number)}.jsonl", f"task {number}")
    return claude


def opened(tmp_path: Path, home: Path) -> SessionStore:
    return open_store(tmp_path / "store", sources=[ForeignRoot.of("claude-code", home)])


def listed(store: SessionStore, number: int) -> bool:
    try:
        store.record(f"claude-code:{native(number)}")
    except StoreError:
        return False
    return True


def test_a_new_session_is_found_without_walking_the_other_folders(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with closing(opened(tmp_path, home)) as store:
        new = home / "projects" / "-home-ana-a" / f"{native(9)}.jsonl"
        prompt(new, "Tail the deploy log")
        with counting(monkeypatch) as touched:
            assert store.refresh_changed([new])
        assert store.title(f"claude-code:{native(9)}") == "Tail the deploy log"
        assert touched.under(home / "projects" / "-home-ana-a")  # its folder was walked
        assert touched.under(home / "projects" / "-home-ana-b") == []
        assert all(listed(store, number) for number in range(4))


def test_a_grown_session_and_a_deleted_one_are_seen_in_their_folder_only(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = home / "projects" / "-home-ana-a"
    with closing(opened(tmp_path, home)) as store:
        grown = folder / f"{native(0)}.jsonl"
        write_line(grown, {"type": "custom-title", "customTitle": "Deploy", "sessionId": native(0)})
        (folder / f"{native(1)}.jsonl").unlink()
        with counting(monkeypatch) as touched:
            assert store.refresh_changed([grown, folder / f"{native(1)}.jsonl"])
        assert store.title(f"claude-code:{native(0)}") == "Deploy"
        assert not listed(store, 1)
        assert listed(store, 2) and listed(store, 3)  # the other folder's sessions are kept as they were
        assert touched.under(home / "projects" / "-home-ana-b") == []
        with counting(monkeypatch) as touched:
            assert not store.refresh_changed([grown])  # nothing new since
        assert touched.under(home / "projects" / "-home-ana-b") == []


def test_a_deleted_folder_takes_its_sessions_and_a_path_nowhere_walks_everything(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = home / "projects" / "-home-ana-b"
    with closing(opened(tmp_path, home)) as store:
        removed = [folder / f"{native(number)}.jsonl" for number in (2, 3)]
        for path in removed:
            path.unlink()
        folder.rmdir()
        assert store.refresh_changed([*removed, folder])
        assert not listed(store, 2) and not listed(store, 3)
        assert listed(store, 0) and listed(store, 1)
        prompt(home / "projects" / "-home-ana-a" / f"{native(8)}.jsonl", "unseen")
        with counting(monkeypatch) as touched:
            assert store.refresh_changed([tmp_path / "elsewhere" / "file"])  # cannot place it: everything
        assert listed(store, 8) and touched.under(home / "projects" / "-home-ana-a")


def test_the_index_writing_itself_walks_nothing(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with closing(opened(tmp_path, home)) as store:
        prompt(home / "projects" / "-home-ana-a" / f"{native(7)}.jsonl", "not reported")
        with counting(monkeypatch) as touched:
            assert not store.refresh_changed([tmp_path / "store" / f"{INDEX_FILE_NAME}-wal"])
        assert touched.under(home) == [] and not listed(store, 7)


def test_a_session_with_a_file_in_another_folder_is_decided_by_the_whole_root(
    tmp_path: Path, home: Path
) -> None:
    with closing(opened(tmp_path, home)) as store:
        copy = home / "projects" / "-home-ana-a" / f"{native(2)}.jsonl"  # the same session, copied
        prompt(copy, "task 2")
        prompt(copy, "later")
        assert store.refresh_changed([copy])
        whole = open_store(tmp_path / "other", sources=[ForeignRoot.of("claude-code", home)])
        with closing(whole):
            assert store.record(f"claude-code:{native(2)}") == whole.record(f"claude-code:{native(2)}")


def dsh_message(text: str, seq: int) -> dict[str, object]:
    """A user message event as another sessionref process appends it."""
    message = {
        "source": {"kind": "user"},
        "content": [{"type": "text", "text": text}],
        "role": "user",
        "id": text,
    }
    return {
        "type": "user/message",
        "seq": seq,
        "time": 1_790_000_000_000 + seq,
        "data": message,
        "surfaceOp": "append",
    }


def test_a_change_in_one_store_session_walks_only_its_folder(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "store"
    with closing(opened(tmp_path, home)) as store, closing(open_store(root)) as other:
        ids = [other.create_session(cwd=f"/home/ana/p{n}").id for n in range(3)]
        assert store.refresh()
        logs = {session_id: next(root.glob(f"*/{session_id}/session.jsonl")) for session_id in ids}
        for number, session_id in enumerate(ids[:2]):  # two grow in another process; one is reported
            write_line(logs[session_id], dsh_message(f"news {number}", 1))
        with counting(monkeypatch) as touched:
            assert store.refresh_changed([logs[ids[0]]])
        assert store.title(ids[0]) == "news 0"  # its fallback title: the first prompt
        assert store.title(ids[1]) is None  # not reported: not walked (the probe or a whole walk finds it)
        assert not touched.under(logs[ids[2]].parent.parent) and not touched.under(home)
        assert store.refresh() and store.title(ids[1]) == "news 1"


def known(store: SessionStore, session_id: str) -> bool:
    try:
        store.record(session_id)
    except StoreError:
        return False
    return True


def test_a_store_session_folder_deleted_or_added_is_found_by_walking_its_project_only(tmp_path: Path) -> None:
    root = tmp_path / "store"
    with closing(open_store(root)) as store, closing(open_store(root)) as other:
        kept, gone = (other.create_session(cwd="/home/ana/p").id for _ in range(2))
        assert store.refresh()
        folder = next(root.glob(f"*/{gone}"))
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
        assert store.refresh_changed([folder])  # a watch reports the folder gone
        assert not known(store, gone) and known(store, kept)
        new = other.create_session(cwd="/home/ana/p").id
        assert store.refresh_changed([next(root.glob(f"*/{new}"))])  # a new session's folder
        assert known(store, new)
        assert not store.refresh_changed([root / f"{INDEX_FILE_NAME}"])  # the index alone: nothing
