"""How one `@` picker row is laid out: source mark, label, id, cwd and age fitted to a width.

Pure Rich text, no widgets: the picker's list draws these rows, and tests check
them directly. Every field comes from data and is made inert before it is put
in a `rich.text.Text` (never markup). A session from another agent's history
starts with its source mark (`CC`, `CX`, `GM`: `sessionref_tui.source_marks`);
when a list holds any, the others get blanks there so titles stay aligned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from sessionref_tui.display import close_spans, inert, match_spans, relative_age, truncate_middle
from sessionref_tui.source_marks import MARK_CELLS, source_color, source_mark

SAME_WORKSPACE_MARK: Final = "●"
"""Shown before the cwd of a session that shares the current session's cwd."""

NO_CWD: Final = "(no cwd)"

MATCH_STYLE: Final = Style(bold=True, underline=True)
"""How the part of a field that matches the query is highlighted."""

_DIM: Final = Style(dim=True)
_BOLD: Final = Style(bold=True)


class CandidateLike(Protocol):
    """What the picker reads from a candidate (`sessionref.service.references.Candidate` fits)."""

    @property
    def session_id(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def same_workspace(self) -> bool: ...

    @property
    def last_activity(self) -> int | float:
        """When the session was last active (epoch ms): what its age and recency mean."""
        ...


def shown_inert(text: str) -> str:
    """`display.inert(text)`, answering at C speed for the usual text that needs no escaping.

    `str.isprintable()` is False for every character `inert` escapes (controls,
    bidi and other format characters, line/paragraph separators, surrogates), so
    printable text is returned as it is and anything else goes through `inert`.
    """
    return text if text.isprintable() else inert(text)


def machine_place(machine: str | None, place: str) -> str:
    """`place` (a folder, already inert) as a list shows it: `machine:place` for a remote session."""
    return place if machine is None else f"{shown_inert(machine)}:{place}"


class RemoteSessions(Protocol):
    """What a list asks about sessions from the shared catalog (`MentionSource` fits)."""

    def machine_of(self, session_id: str) -> str | None:
        """The machine a listed remote session comes from (None: a local one)."""
        ...

    def catalog_note(self) -> str | None:
        """Why the last lookup lacks the catalog's sessions, in one line (None: it has them)."""
        ...


@dataclass(frozen=True, slots=True)
class RowFields:
    """The texts of one row, already inert: computed once per candidate per result set."""

    label: str
    session_id: str
    """Empty when the id equals the label (it is then not shown twice)."""
    cwd: str
    age: str
    same_workspace: bool
    mark: str = ""
    """The source mark (`CC`, `CX`, `GM`), "" for a session of the store itself."""
    mark_color: str | None = None
    close: bool = False
    """A close (not exact) match of the query: its label's highlight is what matched loosely."""

    @classmethod
    def of(cls, candidate: CandidateLike, now_ms: float, *, machine: str | None = None) -> RowFields:
        """The fields of `candidate` as they are shown at `now_ms`; a remote session's `machine`
        comes before its folder (`ann-laptop:/home/ann/app`)."""
        return cls(
            label=shown_inert(candidate.label),
            session_id=shown_inert(candidate.session_id) if candidate.session_id != candidate.label else "",
            cwd=machine_place(machine, shown_inert(candidate.cwd) if candidate.cwd else NO_CWD),
            age=relative_age(candidate.last_activity, now_ms),
            same_workspace=bool(candidate.same_workspace),
            mark=source_mark(candidate.session_id),
            mark_color=source_color(candidate.session_id),
            close=getattr(candidate, "close", None) is not None,
        )


@dataclass(frozen=True, slots=True)
class RowColumns:
    """Natural (widest) cell widths of each column over the listed candidates.

    Laying every row out from the same columns keeps the list aligned."""

    label: int
    session_id: int
    cwd: int
    age: int
    mark: int = 0
    """`MARK_CELLS` when some row has a source mark, else 0 (no mark column)."""


def columns_for(rows: Sequence[RowFields]) -> RowColumns:
    """The shared column widths for `rows`."""
    return RowColumns(
        label=max((cell_len(row.label) for row in rows), default=0),
        session_id=max((cell_len(row.session_id) for row in rows), default=0),
        cwd=max((cell_len(row.cwd) for row in rows), default=0),
        age=max((cell_len(row.age) for row in rows), default=0),
        mark=MARK_CELLS if any(row.mark for row in rows) else 0,
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


Piece = tuple[str, Style | None]
"""A run of row text and its style (None: the list's own style)."""


def mark_pieces(mark: str, color: str | None, width: int) -> list[Piece]:
    """The source mark column (`width` cells, `mark` possibly blank) and the space after it."""
    return [(mark.ljust(width), Style(bold=True, color=color) if mark else None), (" ", None)]


def pieces_text(pieces: Sequence[Piece], width: int) -> Text:
    """`pieces` as one line of Rich text, cut to `width` cells."""
    row = Text(end="", no_wrap=True)
    for text, style in pieces:
        row.append(text, style)
    row.truncate(max(0, width))
    return row


def query_spans(text: str, query: str) -> list[tuple[int, int]]:
    """`display.match_spans`, searching directly when both are ASCII (lower-casing then keeps every index)."""
    if not query:
        return []
    if not (text.isascii() and query.isascii()):
        return match_spans(text, query)
    lowered, needle = text.lower(), query.lower()
    spans: list[tuple[int, int]] = []
    position = lowered.find(needle)
    while position != -1:
        spans.append((position, position + len(needle)))
        position = lowered.find(needle, position + len(needle))
    return spans


def _matched(text: str, query: str, base: Style | None, *, close: bool = False) -> list[Piece]:
    """`text` split into pieces, every occurrence of `query` (or, `close`, what matched it
    loosely) styled as a match over `base`."""
    spans = close_spans(text, query) if close else query_spans(text, query)
    if not spans:
        return [(text, base)]
    match = base + MATCH_STYLE if base is not None else MATCH_STYLE
    pieces: list[Piece] = []
    at = 0
    for start, end in spans:
        if start > at:
            pieces.append((text[at:start], base))
        pieces.append((text[start:end], match))
        at = end
    if at < len(text):
        pieces.append((text[at:], base))
    return pieces


ID_MIN_CELLS: Final = 12
"""An id squeezed into fewer cells (`f01…050`) tells no session apart: the id column goes first."""

CWD_MIN_CELLS: Final = 12
"""A folder squeezed below this says nothing: the folder column goes next."""

LABEL_MIN_CELLS: Final = 16
"""Below this many cells for the title, the age goes too: the title is the last column kept."""


@dataclass(frozen=True, slots=True)
class FieldWidths:
    """The cells each shortened field gets in a row of a given width (the same for every row of a list).

    On a narrow row the columns go in this order, so the title stays readable: the id (when it
    would get fewer than `ID_MIN_CELLS`), then the folder (fewer than `CWD_MIN_CELLS`), then the
    age (when the title would still get fewer than `LABEL_MIN_CELLS`)."""

    label: int
    session_id: int
    cwd: int
    has_id_column: bool
    source_mark: int = 0
    """Cells of the source mark column (0: none in this list), followed by one space."""
    has_cwd_column: bool = True
    has_age_column: bool = True

    @classmethod
    def of(cls, columns: RowColumns, width: int) -> FieldWidths:
        """Share `width` between the fields of rows laid out from `columns`, dropping the columns
        that would be too narrow to read (see the class docstring)."""
        has_id, has_cwd, has_age = columns.session_id > 0, True, True
        while True:
            label, session_id, cwd = cls._shares(columns, width, has_id, has_cwd, has_age)
            if has_id and session_id < min(ID_MIN_CELLS, columns.session_id):
                has_id = False
            elif has_cwd and cwd < min(CWD_MIN_CELLS, columns.cwd):
                has_cwd = False
            elif has_age and label < min(LABEL_MIN_CELLS, columns.label):
                has_age = False
            else:
                return cls(label, session_id, cwd, has_id, columns.mark, has_cwd, has_age)

    @staticmethod
    def _shares(
        columns: RowColumns, width: int, has_id: bool, has_cwd: bool, has_age: bool
    ) -> tuple[int, int, int]:
        marks = columns.mark + 1 if columns.mark else 0
        # [source mark, space], label, 2 spaces, [id, 2 spaces], [same-folder mark (2 cells), cwd],
        # at least 1 space, [age]
        room = width - marks - 2 - (2 if has_id else 0) - (2 if has_cwd else 0) - 1
        room -= columns.age if has_age else 0
        naturals = [columns.label, columns.session_id if has_id else 0, columns.cwd if has_cwd else 0]
        label, session_id, cwd = _allocate(naturals, [6, 1, 3], room)
        return label, session_id, cwd


def row_pieces(fields: RowFields, query: str, width: int, widths: FieldWidths) -> tuple[list[Piece], int]:
    """The styled pieces of one row and their total cells (`width`, or more only when `width` is tiny).

    The source mark first when the list has a mark column, then the label (the title), then the
    id only when the list has an id column,
    then the cwd (marked when it is the same workspace), and the relative age
    at the right edge; a narrow row leaves out the columns `FieldWidths` dropped. Long fields are
    shortened in the middle so rows stay
    distinguishable: titles like "Plan … draft 2" and "Plan … draft 3" keep the
    part that differs, and paths keep their folder name.
    """
    pieces: list[Piece] = []
    used = 0
    if widths.source_mark:
        pieces += mark_pieces(fields.mark, fields.mark_color, widths.source_mark)
        used = widths.source_mark + 1
    label = truncate_middle(fields.label, widths.label)
    pieces += _matched(label, query, None, close=fields.close)
    pieces.append((" " * max(0, widths.label - cell_len(label)) + "  ", None))
    used += max(widths.label, cell_len(label)) + 2
    if widths.has_id_column:
        shown_id = truncate_middle(fields.session_id, widths.session_id)
        pieces += _matched(shown_id, query, _DIM)
        pieces.append((" " * max(0, widths.session_id - cell_len(shown_id)), _DIM))
        pieces.append(("  ", None))
        used += max(widths.session_id, cell_len(shown_id)) + 2
    if widths.has_cwd_column:
        if fields.same_workspace:
            pieces.append((f"{SAME_WORKSPACE_MARK} ", _BOLD))
        else:
            pieces.append(("  ", None))
        cwd = truncate_middle(fields.cwd, widths.cwd)
        pieces += _matched(cwd, query, _DIM)
        used += 2 + cell_len(cwd)
    age = fields.age if widths.has_age_column else ""
    age_cells = cell_len(age)
    gap = max(1, width - used - age_cells) if age else max(0, width - used)
    pieces.append((" " * gap, None))
    if age:
        pieces.append((age, _DIM))
    return pieces, used + gap + age_cells


def layout_row(fields: RowFields, query: str, width: int, columns: RowColumns) -> Text:
    """One row of the picker as Rich text, exactly fitted to `width` cells (see `row_pieces`)."""
    pieces, _cells = row_pieces(fields, query, width, FieldWidths.of(columns, width))
    return pieces_text(pieces, width)


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
