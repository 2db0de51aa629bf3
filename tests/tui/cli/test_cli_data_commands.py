"""`sessionref sessions | show | mention` through the real entry point, text and JSON, exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_store import HERE, HOSTILE_ID, user_message
from sessionref.contract.uri import parse_session_reference_text
from sessionref.store import open_store
from sessionref_tui.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, main, progress_printer
from unreadable_lines import break_log


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_sessions_json_ranks_the_cwd_first_then_cwdless_then_others(store_root: Path, capsys) -> None:
    code, out, _err = run(capsys, "sessions", "--store", str(store_root), "--cwd", HERE, "--json")
    assert code == EXIT_OK
    rows = json.loads(out)
    assert [row["sessionId"] for row in rows] == ["alpha", HOSTILE_ID, "beta"]
    assert rows[0]["label"] == "ABNF parser notes"
    assert rows[0]["sameWorkspace"] is True and rows[2]["sameWorkspace"] is False
    assert parse_session_reference_text(rows[0]["mention"]).references[0].session_id == "alpha"
    # Written to after it was created: the last activity is the later one, the creation stays the contract's.
    assert rows[0]["createdAt"] == 1_700_000_000_000 and rows[0]["lastActivity"] > rows[0]["createdAt"]


def test_sessions_query_and_limit_filter_like_completion(store_root: Path, capsys) -> None:
    code, out, _ = run(capsys, "sessions", "abnf", "--store", str(store_root), "--json")
    assert code == EXIT_OK
    assert [row["sessionId"] for row in json.loads(out)] == ["alpha"]
    code, out, _ = run(
        capsys, "sessions", "--store", str(store_root), "--limit", "1", "--cwd", "/srv/other", "--json"
    )
    assert [row["sessionId"] for row in json.loads(out)] == ["beta"]


def test_sessions_table_is_inert(store_root: Path, capsys) -> None:
    code, out, _ = run(capsys, "sessions", "--store", str(store_root), "--cwd", HERE)
    assert code == EXIT_OK
    assert "ABNF parser notes" in out
    assert "\x1b" not in out
    assert "hostile\\x1b[31m" in out
    assert "(no cwd)" in out


@pytest.mark.parametrize("fresh", [False, True])
def test_sessions_offers_close_title_matches_after_the_exact_ones(
    store_root: Path, capsys, fresh: bool
) -> None:
    store = open_store(store_root)
    try:
        store.create_session(cwd=HERE, session_id="pg-plan", created_at=1_700_000_000_000)
        store.rename("pg-plan", "Postgres 16 upgrade plan")
        store.create_session(cwd=HERE, session_id="postgrse-notes", created_at=1_700_000_000_001)
    finally:
        store.close()
    run(capsys, "sessions", "--store", str(store_root), "--fresh")  # the discovery index caught up
    flags = ["--fresh"] if fresh else []
    _code, out, _err = run(capsys, "sessions", "postgrse", "--store", str(store_root), "--json", *flags)
    # the exact match (an id holding the query) first, then the title one letter swap away
    assert [row["sessionId"] for row in json.loads(out)] == ["postgrse-notes", "pg-plan"]


def test_sessions_with_no_match_prints_nothing_on_stdout(store_root: Path, capsys) -> None:
    code, out, err = run(capsys, "sessions", "zzz-nothing", "--store", str(store_root))
    assert (code, out) == (EXIT_OK, "")
    assert "no matching sessions" in err


def test_show_prints_the_projected_conversation(store_root: Path, capsys) -> None:
    code, out, _ = run(capsys, "show", "alpha", "--store", str(store_root))
    assert code == EXIT_OK
    assert out.startswith("# ABNF parser notes\n")
    assert "you ›\nHow do I parse ABNF?" in out
    assert "assistant ›\nUse a grammar." in out


def test_show_json_has_the_conversation_and_capture_point(store_root: Path, capsys) -> None:
    code, out, _ = run(capsys, "show", "alpha", "--store", str(store_root), "--json")
    assert code == EXIT_OK
    shown = json.loads(out)
    assert shown["sessionId"] == "alpha" and shown["cwd"] == HERE
    assert shown["conversation"] == [
        {"role": "user", "text": "How do I parse ABNF?", "checkpoint": False},
        {"role": "assistant", "text": "Use a grammar.", "checkpoint": False},
    ]
    assert isinstance(shown["capturedThroughSeq"], int)


def test_show_makes_hostile_ids_and_text_inert(store_root: Path, capsys) -> None:
    code, out, _ = run(capsys, "show", HOSTILE_ID, "--store", str(store_root))
    assert code == EXIT_OK
    assert "\x1b" not in out and "\x07" not in out
    assert "evil \\x1b]0;pwned\\x07 text" in out
    code, out, _ = run(capsys, "show", HOSTILE_ID, "--store", str(store_root), "--json")
    assert "\x1b" not in out
    assert json.loads(out)["conversation"][0]["text"] == "evil \x1b]0;pwned\x07 text"


def test_mention_prints_the_canonical_token_with_the_title(store_root: Path, capsys) -> None:
    code, out, _ = run(capsys, "mention", "alpha", "--store", str(store_root))
    assert code == EXIT_OK
    parsed = parse_session_reference_text(out.strip())
    assert parsed.text == "@ABNF parser notes"
    assert parsed.references[0].session_id == "alpha"


def test_mention_keeps_the_raw_id_in_the_uri_but_an_inert_label(store_root: Path, capsys) -> None:
    code, out, _ = run(
        capsys, "mention", HOSTILE_ID, "--label", "x\x1b[2J", "--store", str(store_root), "--json"
    )
    assert code == EXIT_OK
    shown = json.loads(out)
    assert shown["label"] == "x\\x1b[2J"
    reference = parse_session_reference_text(shown["mention"]).references[0]
    assert reference.session_id == HOSTILE_ID


@pytest.mark.parametrize("command", ["show", "mention"])
def test_unknown_session_exits_1_with_code_on_stderr_and_json_error(
    store_root: Path, capsys, command: str
) -> None:
    code, out, err = run(capsys, command, "nope", "--store", str(store_root))
    assert code == EXIT_FAILED and out == ""
    assert "STORE_SESSION_NOT_FOUND" in err and "Traceback" not in err
    code, out, err = run(capsys, command, "nope", "--store", str(store_root), "--json")
    assert code == EXIT_FAILED
    assert json.loads(out)["error"]["code"] == "STORE_SESSION_NOT_FOUND"


def test_missing_store_directory_is_an_operation_error(tmp_path: Path, capsys) -> None:
    code, _out, err = run(capsys, "sessions", "--store", str(tmp_path / "absent"))
    assert code == EXIT_FAILED
    assert "CLI_STORE_NOT_FOUND" in err


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["frobnicate"],
        ["sessions", "--limit", "0"],
        ["sessions", "--limit", "many"],
        ["show"],
        ["prepare", "hello"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys) -> None:
    code, _out, err = run(capsys, *argv)
    assert code == EXIT_USAGE
    assert "usage:" in err


@pytest.mark.parametrize("command", ["chat", "repl", "sessions", "show", "mention", "prepare"])
def test_every_subcommand_but_demo_has_help_with_store(command: str, capsys) -> None:
    code, out, _ = run(capsys, command, "--help")
    assert code == EXIT_OK
    assert "--store" in out and "DSH" in out


def test_top_level_help_lists_every_subcommand(capsys) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == EXIT_OK
    for command in (
        "chat",
        "demo",
        "repl",
        "sessions",
        "search",
        "show",
        "mention",
        "prepare",
        "snapshot",
        "sources",
    ):
        assert f"sessionref {command}" in out


def test_default_store_comes_from_sessionref_home(store_root: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("SESSIONREF_HOME", str(store_root))
    code, out, _ = run(capsys, "sessions", "--json")
    assert code == EXIT_OK
    assert {row["sessionId"] for row in json.loads(out)} == {"alpha", "beta", HOSTILE_ID}


def test_progress_prints_on_stderr_only_for_large_first_time_indexing(capsys) -> None:
    quiet = progress_printer(threshold=500)
    quiet(10, 10)
    assert capsys.readouterr().err == ""
    loud = progress_printer(threshold=500)
    for done in (250, 250, 500, 1000):
        loud(done, 1000)
    err = capsys.readouterr().err
    assert err.count("indexing sessions") == 3  # the repeated percentage is not printed twice
    assert err.endswith("indexing sessions: 1000/1000 (100%)\n")


def test_show_names_the_unreadable_lines_it_left_out(store_root: Path, capsys) -> None:
    store = open_store(store_root)
    try:
        broken = break_log(store, "alpha", 2, user_message("after the crash", "u9"))
    finally:
        store.close()
    code, out, _ = run(capsys, "show", "alpha", "--store", str(store_root))
    assert code == EXIT_OK
    assert f"skipped: 2 unreadable lines (lines {broken[0]}, {broken[1]})" in out.splitlines()
    assert "after the crash" in out  # what follows the bad lines is shown
    code, out, _ = run(capsys, "show", "alpha", "--store", str(store_root), "--json")
    assert json.loads(out)["skippedLines"] == broken
    code, out, _ = run(capsys, "show", "beta", "--store", str(store_root))
    assert "skipped:" not in out
    code, out, _ = run(capsys, "show", "beta", "--store", str(store_root), "--json")
    assert json.loads(out)["skippedLines"] == []


# -- `sessions` straight from the index (issue 12) -------------------------------------------------


def _json_listing(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    assert main(["sessions", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_sessions_answers_from_a_recent_index_without_opening_the_store(
    store_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sessionref_tui.cli.data_commands as data_commands

    queries = [[], ["abnf"], ["ALPHA"], ["zzz"]]
    opened = [
        _json_listing(capsys, *query, "--store", str(store_root), "--cwd", HERE, "--fresh")
        for query in queries
    ]

    def no_open(*args: object, **kwargs: object) -> object:
        raise AssertionError("the store was opened")

    monkeypatch.setattr(data_commands, "open_cli_store", no_open)
    from_index = [
        _json_listing(capsys, *query, "--store", str(store_root), "--cwd", HERE) for query in queries
    ]
    assert from_index == opened
    assert [len(rows) for rows in opened] == [3, 1, 1, 0]


def test_sessions_opens_the_store_when_the_index_is_stale(
    store_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sessionref_tui.cli.data_commands as data_commands

    monkeypatch.setattr(data_commands, "INDEX_MAX_AGE_SECONDS", -1)  # every index is too old
    opened: list[object] = []
    real_open = data_commands.open_cli_store

    def counting_open(*args: Any, **kwargs: Any) -> Any:
        opened.append(args)
        return real_open(*args, **kwargs)

    monkeypatch.setattr(data_commands, "open_cli_store", counting_open)
    rows = _json_listing(capsys, "abnf", "--store", str(store_root))
    assert [row["sessionId"] for row in rows] == ["alpha"]
    assert len(opened) == 1
