"""The `@` picker: an overlay above the composer listing candidate sessions.

The popup is a thin view. The composer decides when it opens, what query runs
and which results are current; the popup shows rows, moves the highlight (with
wrap-around), reports the highlighted candidate and posts `Picked` on a click.
Every field shown comes from data and is rendered inert through `rich.text.Text`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from sessionref_tui.display import inert, match_spans, relative_age, truncate_middle
from sessionref_tui.widgets.reference_preview import ReferencePreview

MAX_VISIBLE_ROWS: Final = 8
"""Rows visible at once; more scroll, with a position indicator such as "3/17"."""

SAME_WORKSPACE_MARK: Final = "●"
"""Shown before the cwd of a session that shares the current session's cwd."""

NO_CWD: Final = "(no cwd)"

MATCH_STYLE: Final = Style(bold=True, underline=True)
"""How the part of a field that matches the query is highlighted."""

_DIM: Final = Style(dim=True)


class CandidateLike(Protocol):
    """What the popup reads from a candidate (`sessionref.references.Candidate` fits)."""

    session_id: str
    label: str
    cwd: str | None
    created_at: int | float
    same_workspace: bool


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


@dataclass(frozen=True, slots=True)
class RowColumns:
    """Natural (widest) cell widths of each column over the listed candidates.

    Laying every row out from the same columns keeps the list aligned."""

    label: int
    session_id: int
    cwd: int
    age: int


def _fields(candidate: CandidateLike, now_ms: float) -> tuple[str, str, str, str]:
    """The inert label, id (empty when equal to the label), cwd and age of a row."""
    label = inert(candidate.label)
    session_id = inert(candidate.session_id) if candidate.session_id != candidate.label else ""
    cwd = inert(candidate.cwd) if candidate.cwd else NO_CWD
    return label, session_id, cwd, relative_age(candidate.created_at, now_ms)


def columns_for(candidates: Sequence[CandidateLike], now_ms: float) -> RowColumns:
    """The shared column widths for `candidates`."""
    widths = [0, 0, 0, 0]
    for candidate in candidates:
        for index, field in enumerate(_fields(candidate, now_ms)):
            widths[index] = max(widths[index], cell_len(field))
    return RowColumns(*widths)


def _fit(text: Text, width: int) -> Text:
    """`text` padded with spaces to exactly `width` cells."""
    text.pad_right(max(0, width - text.cell_len))
    return text


def render_candidate_row(
    candidate: CandidateLike,
    query: str,
    width: int,
    now_ms: float,
    columns: RowColumns | None = None,
) -> Text:
    """One row of the picker, exactly fitted to `width` cells.

    Label first (the title), then the id only when it differs from the label,
    then the cwd (marked when it is the same workspace), and the relative age
    at the right edge. Long fields are shortened in the middle so rows stay
    distinguishable: titles like "Plan … draft 2" and "Plan … draft 3" keep the
    part that differs, and paths keep their folder name. `columns` aligns the
    row with the others in the list.
    """
    label, session_id, cwd, age = _fields(candidate, now_ms)
    columns = columns or columns_for([candidate], now_ms)
    has_id_column = columns.session_id > 0
    mark = f"{SAME_WORKSPACE_MARK} " if candidate.same_workspace else "  "
    room = width - len(mark) - columns.age - 2 - (2 if has_id_column else 0) - 1
    label_width, id_width, cwd_width = _allocate(
        [columns.label, columns.session_id, columns.cwd], [6, 1, 3], room
    )
    row = Text(end="", no_wrap=True)
    row.append_text(_fit(_highlighted(truncate_middle(label, label_width), query), label_width))
    row.append("  ")
    if has_id_column:
        shown_id = _highlighted(truncate_middle(session_id, id_width), query, _DIM)
        row.append_text(_fit(shown_id, id_width))
        row.append("  ")
    row.append(mark, style="bold" if candidate.same_workspace else "")
    row.append_text(_highlighted(truncate_middle(cwd, cwd_width), query, _DIM))
    row.append(" " * max(1, width - row.cell_len - cell_len(age)))
    row.append(age, style=_DIM)
    row.truncate(max(0, width))
    return row


class CandidateRow:
    """A Rich renderable that lays a candidate out for whatever width it is given."""

    def __init__(
        self, candidate: CandidateLike, query: str, now_ms: float, columns: RowColumns | None = None
    ) -> None:
        self.candidate = candidate
        self.query = query
        self.now_ms = now_ms
        self.columns = columns

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        row = render_candidate_row(self.candidate, self.query, options.max_width, self.now_ms, self.columns)
        row.end = "\n"  # Textual counts line breaks to size the option
        yield row


class _CandidateList(OptionList, can_focus=False):
    """The candidate rows; never takes focus, so typing stays in the composer."""


class MentionPopup(Vertical):
    """Overlay listing candidates for the current `@` query, with a status line and a preview."""

    class Picked(Message):
        """A candidate was clicked."""

        def __init__(self, candidate: Any) -> None:
            super().__init__()
            self.candidate = candidate

    def __init__(self, *, now_ms: Callable[[], float], id: str | None = None) -> None:
        super().__init__(id=id)
        self._now_ms = now_ms
        self._candidates: list[Any] = []
        self.query_text = ""
        """The query the rows on screen belong to."""

    def compose(self) -> ComposeResult:
        yield _CandidateList(id="mention-options")
        yield Static("", id="mention-status", markup=False)
        yield ReferencePreview(id="mention-preview")

    @property
    def option_list(self) -> OptionList:
        """The list widget holding the rows."""
        return self.query_one("#mention-options", OptionList)

    @property
    def preview(self) -> ReferencePreview:
        """The preview pane for the highlighted candidate."""
        return self.query_one(ReferencePreview)

    @property
    def is_open(self) -> bool:
        """True while the popup is shown."""
        return self.has_class("-open")

    @property
    def candidates(self) -> Sequence[Any]:
        """The candidates currently listed."""
        return tuple(self._candidates)

    @property
    def highlighted_candidate(self) -> Any | None:
        """The candidate under the highlight, or None when the list is empty."""
        index = self.option_list.highlighted
        if index is None or not 0 <= index < len(self._candidates):
            return None
        return self._candidates[index]

    def open(self) -> None:
        """Show the popup."""
        self.add_class("-open")

    def close(self) -> None:
        """Hide the popup and forget its rows and preview."""
        self.remove_class("-open", "-loading")
        self._candidates = []
        self.query_text = ""
        self.option_list.clear_options()
        self.query_one("#mention-status", Static).update("")
        self.preview.reset()

    def show_results(self, query: str, candidates: Sequence[Any]) -> None:
        """Replace the rows with `candidates` for `query` and highlight the first one."""
        self._candidates = list(candidates)
        self.query_text = query
        now = self._now_ms()
        columns = columns_for(self._candidates, now)
        self.option_list.set_options(
            Option(CandidateRow(candidate, query, now, columns)) for candidate in self._candidates
        )
        self.set_class(not self._candidates, "-empty")
        self.remove_class("-loading")
        if self._candidates:
            self.option_list.highlighted = 0
        else:
            self.preview.reset()
        self._update_status()
        self.open()

    def show_loading(self) -> None:
        """Say a lookup is running (the composer calls this only after a delay)."""
        self.add_class("-loading")
        self._update_status()
        self.open()

    def show_error(self, message: str) -> None:
        """Show a lookup failure as a quiet status row; the rows are cleared."""
        self._candidates = []
        self.option_list.clear_options()
        self.preview.reset()
        self.remove_class("-loading")
        self.add_class("-empty")
        self.query_one("#mention-status", Static).update(Text(inert(message), style="italic"))
        self.open()

    def move_highlight(self, delta: int) -> None:
        """Move the highlight by `delta` rows, wrapping past either end."""
        count = len(self._candidates)
        if not count:
            return
        current = self.option_list.highlighted
        self.option_list.highlighted = 0 if current is None else (current + delta) % count

    def _update_status(self) -> None:
        status = Text(end="", no_wrap=True)
        count = len(self._candidates)
        if self.has_class("-loading"):
            status.append("searching…", style="italic")
        elif not count:
            status.append("no matching sessions", style="italic")
        else:
            index = (self.option_list.highlighted or 0) + 1
            status.append(f"{index}/{count}", style="bold")
            status.append("  ↑↓ move · Tab/Enter pick · Esc close", style=_DIM)
        self.query_one("#mention-status", Static).update(status)

    @on(OptionList.OptionHighlighted, "#mention-options")
    def _highlight_moved(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._update_status()
        candidate = self.highlighted_candidate
        if candidate is not None:
            self.preview.show_for(candidate)

    @on(OptionList.OptionSelected, "#mention-options")
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        candidate = self.highlighted_candidate
        if candidate is not None:
            self.post_message(self.Picked(candidate))
