"""The prompt lexer: mentions, malformed mentions and slash commands get their own styles."""

from __future__ import annotations

from prompt_toolkit.document import Document
from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref_tui.repl.lexer import MentionLexer, styled_runs

TOKEN = format_session_reference_mention(SessionReference("abc", "A b"))


def test_a_canonical_token_is_one_mention_run() -> None:
    text = f"see {TOKEN} now"
    runs = styled_runs(text)
    assert runs == [("", 0, 4), ("class:mention", 4, 4 + len(TOKEN)), ("", 4 + len(TOKEN), len(text))]


def test_a_malformed_token_is_marked_invalid() -> None:
    runs = styled_runs("x @[bad](dsh-session:IiJ)")
    assert [style for style, _start, _end in runs] == ["", "class:mention.invalid"]


def test_a_leading_slash_command_is_styled_but_mentions_after_it_too() -> None:
    runs = styled_runs(f"/title {TOKEN}")
    assert runs[0] == ("class:slash-command", 0, 6)
    assert runs[-1][0] == "class:mention"


def test_lines_are_split_without_losing_text() -> None:
    text = f"first\n{TOKEN} second\nthird"
    lexed = MentionLexer().lex_document(Document(text))
    lines = ["".join(part for _style, part in lexed(index)) for index in range(3)]
    assert lines == text.split("\n")
    assert lexed(1)[0] == ("class:mention", TOKEN)
    assert lexed(7) == []
