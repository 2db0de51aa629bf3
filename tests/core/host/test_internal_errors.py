"""The store's internal-error log: a bug's traceback is appended, privately, bounded, never via a link."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import sessionref.host.internal_errors as internal_errors
from sessionref.contract.errors import INTERNAL_ERROR, describe_error
from sessionref.host.internal_errors import (
    LOG_FOLDER,
    LOG_NAME,
    ROTATED_NAME,
    StoreInternalErrorLog,
    log_path,
)
from sessionref.store.paths import Folder


def raised(error: Exception) -> Exception:
    """`error` with a real traceback (as a host catches it)."""
    try:
        raise error
    except Exception as caught:
        return caught


def test_a_bug_is_shown_with_the_log_file_and_its_traceback_is_in_it(tmp_path: Path) -> None:
    log = StoreInternalErrorLog(tmp_path, clock=lambda: 0.0)
    code, message = describe_error(raised(KeyError("lost")), log)
    path = tmp_path / LOG_FOLDER / LOG_NAME
    assert code == INTERNAL_ERROR
    assert message.endswith(f"the traceback is in {path}")
    text = path.read_text(encoding="utf-8")
    first_lines = f"=== 1970-01-01T00:00:00Z pid {os.getpid()}\nTraceback (most recent call last):\n"
    assert text.startswith(first_lines)
    assert "in raised\n" in text and text.endswith("KeyError: 'lost'\n\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_entries_are_appended(tmp_path: Path) -> None:
    log = StoreInternalErrorLog(tmp_path)
    log.record(raised(ValueError("first")))
    log.record(raised(ValueError("second")))
    text = log_path(tmp_path).read_text(encoding="utf-8")
    assert text.count("=== ") == 2
    assert text.index("ValueError: first") < text.index("ValueError: second")


def test_the_log_is_rotated_before_it_outgrows_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(internal_errors, "LOG_MAX_BYTES", 2000)
    log = StoreInternalErrorLog(tmp_path)
    for index in range(12):
        log.record(raised(ValueError(f"error {index:02d} " + "x" * 200)))
    folder = tmp_path / LOG_FOLDER
    current, previous = folder / LOG_NAME, folder / ROTATED_NAME
    assert current.stat().st_size <= 2000 and previous.stat().st_size <= 2000
    assert "error 11" in current.read_text(encoding="utf-8")  # the newest is never the one dropped
    assert sorted(os.listdir(folder)) == [LOG_NAME, ROTATED_NAME]


def test_an_entry_appended_while_another_process_rotates_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(internal_errors, "LOG_MAX_BYTES", 100)
    internal_errors.append_entry(tmp_path, b"old " * 20 + b"\n")
    real_link = Folder.link
    others: list[str] = []

    def link_after_another_rotation(folder: Folder, existing: str, new: str) -> None:
        if not others:  # the other process rotates and appends between our unlink and our link
            others.append("rotated")
            internal_errors.append_entry(tmp_path, b"theirs " * 5 + b"\n")
        real_link(folder, existing, new)

    monkeypatch.setattr(Folder, "link", link_after_another_rotation)
    internal_errors.append_entry(tmp_path, b"ours " * 5 + b"\n")
    kept = b"".join(path.read_bytes() for path in (tmp_path / LOG_FOLDER).iterdir())
    assert b"old " in kept and b"theirs " in kept and b"ours " in kept


def test_a_huge_traceback_is_cut_head_and_tail(tmp_path: Path) -> None:
    log = StoreInternalErrorLog(tmp_path)
    log.record(raised(ValueError("v" * 1_000_000)))
    text = log_path(tmp_path).read_text(encoding="utf-8")
    assert len(text) < internal_errors.ENTRY_CHARS + 200
    assert text.index("Traceback") < text.index("characters left out")


def test_no_store_means_nothing_is_created(tmp_path: Path) -> None:
    missing = tmp_path / "no-store"
    _, message = describe_error(raised(RuntimeError("boom")), StoreInternalErrorLog(missing))
    assert message.endswith(f"its traceback could not be saved (there is no store at {missing})")
    assert not missing.exists()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_a_link_in_place_of_the_log_folder_is_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    store = tmp_path / "store"
    store.mkdir()
    (store / LOG_FOLDER).symlink_to(outside, target_is_directory=True)
    _, message = describe_error(raised(RuntimeError("boom")), StoreInternalErrorLog(store))
    assert "its traceback could not be saved" in message
    assert list(outside.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_a_link_in_place_of_the_log_file_is_never_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep\n", encoding="utf-8")
    (tmp_path / LOG_FOLDER).mkdir()
    (tmp_path / LOG_FOLDER / LOG_NAME).symlink_to(target)
    _, message = describe_error(raised(RuntimeError("boom")), StoreInternalErrorLog(tmp_path))
    assert "its traceback could not be saved" in message
    assert target.read_text(encoding="utf-8") == "keep\n"
