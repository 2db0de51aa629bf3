"""Slash commands of the line mode."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from repl_harness import Harness, open_harness, user_event
from rich.cells import cell_len
from sessionref.service.candidates import Candidate
from sessionref_tui.repl.app import HISTORY_FILE_NAME, open_history
from sessionref_tui.repl.commands import candidate_row, help_lines, log_lines, log_rows
from unreadable_lines import break_log

DAY_MS = 86_400_000


async def send_first_message(harness: Harness) -> None:
    """Send one message so the draft session exists on disk, and wait for its turn to end."""
    harness.type("hi\r")
    await harness.until(lambda: any(e["type"] == "turn/end" for e in harness.events()))


async def test_title_renames_the_current_session_and_updates_the_toolbar(harness: Harness) -> None:
    await send_first_message(harness)
    harness.type("/title Parser review\r")
    await harness.until(lambda: harness.store.title(harness.mode.agent.id) == "Parser review")
    await harness.until(lambda: harness.printed("title: Parser review"))
    toolbar = "".join(text for _style, text in harness.mode._toolbar())
    assert "Parser review" in toolbar and "/home/ana/work" in toolbar and "gated test model" in toolbar
    assert "idle" in toolbar


async def test_sessions_lists_candidates_ranked_like_completion(harness: Harness) -> None:
    harness.type("/sessions ab\r")
    await harness.until(lambda: harness.printed("Abacus"))
    rows = [line for line in harness.mode.transcript.lines if "ABNF" in line or "Abacus" in line]
    assert rows[0].startswith("ABNF parser notes") and rows[1].startswith("Abacus")
    assert "●" in rows[0] and "●" not in rows[1]


async def test_switch_by_title_then_new(harness: Harness) -> None:
    first = harness.mode.agent.id
    harness.type("/switch abacus\r")
    await harness.until(lambda: harness.mode.agent.id == "abacus-id")
    await harness.until(lambda: harness.printed("you › counting beads"))  # recent messages replayed
    harness.type("/switch abnf-notes\r")
    await harness.until(lambda: harness.mode.agent.id == "abnf-notes")
    harness.type("/new\r")
    await harness.until(lambda: harness.mode.agent.id not in ("abnf-notes", first))
    assert harness.mode.agent.cwd == "/home/ana/work"


async def test_switch_to_an_unknown_session_is_an_error(harness: Harness) -> None:
    harness.type("/switch nothing-like-this\r")
    await harness.until(lambda: harness.printed("REPL_NO_SUCH_SESSION"))


async def test_log_lists_seq_type_source_and_preview(harness: Harness) -> None:
    harness.type("hi\r")
    await harness.until(lambda: any(e["type"] == "turn/end" for e in harness.events()))
    harness.type("/log\r")
    await harness.until(lambda: harness.printed("turn/end"))
    rows = [line for line in harness.mode.transcript.lines if "user/message" in line]
    assert rows and rows[-1].split()[:4] == ["2", "user/message", "user", "hi"]


async def test_compact_writes_a_checkpoint(harness: Harness) -> None:
    harness.type("hi\r")
    await harness.until(lambda: any(e["type"] == "turn/end" for e in harness.events()))
    harness.type("/compact\r")
    await harness.until(lambda: harness.printed("compacted:"))
    checkpoint = harness.events()[-1]
    assert checkpoint["data"]["source"]["plugin"] == "compact"
    assert harness.printed("⟲ compacted › summary of everything so far")


async def test_compact_with_nothing_to_compact_reports_the_code(harness: Harness) -> None:
    harness.store.create_session(cwd="/elsewhere", session_id="empty-one")  # e.g. written by another program
    harness.type("/switch empty-one\r")
    await harness.until(lambda: harness.mode.agent.id == "empty-one")
    harness.type("/compact\r")
    await harness.until(lambda: harness.printed("AGENT_NOTHING_TO_COMPACT"))


async def test_title_compact_and_log_on_a_new_session_say_it_does_not_exist_yet(harness: Harness) -> None:
    before = await harness.session_ids()
    harness.type("/title Too early\r")
    await harness.until(lambda: harness.printed("REPL_NO_SESSION_YET"))
    harness.type("/compact\r")
    await harness.until(lambda: harness.count("REPL_NO_SESSION_YET") == 2)
    harness.type("/log\r")
    await harness.until(lambda: harness.printed("no log yet"))
    assert await harness.session_ids() == before


async def test_help_and_unknown_commands(harness: Harness) -> None:
    harness.type("/help\r")
    await harness.until(lambda: harness.printed("/switch <id or title>"))
    harness.type("/frobnicate\r")
    await harness.until(lambda: harness.printed("REPL_UNKNOWN_COMMAND"))


async def test_mentions_inside_slash_commands_are_not_parsed(harness: Harness) -> None:
    await send_first_message(harness)
    harness.type("/title about @[bad](dsh-session:IiJ)\r")
    await harness.until(lambda: harness.printed("title: about"))
    assert harness.store.title(harness.mode.agent.id) == "about @[bad](dsh-session:IiJ)"


def test_log_rows_fold_chunk_runs_into_one_row() -> None:
    def chunk(seq: int, text: str) -> dict:
        delta = {"type": "text-delta", "text": text}
        return {"type": "assistant/chunk", "seq": seq, "data": {"chunk": delta}}

    events = [
        {"type": "step/start", "seq": 0, "data": {"turn": 1, "step": 1}},
        chunk(1, "Hel"),
        chunk(2, "lo "),
        chunk(3, "you"),
        {"type": "step/end", "seq": 4, "data": {"turn": 1, "step": 1}},
    ]
    assert log_rows(events) == [
        ("0", "step/start", "", "turn 1 step 1"),
        ("1–3", "assistant/chunk ×3", "", "Hello you"),
        ("4", "step/end", "", "turn 1 step 1"),
    ]


def test_history_lives_in_a_writable_store_root(tmp_path: Path) -> None:
    history = open_history(tmp_path)
    history.store_string("first draft")
    history.store_string("two\nlines")
    assert (tmp_path / HISTORY_FILE_NAME).read_text(encoding="utf-8").strip().endswith("+two\n+lines")
    assert list(open_history(tmp_path).load_history_strings()) == ["two\nlines", "first draft"]


@pytest.mark.parametrize("target_exists", [True, False], ids=["existing", "dangling"])
def test_a_history_link_is_never_written_through(tmp_path: Path, target_exists: bool) -> None:
    outside = tmp_path / "outside.txt"
    if target_exists:
        outside.write_text("+secret\n", encoding="utf-8")
    root = tmp_path / "store"
    root.mkdir()
    (root / HISTORY_FILE_NAME).symlink_to(outside)
    history = open_history(root)
    assert list(history.load_history_strings()) == []
    history.store_string("typed words")
    assert (outside.read_text(encoding="utf-8") if target_exists else None) == (
        "+secret\n" if target_exists else None
    )
    assert outside.exists() is target_exists


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_history_falls_back_to_memory_for_a_read_only_store(tmp_path: Path) -> None:
    tmp_path.chmod(0o555)
    try:
        assert isinstance(open_history(tmp_path), InMemoryHistory)
    finally:
        tmp_path.chmod(0o755)


async def test_sessions_in_an_empty_store_says_there_are_none_yet(empty_harness: Harness) -> None:
    empty_harness.type("/sessions\r")
    await empty_harness.until(lambda: empty_harness.printed("no other sessions yet"))
    empty_harness.type("/sessions zz\r")
    await empty_harness.until(lambda: empty_harness.printed("no session matches “zz”"))


def test_sessions_rows_age_by_last_activity() -> None:
    old_but_active = Candidate("s-1", "Parser notes", "/home/a", 0, True, updated_at=2 * DAY_MS)
    row = candidate_row(old_but_active, 3 * DAY_MS)
    assert row.split()[3:5] == ["1d", "●"]


def test_sessions_rows_fit_the_terminal_and_stay_aligned() -> None:
    wide = Candidate("s-2", "漢字の題名", "/very/long/path/" + "deep/" * 20 + "project", 0, False)
    narrow = Candidate("s-1", "Notes", "/home/a", 0, True)
    for columns in (60, 100, 200):
        rows = [candidate_row(candidate, DAY_MS, columns) for candidate in (wide, narrow)]
        assert all(cell_len(row) < columns for row in rows)
        ids = [row.index("s-2") for row in rows[:1]] + [rows[1].index("s-1")]
        assert cell_len(rows[0][: ids[0]]) == cell_len(rows[1][: ids[1]])  # wide labels padded by cells
    assert rows[0].endswith("/project")  # the cwd gets the spare width, cut in the middle


def test_log_lines_fit_the_terminal_and_cut_the_preview_not_the_words_elsewhere() -> None:
    long_text = "a message long enough to need cutting at a narrow terminal width " * 3
    events = [
        {"type": "turn/start", "seq": 0, "data": {"turn": 1}},
        {
            "type": "user/message",
            "seq": 1,
            "data": {"source": {"kind": "user"}, "content": [{"type": "text", "text": long_text}]},
        },
    ]
    for columns in (50, 80, 260):
        rows = log_rows(events)
        lines = ["".join(text for _style, text in line) for line in log_lines(rows, columns)]
        assert all(cell_len(line) < columns for line in lines)
        assert lines[1].split()[:3] == ["1", "user/message", "user"]
        assert lines[1].index("user/message") == lines[0].index("turn/start")  # aligned columns
    assert lines[1].endswith(long_text.strip())  # a wide terminal shows it whole
    narrow = "".join(text for _style, text in log_lines(log_rows(events), 50)[1])
    assert narrow.endswith("…")


async def test_log_follows_the_terminal_width(harness: Harness) -> None:
    harness.type("hi there, this is a message that is longer than the terminal is wide for sure\r")
    await harness.until(lambda: any(e["type"] == "turn/end" for e in harness.events()))
    harness.type("/log\r")
    await harness.until(lambda: harness.printed("turn/end"))
    columns = harness.mode.session.app.output.get_size().columns
    log = harness.mode.transcript.lines[harness.mode.transcript.lines.index("› /log") + 1 :]
    assert log and all(cell_len(line) < columns for line in log)


async def test_switch_accepts_a_unique_id_prefix(harness: Harness) -> None:
    harness.type("/switch abnf-n\r")
    await harness.until(lambda: harness.mode.agent.id == "abnf-notes")
    assert harness.printed("── ABNF parser notes · abnf-notes · /home/ana/work ──")


def test_help_fits_the_terminal_and_keeps_descriptions_aligned() -> None:
    rows = help_lines(60)
    assert all(cell_len(row) < 60 for row in rows)
    new = rows.index(next(row for row in rows if row.startswith("/new")))
    assert rows[new + 1].startswith(" " * 25) and not rows[new + 1][25].isspace()  # wrapped under its text
    assert " ".join(" ".join(rows).split()).count("created by its first message") == 1  # no word was cut


async def test_the_session_shown_and_log_say_how_many_lines_were_skipped(tmp_path: Path) -> None:
    with create_pipe_input() as pipe:
        harness = await open_harness(tmp_path / "store", pipe, session_id="abnf-notes")
        broken = break_log(harness.store, "abnf-notes", 1, user_event("after the crash", "m-after"))
        notice = f"1 unreadable line in this log was skipped (line {broken[0]})"
        harness.start()
        try:
            await harness.until(lambda: harness.printed("you › after the crash"))
            assert harness.count(notice) == 1
            harness.type("/log\r")
            await harness.until(lambda: harness.count(notice) == 2)
            assert harness.mode.transcript.lines[-1] == notice  # under the rows it did list
        finally:
            await harness.stop()
            await harness.workspace.close()


@pytest.mark.parametrize("target_exists", [True, False], ids=["existing", "dangling"])
def test_a_repl_log_link_is_never_written_through(tmp_path: Path, target_exists: bool) -> None:
    import logging

    from sessionref_tui.cli.app_commands import REPL_LOG_NAME, _route_diagnostics

    outside = tmp_path / "outside.log"
    if target_exists:
        outside.write_text("theirs\n", encoding="utf-8")
    root = tmp_path / "store"
    root.mkdir()
    (root / REPL_LOG_NAME).symlink_to(outside)
    handler = _route_diagnostics(root)
    try:
        logging.getLogger("sessionref.test").error("a diagnostic line")
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    assert isinstance(handler, logging.NullHandler)
    assert (outside.read_text(encoding="utf-8") if outside.exists() else None) == (
        "theirs\n" if target_exists else None
    )


def test_the_repl_log_is_written_in_a_writable_store(tmp_path: Path) -> None:
    import logging

    from sessionref_tui.cli.app_commands import REPL_LOG_NAME, _route_diagnostics

    handler = _route_diagnostics(tmp_path)
    try:
        logging.getLogger("sessionref.test").error("a diagnostic line")
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
        if isinstance(handler, logging.StreamHandler):
            handler.stream.close()
    assert "a diagnostic line" in (tmp_path / REPL_LOG_NAME).read_text(encoding="utf-8")
