"""The first scan of many new folders: helper processes give exactly what a serial scan gives."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pytest
from sessionref.store import first_scan
from sessionref.store.first_scan import scan_new_folders
from store_fixtures import layout_dsh_root


def folders_of(root: Path) -> list[str]:
    return sorted(
        f"{project.name}/{session.name}"
        for project in root.iterdir()
        if project.is_dir()
        for session in project.iterdir()
        if session.is_dir()
    )


@pytest.fixture
def dsh_root(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    layout_dsh_root(root, "/home/dev/project")  # 121 real DSH logs, every third compressed
    bad = root / "--w--" / "bad-cwd"
    bad.mkdir(parents=True)
    (bad / "session.jsonl").write_text('{"type":"session","id":"bad-cwd","createdAt":1,"cwd":7}\n')
    return root


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(first_scan, "PARALLEL_MIN_FOLDERS", 1)
    monkeypatch.setattr(first_scan, "CHUNK_FOLDERS", 7)


@pytest.mark.usefixtures("small_chunks")
def test_helpers_give_the_serial_scan_in_folder_order(
    dsh_root: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    folders = folders_of(dsh_root)
    given: list[int] = []
    give = first_scan._Helpers._give

    def counting_give(self: object, helper: object, index: int, root: str, chunk: object) -> bool:
        given.append(index)
        return give(self, helper, index, root, chunk)  # type: ignore[arg-type]

    monkeypatch.setattr(first_scan._Helpers, "_give", counting_give)
    serial = scan_new_folders(str(dsh_root), folders, lambda done: None, helpers=0)
    caplog.clear()
    reported: list[int] = []
    with caplog.at_level(logging.WARNING, logger="sessionref.store"):
        parallel = scan_new_folders(str(dsh_root), folders, reported.append, helpers=2)
    assert parallel == serial
    assert len(serial) == len(folders)
    assert given  # helpers did take chunks
    assert reported == sorted(reported) and reported[-1] == len(folders)
    # A warning logged inside a helper (or here, for the chunks this thread scanned) shows up here.
    assert any("bad-cwd" in message and "cwd" in message for message in caplog.messages)


@pytest.mark.skipif(os.name == "nt", reason="uses /bin/true as a helper that exits at once")
@pytest.mark.usefixtures("small_chunks")
def test_helpers_that_die_leave_their_chunks_to_this_process(
    dsh_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folders = folders_of(dsh_root)
    serial = scan_new_folders(str(dsh_root), folders, lambda done: None, helpers=0)
    monkeypatch.setattr(sys, "executable", "/bin/true")  # starts, reads nothing, exits
    assert scan_new_folders(str(dsh_root), folders, lambda done: None, helpers=2) == serial


@pytest.mark.usefixtures("small_chunks")
def test_helpers_that_cannot_start_leave_the_scan_to_this_process(
    dsh_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folders = folders_of(dsh_root)
    serial = scan_new_folders(str(dsh_root), folders, lambda done: None, helpers=0)
    monkeypatch.setattr(sys, "executable", str(dsh_root / "no-such-python"))
    assert scan_new_folders(str(dsh_root), folders, lambda done: None, helpers=2) == serial


@pytest.mark.usefixtures("small_chunks")
def test_an_exception_from_progress_stops_the_scan(dsh_root: Path) -> None:
    def stop(done: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        scan_new_folders(str(dsh_root), folders_of(dsh_root), stop, helpers=1)
