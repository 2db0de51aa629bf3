"""`sessionref search TEXT`: text and JSON output, ranking by folder, quiet states, inert data, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_store import ELSEWHERE, HERE, HOSTILE_ID, user_message
from sessionref.contract.uri import parse_session_reference_text
from sessionref.store import open_store
from sessionref.textsearch import TEXT_INDEX_FILE_NAME, TEXT_SEARCH_UNAVAILABLE, TextSearchError, index_file
from sessionref_tui.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, main, progress_printer


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def add_twins(root: Path) -> None:
    """The same sentence said in a session of HERE and one of ELSEWHERE (equal relevance)."""
    store = open_store(root)
    try:
        for session_id, cwd in (("twin-here", HERE), ("twin-there", ELSEWHERE)):
            store.create_session(cwd=cwd, session_id=session_id, created_at=1_700_000_000_000)
            store.append(session_id, [user_message("the zeppelin mooring budget", f"m-{session_id}")])
    finally:
        store.close()


def test_text_output_puts_each_id_first_then_the_marked_snippet(store_root: Path, capsys) -> None:
    code, out, err = run(capsys, "search", "parse", "--store", str(store_root))
    assert code == EXIT_OK and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "ACTIVE", "TITLE", "WHO", "SEQ"]
    assert lines[1].startswith("alpha ") and "ABNF parser notes" in lines[1]
    assert lines[1].split()[-2:] == ["you", "0"]
    assert lines[2] == "    How do I «parse» ABNF?"
    assert (store_root / TEXT_INDEX_FILE_NAME).exists()


def test_json_has_the_snippet_with_spans_and_a_usable_mention(store_root: Path, capsys) -> None:
    code, out, _err = run(capsys, "search", "abnf", "--store", str(store_root), "--json")
    assert code == EXIT_OK
    answer = json.loads(out)
    assert (answer["status"], answer["complete"], answer["pending"]) == ("ok", True, "")
    (match,) = answer["matches"]
    assert (match["sessionId"], match["label"], match["role"], match["seq"]) == (
        "alpha",
        "ABNF parser notes",
        "user",
        0,
    )
    text, spans = match["snippet"]["text"], match["snippet"]["spans"]
    assert [text[start:end] for start, end in spans] == ["ABNF"]
    assert parse_session_reference_text(match["mention"]).references[0].session_id == "alpha"


def test_hostile_text_is_inert_in_both_outputs(store_root: Path, capsys) -> None:
    code, out, _err = run(capsys, "search", "evil", "--store", str(store_root))
    assert code == EXIT_OK
    assert "\x1b" not in out and "\x07" not in out
    assert "«evil» \\x1b]0;pwned\\x07 text" in out
    assert out.splitlines()[1].startswith("hostile\\x1b[31m ")
    code, out, _err = run(capsys, "search", "evil", "--store", str(store_root), "--json")
    assert "\x1b" not in out and "\x07" not in out
    assert json.loads(out)["matches"][0]["sessionId"] == HOSTILE_ID


def test_cwd_ranks_its_sessions_first_among_equal_matches_and_limit_cuts(store_root: Path, capsys) -> None:
    add_twins(store_root)
    for cwd, first in ((HERE, "twin-here"), (ELSEWHERE, "twin-there")):
        _code, out, _err = run(
            capsys, "search", "zeppelin", "--store", str(store_root), "--cwd", cwd, "--json"
        )
        matches = json.loads(out)["matches"]
        assert matches[0]["sessionId"] == first and len(matches) == 2
        assert matches[0]["sameWorkspace"] is True and matches[1]["sameWorkspace"] is False
    _code, out, _err = run(capsys, "search", "zeppelin", "--store", str(store_root), "--limit", "1", "--json")
    assert len(json.loads(out)["matches"]) == 1


def test_words_match_in_any_order_and_quotes_keep_a_phrase(store_root: Path, capsys) -> None:
    add_twins(store_root)
    _code, out, _err = run(capsys, "search", "budget zeppelin", "--store", str(store_root), "--json")
    assert len(json.loads(out)["matches"]) == 2
    _code, out, _err = run(capsys, "search", '"budget zeppelin"', "--store", str(store_root), "--json")
    assert json.loads(out)["matches"] == []


def test_too_short_and_nothing_found_are_notes_not_failures(store_root: Path, capsys) -> None:
    code, out, err = run(capsys, "search", "ab", "--strict", "--store", str(store_root))
    assert (code, out) == (EXIT_OK, "")
    assert err.strip() == "sessionref: type 3 letters to search what was said"
    code, out, _err = run(capsys, "search", "ab", "--strict", "--store", str(store_root), "--json")
    assert json.loads(out)["status"] == "too_short"
    code, out, err = run(capsys, "search", "quasar", "--store", str(store_root))
    assert (code, out, err.strip()) == (EXIT_OK, "", "sessionref: nothing said matches")


def test_a_two_letter_word_is_searched_whole_unless_strict(store_root: Path, capsys) -> None:
    store = open_store(store_root)
    try:
        store.create_session(cwd=HERE, session_id="priority", created_at=1_700_000_000_000)
        store.append("priority", [user_message("this one is p1 for the release", "m-p1")])
    finally:
        store.close()
    _code, out, _err = run(capsys, "search", "p1", "--store", str(store_root), "--json")
    assert [match["sessionId"] for match in json.loads(out)["matches"]] == ["priority"]


def test_a_question_finds_other_forms_typos_and_joined_identifiers(store_root: Path, capsys) -> None:
    store = open_store(store_root)
    try:
        store.create_session(cwd=HERE, session_id="export-oom", created_at=1_700_000_000_000)
        store.append(
            "export-oom",
            [user_message("the nightly export crashes: bump the dependency, set maxRetries to 3", "m-oom")],
        )
    finally:
        store.close()
    for text in ("why did the exports crash?", "dependancy", "max_retries", "max retries"):
        _code, out, _err = run(capsys, "search", text, "--store", str(store_root), "--json")
        assert [match["sessionId"] for match in json.loads(out)["matches"]][:1] == ["export-oom"], text
        _code, out, _err = run(capsys, "search", text, "--strict", "--store", str(store_root), "--json")
        assert "export-oom" not in [match["sessionId"] for match in json.loads(out)["matches"]], text


def test_a_short_last_word_is_named_as_not_searched_when_strict(store_root: Path, capsys) -> None:
    code, _out, err = run(capsys, "search", "abnf pa", "--strict", "--store", str(store_root))
    assert code == EXIT_OK and '"pa" was not searched' in err


def test_failures_and_usage_errors_have_the_usual_exit_codes(
    store_root: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _out, err = run(capsys, "search", "x", "--store", str(tmp_path / "missing"))
    assert code == EXIT_FAILED and "CLI_STORE_NOT_FOUND" in err
    code, _out, _err = run(capsys, "search", "parse", "--store", str(store_root), "--limit", "0")
    assert code == EXIT_USAGE

    def no_fts5() -> None:
        raise TextSearchError(TEXT_SEARCH_UNAVAILABLE, "this Python's SQLite has no FTS5")

    monkeypatch.setattr(index_file, "ensure_fts5", no_fts5)
    code, out, err = run(capsys, "search", "parse", "--store", str(store_root), "--json")
    assert code == EXIT_FAILED and "TEXT_SEARCH_UNAVAILABLE" in err
    assert json.loads(out)["error"]["code"] == TEXT_SEARCH_UNAVAILABLE


def test_a_second_search_reads_no_log_again_and_sees_new_messages(store_root: Path, capsys) -> None:
    run(capsys, "search", "parse", "--store", str(store_root))
    store = open_store(store_root)
    try:
        store.append("beta", [user_message("parse the zone file", "u7")])
    finally:
        store.close()
    _code, out, _err = run(capsys, "search", "parse", "--store", str(store_root), "--json")
    assert {m["sessionId"] for m in json.loads(out)["matches"]} == {"alpha", "beta"}


def test_the_build_progress_names_what_is_indexed(capsys) -> None:
    progress = progress_printer(threshold=1, what="indexing what was said")
    progress(1, 2)
    progress(2, 2)
    assert capsys.readouterr().err.endswith("indexing what was said: 2/2 (100%)\n")


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "-retry"],
        ["search", "-retry", "--json"],
        ["search", "--limit", "5", "-retry"],
        ["search", "--limit=5", "-retry", "--json"],
    ],
)
def test_a_search_text_starting_with_a_dash_is_the_text_not_an_option(
    store_root: Path, capsys, argv: list[str]
) -> None:
    store = open_store(store_root)
    try:
        store.create_session(cwd=HERE, session_id="dashes", created_at=1_700_000_000_000)
        store.append("dashes", [user_message("use -retry when the fetch fails", "m-dash")])
    finally:
        store.close()
    code, out, err = run(capsys, *argv, "--store", str(store_root))
    assert code == EXIT_OK, err
    assert "dashes" in out


def test_an_unknown_option_with_a_text_is_still_a_usage_error(store_root: Path, capsys) -> None:
    code, _out, _err = run(capsys, "search", "retry", "--no-such-option", "--store", str(store_root))
    assert code == EXIT_USAGE
