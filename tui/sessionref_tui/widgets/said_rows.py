"""How one row of the picker's "said in conversation" group is laid out: source mark, label, who
said it, the snippet with its match, and the age — fitted to a width.

Pure Rich styles, no widgets (the group's list draws these rows; tests check them directly). Every
field comes from data and is made inert before it is styled (`snippets.snippet_pieces`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from sessionref_tui.display import relative_age, truncate_middle
from sessionref_tui.snippets import SnippetPiece, fit_snippet, role_label, snippet_pieces
from sessionref_tui.source_marks import MARK_CELLS, source_color, source_mark
from sessionref_tui.widgets.candidate_rows import MATCH_STYLE, Piece, mark_pieces, pieces_text, shown_inert

LABEL_SHARE: Final = 0.3
"""At most this share of a row goes to the session's label: the snippet is what this group is for."""

MIN_LABEL_CELLS: Final = 8
"""A label gets at least this many cells, so that rows stay tellable apart in a narrow picker."""

_DIM: Final = Style(dim=True)
_ROLE: Final = Style(dim=True, italic=True)


class MatchLike(Protocol):
    """What the group reads from a match (`sessionref.service.conversations.ConversationMatch` fits)."""

    @property
    def session_id(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def checkpoint(self) -> bool: ...
    @property
    def snippet(self) -> str: ...
    @property
    def spans(self) -> tuple[tuple[int, int], ...]: ...
    @property
    def last_activity(self) -> int: ...


@dataclass(frozen=True, slots=True)
class SaidRowFields:
    """The texts of one row, already inert: computed once per match per result set."""

    label: str
    role: str
    snippet: tuple[SnippetPiece, ...]
    age: str
    mark: str = ""
    mark_color: str | None = None

    @classmethod
    def of(cls, match: MatchLike, now_ms: float) -> SaidRowFields:
        """The fields of `match` as they are shown at `now_ms`."""
        return cls(
            label=shown_inert(match.label),
            role=role_label(match.role, match.checkpoint),
            snippet=tuple(snippet_pieces(match.snippet, match.spans)),
            age=relative_age(match.last_activity, now_ms),
            mark=source_mark(match.session_id),
            mark_color=source_color(match.session_id),
        )


def label_cells(rows: Sequence[SaidRowFields], width: int) -> int:
    """The label column's width for `rows` in a list `width` cells wide (the same for every row)."""
    natural = max((cell_len(row.label) for row in rows), default=0)
    return min(natural, max(MIN_LABEL_CELLS, int(width * LABEL_SHARE)))


def mark_cells(rows: Sequence[SaidRowFields]) -> int:
    """The source mark column's width: `MARK_CELLS` when a row comes from another agent, else 0.

    As in the title group, the column is there for every row or for none, so labels line up.
    """
    return MARK_CELLS if any(row.mark for row in rows) else 0


def said_row_pieces(
    fields: SaidRowFields, width: int, label_width: int, mark_width: int = 0
) -> tuple[list[Piece], int]:
    """The styled pieces of one row and their cells (`width`, or more only when `width` is tiny).

    The source mark when the list has a mark column (`mark_width`), the label (shortened in the
    middle, padded to `label_width`), who said it (`you ›`), the snippet with its match emphasised
    (cut so the match shows), and the age at the right edge.
    """
    pieces: list[Piece] = []
    used = 0
    if mark_width:
        pieces += mark_pieces(fields.mark, fields.mark_color, mark_width)
        used = mark_width + 1
    label = truncate_middle(fields.label, label_width)
    pieces += [(label, None), (" " * max(0, label_width - cell_len(label)) + "  ", None)]
    role = f"{fields.role} › "
    pieces.append((role, _ROLE))
    used += max(label_width, cell_len(label)) + 2 + cell_len(role)
    age_cells = cell_len(fields.age)
    room = max(0, width - used - 1 - age_cells)
    snippet = fit_snippet(list(fields.snippet), room)
    for text, matched in snippet:
        pieces.append((text, MATCH_STYLE if matched else None))
    used += sum(cell_len(text) for text, _ in snippet)
    gap = max(1, width - used - age_cells)
    pieces.append((" " * gap, None))
    pieces.append((fields.age, _DIM))
    return pieces, used + gap + age_cells


def render_said_row(match: MatchLike, width: int, now_ms: float) -> Text:
    """`match`'s row fitted to `width` cells, as Rich text (for tests and one-off rendering)."""
    fields = SaidRowFields.of(match, now_ms)
    pieces, _cells = said_row_pieces(fields, width, label_cells([fields], width), mark_cells([fields]))
    return pieces_text(pieces, width)
