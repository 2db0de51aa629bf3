"""The composer's text area: a `TextArea` that keeps mention chips whole.

It holds the displayed text (chips read `@label`) and a `ChipDocument` that
knows where each chip is and which canonical token it stands for. Every edit is
mirrored into the chip model by the pure functions of `sessionref_tui.mentions`;
Backspace/Delete at a chip's edge remove it as one unit, and inserted text that
carries canonical tokens (a paste) becomes chips.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.widgets import TextArea
from textual.widgets.text_area import Document, Edit, EditResult, Location

from sessionref_tui.mentions import (
    ChipDocument,
    backspace_range,
    canonical_slice,
    delete_range,
    expand_to_chips,
    insert_value_text,
    parse_value,
    reconcile,
    replace_range,
)

_TOKEN_MARK = "dsh-session:"
"""Only inserted text containing this can carry a canonical token worth parsing."""

_STATE_HISTORY = 200
"""How many past chip documents are kept to restore chips on undo/redo."""


class ComposerInput(TextArea):
    """A `TextArea` with atomic mention chips. `value` is the canonical text."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {*TextArea.COMPONENT_CLASSES, "composer--chip"}

    def __init__(self, *, placeholder: str = "", cursor_blink: bool = True, id: str | None = None) -> None:
        super().__init__("", soft_wrap=True, tab_behavior="focus", placeholder=placeholder, id=id)
        self.set_reactive(TextArea.cursor_blink, cursor_blink)
        self.show_line_numbers = False
        self.highlight_cursor_line = False
        self._chips = ChipDocument()
        self._states: deque[ChipDocument] = deque(maxlen=_STATE_HISTORY)
        self.key_handler: Callable[[str], bool] | None = None
        """Asked first for every key; returning True consumes it (popup keys, Enter to submit)."""
        self.after_paste: Callable[[], None] | None = None
        """Called after a paste was inserted (the composer keeps the picker closed)."""

    # --- the chip model ---------------------------------------------------------------

    @property
    def chips(self) -> ChipDocument:
        """The displayed text and its chips."""
        return self._chips

    @property
    def value(self) -> str:
        """The canonical text: chips written as their `@[label](dsh-session:…)` tokens."""
        return self._chips.value

    def load_value(self, value: str) -> None:
        """Replace the whole content with canonical `value` (its valid mentions become chips)."""
        document = parse_value(value)
        super().load_text(document.display)
        self._set_chips(document)
        self.move_cursor(self.document.end)

    def load_text(self, text: str) -> None:
        """Replace the content with plain display `text` (no chips)."""
        super().load_text(text)
        self._set_chips(ChipDocument(self.text, ()))

    @property
    def _text_document(self) -> Document:
        # A TextArea without a language holds a plain `Document` (typed as its base, `DocumentBase`).
        document = self.document
        assert isinstance(document, Document)
        return document

    def index_of(self, location: Location) -> int:
        """The index into the displayed text of a (row, column) location."""
        return self._text_document.get_index_from_location(location)

    @property
    def cursor_offset(self) -> int:
        """The cursor position as an index into the displayed text."""
        return self.index_of(self.cursor_location)

    def location_of(self, offset: int) -> Location:
        """The (row, column) location of an index into the displayed text."""
        return self._text_document.get_location_from_index(offset)

    def _set_chips(self, document: ChipDocument) -> None:
        if document.display != self.text:
            document = reconcile(self._chips, self.text)
        if document != self._chips:
            self._chips = document
            # The chips are drawn as styled ranges (`get_line`): lines drawn with the old chips are stale.
            self.notify_style_update()
            self.refresh()
        self._states.append(document)

    def edit(self, edit: Edit) -> EditResult:
        """Perform `edit`, turning canonical tokens in inserted text into chips; a deletion that
        would cut a chip (any editing key: Ctrl+U, Ctrl+W, Ctrl+K, a selection) takes it whole."""
        start = self.index_of(edit.from_location)
        end = self.index_of(edit.to_location)
        before = self._chips
        if not edit.text and start != end:
            widened = expand_to_chips(before, start, end)
            if widened != tuple(sorted((start, end))):
                start, end = widened
                keep = edit.maintain_selection_offset
                edit = Edit("", self.location_of(start), self.location_of(end), keep)
        if _TOKEN_MARK in edit.text:
            fragment = parse_value(edit.text)
            if fragment.chips:
                chip_edit = Edit(
                    fragment.display, edit.from_location, edit.to_location, edit.maintain_selection_offset
                )
                result = super().edit(chip_edit)
                self._set_chips(insert_value_text(before, start, end, edit.text))
                return result
        result = super().edit(edit)
        self._set_chips(replace_range(before, start, end, edit.text))
        return result

    def _restore_after_history(self) -> None:
        """After undo/redo: take back the newest known state with this text, else reconcile."""
        text = self.text
        for state in reversed(self._states):
            if state.display == text:
                self._set_chips(state)
                return
        self._set_chips(reconcile(self._chips, text))

    def undo(self) -> None:
        """Undo the last batch of edits, restoring the chips that batch changed."""
        super().undo()
        self._restore_after_history()

    def redo(self) -> None:
        """Redo the last undone batch, restoring its chips."""
        super().redo()
        self._restore_after_history()

    # --- atomic deletion ----------------------------------------------------------------

    def action_delete_left(self) -> None:
        """Backspace: a chip ending at the cursor goes as a whole, else one character."""
        if self.read_only or not self.selection.is_empty:
            super().action_delete_left()
            return
        span = backspace_range(self._chips, self.cursor_offset)
        if span is None:
            return
        self.delete(self.location_of(span[0]), self.location_of(span[1]), maintain_selection_offset=False)

    def action_delete_right(self) -> None:
        """Delete: a chip starting at the cursor goes as a whole, else one character."""
        if self.read_only or not self.selection.is_empty:
            super().action_delete_right()
            return
        span = delete_range(self._chips, self.cursor_offset)
        if span is None:
            return
        self.delete(self.location_of(span[0]), self.location_of(span[1]), maintain_selection_offset=False)

    def action_delete_to_start_of_line(self) -> None:
        """Ctrl+U: delete to the start of the logical line (not the wrapped screen line); at its
        start, join it to the line before. Chips are taken whole (`edit`)."""
        if self.read_only or not self.selection.is_empty:
            super().action_delete_to_start_of_line()
            return
        row, column = self.cursor_location
        if column == 0:
            super().action_delete_to_start_of_line()
            return
        self.delete((row, 0), (row, column), maintain_selection_offset=False)

    def action_delete_to_end_of_line(self) -> None:
        """Ctrl+K: delete to the end of the logical line (not the wrapped screen line)."""
        if self.read_only or not self.selection.is_empty:
            super().action_delete_to_end_of_line()
            return
        row, column = self.cursor_location
        end = len(self._text_document.get_line(row))
        if column < end:
            self.delete((row, column), (row, end), maintain_selection_offset=False)

    def clear_draft(self) -> None:
        """Empty the composer (undoable, like any edit)."""
        if not self.read_only and self.text:
            self.delete((0, 0), self.document.end, maintain_selection_offset=False)

    # --- clipboard -------------------------------------------------------------------------

    def _selected_offsets(self) -> tuple[int, int]:
        start, end = self.selection
        return (
            self.index_of(start),
            self.index_of(end),
        )

    def action_copy(self) -> None:
        """Copy the selection as canonical text; a partly selected chip is copied whole."""
        if self.selection.is_empty:
            super().action_copy()
            return
        self.app.copy_to_clipboard(canonical_slice(self._chips, *self._selected_offsets()))

    def action_cut(self) -> None:
        """Cut the selection widened to whole chips, putting its canonical text on the clipboard."""
        if self.read_only or self.selection.is_empty:
            super().action_cut()
            return
        start, end = expand_to_chips(self._chips, *self._selected_offsets())
        self.app.copy_to_clipboard(canonical_slice(self._chips, start, end))
        self.delete(self.location_of(start), self.location_of(end), maintain_selection_offset=False)

    # --- keys, paste, rendering ------------------------------------------------------------

    # Textual calls the `_on_key`/`_on_paste` of every class in the MRO, subclass first,
    # until one prevents the default: these run before TextArea's own handlers.

    async def _on_key(self, event: events.Key) -> None:
        if self.key_handler is not None and not self.read_only and self.key_handler(event.key):
            event.stop()
            event.prevent_default()
            return
        if not event.is_printable and await self._run_own_binding(event.key):
            event.stop()
            event.prevent_default()

    async def _run_own_binding(self, key: str) -> bool:
        """Run this widget's own binding for `key` now, in the order the keys came.

        Textual inserts a printable key in the focused widget's handler, but runs a widget's
        (non-priority) binding only once the key has bubbled up to the App: keys that arrive in one
        burst (a paste of keystrokes, slow ssh or mosh) were applied out of order, `hello`, Ctrl+U, `X`
        leaving the composer empty. See docs/upstream-reports.md."""
        active = self.screen.active_bindings.get(key)
        if active is None or active.node is not self or active.binding.priority or not active.enabled:
            return False
        return await self.app.run_action(active.binding.action, self)

    async def _on_paste(self, event: events.Paste) -> None:
        event.prevent_default()
        if self.read_only:
            return
        start, end = self.selection
        self.move_cursor(self.replace(event.text, start, end, maintain_selection_offset=False).end_location)
        if self.after_paste is not None:
            self.after_paste()

    def action_paste(self) -> None:
        """Paste from the app clipboard (canonical tokens become chips)."""
        super().action_paste()
        if self.after_paste is not None:
            self.after_paste()

    def get_line(self, line_index: int) -> Text:
        """The line's text with chip ranges styled (chips never span lines)."""
        line = super().get_line(line_index)
        if not self._chips.chips:
            return line
        line_start = self.index_of((line_index, 0))
        line_end = line_start + len(line.plain)
        style = self.get_component_rich_style("composer--chip", partial=True)
        for chip in self._chips.chips:
            if chip.end > line_start and chip.start < line_end:
                line.stylize(style, max(0, chip.start - line_start), chip.end - line_start)
        return line
