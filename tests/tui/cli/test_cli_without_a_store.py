"""Other agents' histories read before sessionref has a store of its own (issue 21): the read-only
commands read them through a stand-in store in the cache directory and never create the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sessionref_tui.cli import EXIT_FAILED, EXIT_OK, main
from sessionref_tui.cli.store_access import STAND_IN_FOLDER
from test_cli_foreign import CHECKOUT, homes  # noqa: F401  (the fixture)


@pytest.fixture
def no_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default store, not created yet; the cache directory under tmp_path."""
    monkeypatch.setenv("SESSIONREF_HOME", str(tmp_path / "no-store-yet"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "no-store-yet"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.usefixtures("homes")
def test_sessions_search_show_and_snapshot_read_histories_without_a_store(
    no_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "sessions", "--json")
    assert (code, err) == (EXIT_OK, "")
    assert CHECKOUT in {row["sessionId"] for row in json.loads(out)}
    code, out, _ = run(capsys, "show", CHECKOUT, "--json")
    assert code == EXIT_OK and json.loads(out)
    code, out, _ = run(capsys, "snapshot", CHECKOUT, "--json")
    assert code == EXIT_OK and json.loads(out)["sessionId"] == CHECKOUT
    code, out, err = run(capsys, "search", "checkout", "--json")
    assert code == EXIT_OK, err
    code, out, _ = run(capsys, "sources", "--json")
    rows = {row["kind"]: row for row in json.loads(out)}
    assert rows["claude-code"]["sessions"] == 4
    assert not no_store.exists(), "a read-only command must never create the store"
    assert (tmp_path / "cache" / "sessionref" / STAND_IN_FOLDER).is_dir()


def test_without_histories_a_missing_store_is_still_an_error(
    no_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSIONREF_SOURCES", "none")
    code, _out, err = run(capsys, "sessions")
    assert code == EXIT_FAILED and "CLI_STORE_NOT_FOUND" in err
    assert not no_store.exists()
    assert not (tmp_path / "cache" / "sessionref" / STAND_IN_FOLDER).exists()


@pytest.mark.usefixtures("homes")
def test_a_store_named_by_store_must_exist(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "sessions", "--store", str(tmp_path / "absent"))
    assert code == EXIT_FAILED and "CLI_STORE_NOT_FOUND" in err
