"""How one `@` picker row is laid out: label, id, cwd and age fitted to a width.

Pure Rich text, no widgets: the picker's list draws these rows, and tests check
them directly. Every field comes from data and is made inert before it is put
in a `rich.text.Text` (never markup).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from sessionref_tui.display import inert, match_spans, relative_age, truncate_middle

SAME_WORKSPACE_MARK: Final = "●"
"""Shown before the cwd of a session that shares the current session's cwd."""

NO_CWD: Final = "(no cwd)"

MATCH_STYLE: Final = Style(bold=True, underline=True)
"""How the part of a field that matches the query is highlighted."""

_DIM: Final = Style(dim=True)
_BOLD: Final = Style(bold=True)


class CandidateLike(Protocol):
    """What the picker reads from a candidate (`sessionref.references.Candidate` fits)."""

    session_id: str
    label: str
    cwd: str | None
    created_at: int | float
    same_workspace: bool


def shown_inert(text: str) -> str:
    """`display.inert(text)`, answering at C speed for the usual text that needs no escaping.

    `str.isprintable()` is False for every character `inert` escapes (controls,
    bidi and other format characters, line/paragraph separators, surrogates), so
    printable text is returned as it is and anything else goes through `inert`.
    """
    return text if text.isprintable() else inert(text)


@dataclass(frozen=True, slots=True)
class RowFields:
    """The texts of one row, already inert: computed once per candidate per result set."""

    label: str
    session_id: str
    """Empty when the id equals the label (it is then not shown twice)."""
    cwd: str
    age: str
    same_workspace: bool

    @classmethod
    def of(cls, candidate: CandidateLike, now_ms: float) -> RowFields:
        """The fields of `candidate` as they are shown at `now_ms`."""
        return cls(
            label=shown_inert(candidate.label),
            session_id=shown_inert(candidate.session_id) if candidate.session_id != candidate.label else "",
            cwd=shown_inert(candidate.cwd) if candidate.cwd else NO_CWD,
            age=relative_age(candidate.created_at, now_ms),
            same_workspace=bool(candidate.same_workspace),
        )


@dataclass(frozen=True, slots=True)
class RowColumns:
    """Natural (widest) cell widths of each column over the listed candidates.

    Laying every row out from the same columns keeps the list aligned."""

    label: int
    session_id: int
    cwd: int
    age: int


def columns_for(rows: Sequence[RowFields]) -> RowColumns:
    """The shared column widths for `rows`."""
    return RowColumns(
        label=max((cell_len(row.label) for row in rows), default=0),
        session_id=max((cell_len(row.session_id) for row in rows), default=0),
        cwd=max((cell_len(row.cwd) for row in rows), default=0),
        age=max((cell_len(row.age) for row in rows), default=0),
    )


def _allocate(naturals: list[int], weights: list[int], total: int) -> list[int]:
    """Share `total` cells between fields: each gets at most its natural width,
    and cells a field does not need go to the others in proportion to `weights`."""
    widths = [0] * len(naturals)
    open_fields = [index for index, natural in enumerate(naturals) if natural > 0]
    remaining = max(0, total)
    while open_fields and remaining > 0:
        weight_sum = sum(weights[index] for index in open_fields)
        satisfied = False
        for index in list(open_fields):
            share = max(1, remaining * weights[index] // weight_sum)
            if naturals[index] - widths[index] <= share:
                remaining -= naturals[index] - widths[index]
                widths[index] = naturals[index]
                open_fields.remove(index)
                satisfied = True
        if not satisfied:
            for index in open_fields:
                widths[index] += remaining * weights[index] // weight_sum
            leftover = total - sum(widths)
            for index in open_fields[: max(0, leftover)]:
                widths[index] += 1
            break
    return widths


def _highlighted(text: str, query: str, base: Style | None = None) -> Text:
    """`text` as a Text with every occurrence of `query` styled as a match."""
    rendered = Text(text, style=base or "", end="", no_wrap=True)
    for start, end in match_spans(text, query):
        rendered.stylize(MATCH_STYLE, start, end)
    return rendered


def _fit(text: Text, width: int) -> Text:
    """`text` padded with spaces to exactly `width` cells."""
    text.pad_right(max(0, width - text.cell_len))
    return text


def layout_row(fields: RowFields, query: str, width: int, columns: RowColumns) -> Text:
    """One row of the picker from its fields, exactly fitted to `width` cells.

    Label first (the title), then the id only when the list has an id column,
    then the cwd (marked when it is the same workspace), and the relative age
    at the right edge. Long fields are shortened in the middle so rows stay
    distinguishable: titles like "Plan … draft 2" and "Plan … draft 3" keep the
    part that differs, and paths keep their folder name.
    """
    has_id_column = columns.session_id > 0
    mark = f"{SAME_WORKSPACE_MARK} " if fields.same_workspace else "  "
    room = width - len(mark) - columns.age - 2 - (2 if has_id_column else 0) - 1
    label_width, id_width, cwd_width = _allocate(
        [columns.label, columns.session_id, columns.cwd], [6, 1, 3], room
    )
    row = Text(end="", no_wrap=True)
    row.append_text(_fit(_highlighted(truncate_middle(fields.label, label_width), query), label_width))
    row.append("  ")
    if has_id_column:
        shown_id = _highlighted(truncate_middle(fields.session_id, id_width), query, _DIM)
        row.append_text(_fit(shown_id, id_width))
        row.append("  ")
    row.append(mark, style=_BOLD if fields.same_workspace else "")
    row.append_text(_highlighted(truncate_middle(fields.cwd, cwd_width), query, _DIM))
    row.append(" " * max(1, width - row.cell_len - cell_len(fields.age)))
    row.append(fields.age, style=_DIM)
    row.truncate(max(0, width))
    return row


def render_candidate_row(
    candidate: CandidateLike,
    query: str,
    width: int,
    now_ms: float,
    columns: RowColumns | None = None,
) -> Text:
    """`candidate`'s row fitted to `width` cells (see `layout_row`); `columns` aligns it with a list."""
    fields = RowFields.of(candidate, now_ms)
    return layout_row(fields, query, width, columns or columns_for([fields]))
