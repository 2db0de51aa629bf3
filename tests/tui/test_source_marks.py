"""The source mark (CC, CX, GM) in every list that names sessions: picker, sidebar, switcher, line mode."""

from __future__ import annotations

from rich.cells import cell_len
from sessionref.service.candidates import Candidate
from sessionref_tui.display import NEW_SESSION_NAME
from sessionref_tui.palette import session_hit_display
from sessionref_tui.repl.commands import candidate_row
from sessionref_tui.repl.completer import candidate_meta_fragments
from sessionref_tui.source_marks import source_mark, source_of, untitled_name
from sessionref_tui.widgets.candidate_rows import RowFields, columns_for, layout_row
from sessionref_tui.widgets.sidebar import SidebarEntry, entry_prompt

NOW_MS = 1_800_000_000_000
CLAUDE = Candidate("claude-code:5f1c2a9e", "Cart discount bug", "/home/ana/shop", 0, True, NOW_MS)
CODEX = Candidate("codex:1b2c3d4e", "Endpoint triage", "/home/ana/api", 0, False, NOW_MS)
GEMINI = Candidate("gemini:9d8c", "Faster CI builds", None, 0, False, NOW_MS)
OWN = Candidate("f0157071", "Fix flaky retry test", "/home/ana/shop", 0, True, NOW_MS)


def test_marks_and_sources_come_from_the_id() -> None:
    assert [source_mark(c.session_id) for c in (CLAUDE, CODEX, GEMINI, OWN)] == ["CC", "CX", "GM", ""]
    assert [source_of(c.session_id) for c in (CLAUDE, CODEX, GEMINI, OWN)] == [
        "claude-code", "codex", "gemini", "store"
    ]  # fmt: skip
    assert source_mark("claude-code-fan:1") == "" and source_mark("claude-code:") == "CC"


def test_picker_rows_start_with_the_mark_and_stay_aligned() -> None:
    rows = [RowFields.of(candidate, NOW_MS) for candidate in (CLAUDE, OWN, CODEX)]
    columns = columns_for(rows)
    texts = [layout_row(row, "", 90, columns) for row in rows]
    assert [text.plain[:3] for text in texts] == ["CC ", "   ", "CX "]
    assert {text.plain.index(row.label) for text, row in zip(texts, rows, strict=True)} == {3}
    assert all(text.cell_len == 90 for text in texts)
    colored = [span for span in texts[0].spans if span.start == 0]
    assert colored and "#d97757" in str(colored[0].style)


def test_a_list_without_foreign_sessions_has_no_mark_column() -> None:
    row = RowFields.of(OWN, NOW_MS)
    assert layout_row(row, "", 80, columns_for([row])).plain.startswith("Fix flaky retry test")


def test_the_sidebar_shows_the_mark_before_the_title() -> None:
    entry = SidebarEntry.of_candidate(CODEX)
    prompt = entry_prompt(entry, now_ms=NOW_MS, show_cwd=True, current=False)
    assert prompt.plain.splitlines()[0] == "  CX Endpoint triage"
    current = entry_prompt(entry, now_ms=NOW_MS, show_cwd=True, current=True)
    assert current.plain.splitlines()[0] == "▸ CX Endpoint triage"
    own = entry_prompt(SidebarEntry.of_candidate(OWN), now_ms=NOW_MS, show_cwd=False, current=False)
    assert own.plain.splitlines()[0].strip() == "Fix flaky retry test"
    long = SidebarEntry("gemini:x", "A title long enough to be cut in the sidebar", None, NOW_MS)
    first = entry_prompt(long, now_ms=NOW_MS, show_cwd=False, current=False).plain.splitlines()[0]
    assert first.startswith("  GM ") and cell_len(first) <= 2 + 27 and first.endswith("…")


def test_the_switcher_shows_the_mark_before_the_title() -> None:
    shown = session_hit_display("Cart discount bug", "/w", "2d", "cart", same_folder=False,
                                session_id=CLAUDE.session_id)  # fmt: skip
    assert shown.plain == "CC Cart discount bug  ·  /w · 2d"
    own = session_hit_display("t", "/w", "2d", "", same_folder=False, session_id="x")
    assert own.plain == "t  ·  /w · 2d"


def test_the_line_mode_menu_and_sessions_list_show_the_mark() -> None:
    meta = "".join(text for _style, text in candidate_meta_fragments(GEMINI, "", NOW_MS))
    assert meta.startswith("GM · gemini:9d8c · (no cwd)")
    styles = [style for style, text in candidate_meta_fragments(GEMINI, "", NOW_MS) if text == "GM"]
    assert styles == ["class:candidate.source"]
    assert candidate_row(CODEX, NOW_MS, 100, marks=True).startswith("CX Endpoint triage")
    assert candidate_row(OWN, NOW_MS, 100, marks=True).startswith("   Fix flaky retry test")
    assert cell_len(candidate_row(OWN, NOW_MS, 100, marks=True)) < 100


def test_another_tools_untitled_session_is_never_called_new_session() -> None:
    untitled = SidebarEntry("codex:1b2c", None, None, NOW_MS)
    first = entry_prompt(untitled, now_ms=NOW_MS, show_cwd=False, current=False).plain.splitlines()[0]
    assert first.strip() == "CX Codex CLI session"
    assert untitled_name("claude-code:5f1c") == "Claude Code session"
    assert untitled_name("f0157071") == NEW_SESSION_NAME
