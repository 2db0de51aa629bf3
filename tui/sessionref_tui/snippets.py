"""Pure: how a conversation match's snippet is shown — inert pieces, the match flagged, fitted to a width.

A snippet (`ConversationMatch.snippet`) is one line of a message, raw data, with the matched words
at `spans` (offsets into the raw text). Every UI splits it at the spans first and makes each piece
inert on its own (escaping can change lengths, so spans are never applied to escaped text), then
fits the pieces to its room: when the first match would fall past the right edge, the start is
cut so the match is seen with a little of what came before it. Shared by the picker, the line
mode's menu and the CLI; nothing here imports a UI toolkit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from rich.cells import cell_len

from sessionref_tui.display import ELLIPSIS, inert

SnippetPiece = tuple[str, bool]
"""A run of inert snippet text and whether it is a match."""

LEAD_CELLS: Final = 12
"""Cells of text kept before the first match when the start of a snippet has to be cut to show it:
enough for a word or two of context, little enough for the match to fit a narrow row."""

MATCH_MARKS: Final = ("«", "»")
"""How plain text (the CLI without colour) marks a match: characters rare in what people type."""


def role_label(role: str, checkpoint: bool) -> str:
    """Who said the matched message: "you", "assistant", or "checkpoint" for a compaction summary."""
    if checkpoint:
        return "checkpoint"
    return "you" if role == "user" else "assistant"


def snippet_pieces(snippet: str, spans: Sequence[tuple[int, int]]) -> list[SnippetPiece]:
    """`snippet` split at `spans` into inert pieces, matches flagged. Spans are clipped to the text
    and to the span before them; what is left empty is dropped."""
    pieces: list[SnippetPiece] = []
    at = 0
    for start, end in sorted(spans):
        start, end = max(start, at), min(end, len(snippet))
        if end <= start:
            continue
        if start > at:
            pieces.append((inert(snippet[at:start]), False))
        pieces.append((inert(snippet[start:end]), True))
        at = end
    if at < len(snippet):
        pieces.append((inert(snippet[at:]), False))
    return [piece for piece in pieces if piece[0]]


def _cut_start(pieces: list[SnippetPiece], cells: int) -> list[SnippetPiece]:
    """`pieces` without their first `cells` cells (a wide character is never split)."""
    kept: list[SnippetPiece] = []
    for text, matched in pieces:
        if cells <= 0:
            kept.append((text, matched))
            continue
        index = 0
        while index < len(text) and cells > 0:
            cells -= cell_len(text[index])
            index += 1
        if index < len(text):
            kept.append((text[index:], matched))
    return kept


def _cut_end(pieces: list[SnippetPiece], cells: int) -> list[SnippetPiece]:
    """The first `cells` cells of `pieces`."""
    kept: list[SnippetPiece] = []
    for text, matched in pieces:
        if cells <= 0:
            break
        index, used = 0, 0
        while index < len(text) and used + cell_len(text[index]) <= cells:
            used += cell_len(text[index])
            index += 1
        if index:
            kept.append((text[:index], matched))
        cells -= used
        if index < len(text):
            break
    return kept


def fit_snippet(pieces: list[SnippetPiece], width: int, *, lead: int = LEAD_CELLS) -> list[SnippetPiece]:
    """`pieces` fitted into `width` cells, each cut end marked with `…`.

    When the first match would end past `width`, the start is cut so that `lead` cells come
    before it (fewer when even that does not fit); then the end is cut to the width.
    """
    if width <= 0:
        return []
    total = sum(cell_len(text) for text, _ in pieces)
    if total <= width:
        return pieces
    before = 0
    first_end = None
    for text, matched in pieces:
        if matched:
            first_end = before + cell_len(text)
            break
        before += cell_len(text)
    result = pieces
    if first_end is not None and first_end > width - 1:
        room_before = max(0, min(lead, width - 2 - (first_end - before)))
        result = [(ELLIPSIS, False), *_cut_start(pieces, before - room_before + 1)]
    if sum(cell_len(text) for text, _ in result) > width:
        result = [*_cut_end(result, width - 1), (ELLIPSIS, False)]
    return result


def marked_snippet(
    snippet: str, spans: Sequence[tuple[int, int]], marks: tuple[str, str] = MATCH_MARKS
) -> str:
    """The whole snippet as inert plain text with every match between `marks` (for the CLI)."""
    opening, closing = marks
    return "".join(
        f"{opening}{text}{closing}" if matched else text for text, matched in snippet_pieces(snippet, spans)
    )
