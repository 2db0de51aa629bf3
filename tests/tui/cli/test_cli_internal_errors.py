"""A bug that reaches the CLI: `INTERNAL_ERROR` with one line naming the log; a read-only command keeps
the traceback in the user's state folder, never in the store (issue 20)."""

from __future__ import annotations

import json
from pathlib import Path

import platformdirs
import pytest
import sessionref.contract.projection as projection
from sessionref.host.internal_errors import LOG_FOLDER, LOG_NAME
from sessionref_tui.cli import EXIT_FAILED, main


def injected_bug(*_args: object, **_kwargs: object) -> object:
    raise ZeroDivisionError("injected \x1b[31mbug")


def state_log() -> Path:
    return platformdirs.user_state_path("sessionref") / LOG_FOLDER / LOG_NAME


def test_a_bug_in_a_read_only_command_prints_one_line_and_logs_its_traceback_outside_the_store(
    store_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(projection, "project_session_conversation", injected_bug)
    before = sorted(path.name for path in store_root.iterdir())
    status = main(["show", "alpha", "--store", str(store_root)])
    err = capsys.readouterr().err
    log = state_log()
    assert sorted(path.name for path in store_root.iterdir()) == before  # nothing new in the store
    assert status == EXIT_FAILED
    assert err == (
        "sessionref: INTERNAL_ERROR: unexpected ZeroDivisionError: injected \\x1b[31mbug — a bug in "
        f"sessionref; the traceback is in {log}\n"
    )
    traceback = log.read_text(encoding="utf-8")
    assert "Traceback (most recent call last):" in traceback
    assert "in cmd_show" in traceback and "in injected_bug" in traceback
    assert traceback.rstrip().endswith("ZeroDivisionError: injected \\x1b[31mbug")  # inert in the file too


def test_the_json_error_names_the_log_too(
    store_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(projection, "project_session_conversation", injected_bug)
    assert main(["show", "alpha", "--store", str(store_root), "--json"]) == EXIT_FAILED
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "INTERNAL_ERROR"
    assert error["message"].endswith(str(state_log()))
    assert not (store_root / LOG_FOLDER).exists()


def test_a_coded_failure_writes_no_log(store_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "no-such-session", "--store", str(store_root)]) == EXIT_FAILED
    assert "INTERNAL_ERROR" not in capsys.readouterr().err
    assert not (store_root / LOG_FOLDER).exists()
