"""Copyable ids in `sessions`, and unique id prefixes in show, mention, prepare --session, repl --session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_store import HERE, LONG_ID, TWIN_A, TWIN_B, build_id_store
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from sessionref.contract.uri import parse_session_reference_text
from sessionref.store import open_store
from sessionref_tui.cli import EXIT_FAILED, EXIT_OK, main


@pytest.fixture
def id_store(tmp_path: Path) -> Path:
    return build_id_store(tmp_path / "ids")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_sessions_prints_every_id_whole_at_the_start_of_its_row(id_store: Path, capsys) -> None:
    code, out, _ = run(capsys, "sessions", "--store", str(id_store), "--cwd", HERE)
    assert code == EXIT_OK
    header, *rows = out.splitlines()
    assert header.startswith("ID ")
    ids = {row.split("  ", 1)[0] for row in rows}
    assert ids == {LONG_ID, TWIN_A, TWIN_B, "abc", "abcd"}
    # Each id is a whitespace-delimited word (double-click copies it) and the columns line up.
    assert all(row.split()[0] in ids for row in rows)
    title_at = header.index("TITLE")
    assert all(row[title_at - 2 : title_at] == "  " and row[title_at] != " " for row in rows)
    assert "…" not in "".join(row.split()[0] for row in rows)
    assert "A title long enough that the title …" in out  # titles are still cut to their column


@pytest.mark.parametrize(("typed", "expected"), [("0b6f", LONG_ID), ("7a00ffee-2", TWIN_B), ("abc", "abc")])
def test_show_accepts_a_unique_prefix_and_an_exact_id_wins(
    id_store: Path, capsys, typed: str, expected: str
) -> None:
    code, out, _ = run(capsys, "show", typed, "--store", str(id_store), "--json")
    assert code == EXIT_OK
    assert json.loads(out)["sessionId"] == expected


def test_mention_resolves_a_prefix_into_the_full_id(id_store: Path, capsys) -> None:
    code, out, _ = run(capsys, "mention", "7a00ffee-1", "--store", str(id_store))
    assert code == EXIT_OK
    assert parse_session_reference_text(out.strip()).references[0].session_id == TWIN_A


def test_prepare_session_accepts_a_prefix(id_store: Path, capsys) -> None:
    code, out, _ = run(capsys, "prepare", "hello", "--session", "0b6", "--store", str(id_store), "--json")
    assert code == EXIT_OK
    assert json.loads(out)["content"] == [{"type": "text", "text": "hello"}]


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "7a00"],
        ["mention", "7a00"],
        ["prepare", "hi", "--session", "7a00"],
    ],
)
def test_an_ambiguous_prefix_is_a_coded_error_listing_the_matches(
    id_store: Path, capsys, argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv, "--store", str(id_store), "--json")
    assert code == EXIT_FAILED
    error = json.loads(out)["error"]
    assert error["code"] == "SESSION_ID_AMBIGUOUS"
    assert TWIN_A in error["message"] and TWIN_B in error["message"]
    assert "SESSION_ID_AMBIGUOUS" in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [["show", "zz"], ["mention", "zz"], ["prepare", "hi", "--session", "zz"]])
def test_a_prefix_matching_nothing_is_not_found(id_store: Path, capsys, argv: list[str]) -> None:
    code, out, _ = run(capsys, *argv, "--store", str(id_store), "--json")
    assert code == EXIT_FAILED
    assert json.loads(out)["error"]["code"] == "STORE_SESSION_NOT_FOUND"


def test_repl_continues_the_session_a_prefix_names(id_store: Path, capsys) -> None:
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("/title Renamed from the line mode\r\x04")
        code = main(["repl", "--store", str(id_store), "--session", "7a00ffee-2"])
    assert code == EXIT_OK
    store = open_store(id_store)
    try:
        assert store.title(TWIN_B) == "Renamed from the line mode"
        assert store.title(TWIN_A) != "Renamed from the line mode"
    finally:
        store.close()


def test_repl_with_an_ambiguous_prefix_fails_before_prompting(id_store: Path, capsys) -> None:
    code, _out, err = run(capsys, "repl", "--store", str(id_store), "--session", "7a00")
    assert code == EXIT_FAILED
    assert "SESSION_ID_AMBIGUOUS" in err
