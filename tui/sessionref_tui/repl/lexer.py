"""Highlighting for the line-mode prompt: mention tokens and slash commands.

The prompt shows the raw `@[label](dsh-session:…)` token (prompt_toolkit has no
inline widgets), so the lexer styles each valid mention (and bare canonical URI)
as one `class:mention` run, and a malformed one as `class:mention.invalid`, so a
mangled token is visible before submit rejects it. Fragment texts are the buffer
text itself: prompt_toolkit renders control characters in caret notation, so
nothing typed or pasted can drive the terminal.
"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.lexers import Lexer
from sessionref.contract.uri import find_mention_spans


def styled_runs(text: str) -> list[tuple[str, int, int]]:
    """`(style, start, end)` runs covering `text`: mentions, invalid mentions, a leading /command, plain."""
    runs: list[tuple[str, int, int]] = []
    position = 0
    if text.startswith("/"):
        end = next((index for index, char in enumerate(text) if char.isspace()), len(text))
        runs.append(("class:slash-command", 0, end))
        position = end
    for span in find_mention_spans(text):
        if span.start < position:
            continue
        if span.start > position:
            runs.append(("", position, span.start))
        runs.append(("class:mention" if span.valid else "class:mention.invalid", span.start, span.end))
        position = span.end
    if position < len(text):
        runs.append(("", position, len(text)))
    return runs


class MentionLexer(Lexer):
    """Styles mention tokens and a leading slash command in the prompt buffer."""

    def lex_document(self, document: Document) -> Callable[[int], StyleAndTextTuples]:
        """Return the per-line fragment function prompt_toolkit asks for."""
        text = document.text
        lines: list[StyleAndTextTuples] = [[]]
        for style, start, end in styled_runs(text):
            for index, piece in enumerate(text[start:end].split("\n")):
                if index:
                    lines.append([])
                if piece:
                    lines[-1].append((style, piece))

        def line_fragments(lineno: int) -> StyleAndTextTuples:
            return lines[lineno] if lineno < len(lines) else []

        return line_fragments
