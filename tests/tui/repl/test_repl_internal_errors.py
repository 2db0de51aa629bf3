"""A bug that reaches the line mode: one `INTERNAL_ERROR` line naming the log, the traceback in the store."""

from __future__ import annotations

import pytest
from repl_harness import Harness
from sessionref.host.internal_errors import LOG_FOLDER, LOG_NAME


def injected_bug(*_args: object, **_kwargs: object) -> object:
    raise ZeroDivisionError("injected bug")


async def test_a_bug_while_sending_is_shown_once_logged_and_the_draft_comes_back(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness.workspace.references, "prepare_text", injected_bug)
    harness.type("keep this draft\r")
    log = harness.store.root / LOG_FOLDER / LOG_NAME
    await harness.until(lambda: harness.printed("INTERNAL_ERROR"))
    await harness.until(lambda: harness.text == "keep this draft")
    (line,) = [line for line in harness.mode.transcript.lines if "INTERNAL_ERROR" in line]
    assert "unexpected ZeroDivisionError: injected bug — a bug in sessionref" in line
    assert line.endswith(f"the traceback is in {log}")
    traceback = log.read_text(encoding="utf-8")
    assert "Traceback (most recent call last):" in traceback and "in _submit" in traceback
    assert traceback.rstrip().endswith("ZeroDivisionError: injected bug")


async def test_a_bug_in_a_command_is_logged_the_same_way(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness.store, "search_candidates", injected_bug)
    monkeypatch.setattr(harness.workspace.references, "list_candidates", injected_bug)
    harness.type("/sessions ab\r")
    await harness.until(lambda: harness.printed("INTERNAL_ERROR"))
    assert (harness.store.root / LOG_FOLDER / LOG_NAME).read_text(encoding="utf-8").count("=== ") == 1
