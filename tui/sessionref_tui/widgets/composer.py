"""The composer: a message editor with `@` session mentions, chips and a live preview.

Mount `Composer(source)` where `source` is a `MentionSource`; handle
`Composer.Submitted` to send `event.value` (the canonical text). While sending,
call `set_busy(True, "…")`; on failure `show_error(message)` (the draft is never
touched); on success `clear_if_unchanged(value)`.

Lookups run in one exclusive worker group: every keystroke that changes the
`@` token cancels the running lookup (and aborts its signal), waits
`SEARCH_DEBOUNCE`, then asks the source. A generation counter drops any result
that still arrives for an older query.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Final, Protocol

from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref.service.abort import AbortSignal
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import TextArea

from sessionref_tui.display import inert
from sessionref_tui.mentions import MentionToken, active_mention_token_in, count_distinct_mentions
from sessionref_tui.widgets.composer_input import ComposerInput
from sessionref_tui.widgets.composer_notice import ComposerNotice
from sessionref_tui.widgets.mention_popup import MentionPopup

SEARCH_DEBOUNCE: Final = 0.08
"""Seconds the `@` query must stay unchanged before the source is asked.

Short enough to feel per-keystroke, long enough that typing a word asks once."""

LOADING_DELAY: Final = 0.25
"""Seconds a lookup may run before the picker says "searching…".

Fast lookups never flash a loading state."""

SEARCH_GROUP: Final = "mention-search"
"""The exclusive worker group of candidate lookups."""

NEWLINE_KEYS: Final = frozenset({"shift+enter", "ctrl+j", "alt+enter"})
"""Keys that insert a line break instead of sending.

Ctrl+J is the one shown (placeholder, footer): every terminal sends it. Shift+Enter and Alt+Enter
also work where the terminal can send them distinctly (many send plain Enter for both)."""

PLACEHOLDER: Final = "Message  ·  @ mentions a session  ·  Enter sends, Ctrl+J new line"
"""What the empty composer says."""

Sleep = Callable[[float], Awaitable[None]]


class MentionSource(Protocol):
    """Where the composer gets candidates and previews (the app adapts the reference service)."""

    async def candidates(self, query: str, signal: AbortSignal) -> Sequence[Any]:
        """Candidates for `query`, best first (objects like `sessionref.service.references.Candidate`)."""
        ...

    async def preview(self, session_id: str, signal: AbortSignal) -> Any:
        """What the model would receive from `session_id` (like `ReferencePreview`)."""
        ...


def _wall_clock_ms() -> float:
    return time.time() * 1000


def mention_for(candidate: Any) -> str:
    """The canonical token inserted for `candidate`.

    The label is made inert first (as upstream does), so the readable text the
    model receives never carries control characters; the URI keeps the raw id.
    """
    return format_session_reference_mention(SessionReference(candidate.session_id, inert(candidate.label)))


class Composer(Vertical):
    """Message editor with the `@` picker, mention chips, notices and submit."""

    DEFAULT_CSS = Path(__file__).with_name("composer.tcss").read_text(encoding="utf-8")
    BINDINGS: ClassVar[list[BindingType]] = [
        # For the footer: the key itself reaches `_handle_key` first, like Shift/Alt+Enter.
        Binding("ctrl+j", "insert_newline", "New line"),
    ]

    class Submitted(Message):
        """Enter was pressed with the picker closed and a non-empty draft.

        `value` is the canonical text (mentions as `@[label](dsh-session:…)`).
        The composer keeps the draft; the app clears it on success.
        """

        def __init__(self, value: str, composer: Composer | None = None) -> None:
            super().__init__()
            self.value = value
            self.composer = composer

        @property
        def control(self) -> Composer | None:
            """The composer that sent this message."""
            return self.composer

    def __init__(
        self,
        source: MentionSource | None = None,
        *,
        placeholder: str = PLACEHOLDER,
        now_ms: Callable[[], float] | None = None,
        cursor_blink: bool = True,
        sleep: Sleep | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.source = source
        """Candidates and previews; None disables the picker."""
        self._now_ms = now_ms or _wall_clock_ms
        self._sleep: Sleep = sleep or asyncio.sleep
        self._placeholder = placeholder
        self._cursor_blink = cursor_blink
        self._generation = 0
        self._search_signal: AbortSignal | None = None
        self._active_key: tuple[int, str] | None = None
        self._dismissed_start: int | None = None
        """Where the `@` word the picker was dismissed for starts (None: nothing dismissed)."""
        self._busy = False
        self._busy_label = ""
        self._error: str | None = None
        self._error_draft = ""
        self._notice_state: tuple[str | None, bool, str, int] | None = None

    def compose(self) -> ComposeResult:
        yield MentionPopup(now_ms=lambda: self._now_ms(), id="mention-popup")
        yield ComposerNotice(id="composer-notice")
        yield ComposerInput(
            placeholder=self._placeholder, cursor_blink=self._cursor_blink, id="composer-input"
        )

    def on_mount(self) -> None:
        self.input.key_handler = self._handle_key
        self.input.after_paste = self._keep_closed_after_paste
        self.popup.preview.loader = self._load_preview
        self.popup.preview.sleep = self._sleep
        self.popup.preview.now_ms = lambda: self._now_ms()

    # --- public API -----------------------------------------------------------------

    @property
    def input(self) -> ComposerInput:
        """The text area."""
        return self.query_one(ComposerInput)

    @property
    def popup(self) -> MentionPopup:
        """The `@` picker."""
        return self.query_one(MentionPopup)

    @property
    def value(self) -> str:
        """The canonical draft: what submit, copy and saved drafts use."""
        return self.input.value

    @value.setter
    def value(self, value: str) -> None:
        self.input.load_value(value)
        self._refresh_notice()

    @property
    def display_text(self) -> str:
        """The draft as shown: chips read `@label`."""
        return self.input.text

    @property
    def busy(self) -> bool:
        """True between `set_busy(True)` and `set_busy(False)`; Enter does not send meanwhile."""
        return self._busy

    def focus(self, scroll_visible: bool = True) -> Composer:
        """Focus the text area."""
        self.input.focus(scroll_visible)
        return self

    def set_busy(self, busy: bool, label: str = "") -> None:
        """Show progress while a message is prepared; the draft stays editable and untouched."""
        self._busy = busy
        self._busy_label = label
        self.set_class(busy, "-busy")
        self._refresh_notice()

    def show_error(self, message: str) -> None:
        """Show `message` under the draft (shown inert) until `clear_error` or the draft changes."""
        self._error = message
        self._error_draft = self.input.text
        self._refresh_notice()

    def clear_error(self) -> None:
        """Remove the error notice."""
        self._error = None
        self._refresh_notice()

    def clear_if_unchanged(self, value: str) -> bool:
        """Clear the draft only if it still equals `value` (a newer draft survives); True if cleared."""
        if self.value != value:
            return False
        self.input.load_value("")
        self._close_popup()
        self._error = None
        self._refresh_notice()
        return True

    def close_picker(self) -> None:
        """Close the `@` picker and cancel its lookups (e.g. when the app switches session)."""
        self._close_popup()

    # --- keys -----------------------------------------------------------------------

    def _handle_key(self, key: str) -> bool:
        popup = self.popup
        if popup.is_open:
            if key in ("up", "down"):
                popup.move_highlight(-1 if key == "up" else 1)
                return True
            if key in ("tab", "enter"):
                candidate = popup.highlighted_candidate
                if candidate is not None:
                    self._accept(candidate)
                else:
                    self._dismiss()
                return True
        if key == "escape" and (popup.is_open or self._active_key is not None):
            # Also while a lookup is still pending: the picker must not open after Esc.
            self._dismiss()
            return True
        if key == "tab" and self._current_token() is not None:
            # Tab in an `@` token whose picker was dismissed asks again.
            self._dismissed_start = None
            self._active_key = None
            self._refresh_token()
            return True
        if key in NEWLINE_KEYS:
            self.action_insert_newline()
            return True
        if key == "enter":
            self._submit()
            return True
        return False

    def action_insert_newline(self) -> None:
        """Put a line break at the cursor (replacing a selection) instead of sending."""
        self.input.replace("\n", *self.input.selection, maintain_selection_offset=False)

    def _submit(self) -> None:
        value = self.value
        if self._busy or not value.strip():
            return
        self.post_message(self.Submitted(value, self))

    # --- the picker ------------------------------------------------------------------

    @on(TextArea.Changed, "#composer-input")
    def _text_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        if self._error is not None and self.input.text != self._error_draft:
            self._error = None
        self._refresh_notice()
        self._refresh_token()

    @on(TextArea.SelectionChanged, "#composer-input")
    def _selection_changed(self, event: TextArea.SelectionChanged) -> None:
        event.stop()
        self._refresh_token()

    def _current_token(self) -> MentionToken | None:
        field = self.input
        if self.source is None or not field.selection.is_empty:
            return None
        return active_mention_token_in(field.chips, field.cursor_offset)

    def _token_at_cursor(self) -> MentionToken | None:
        """The `@` word the cursor is in, selection or not (where a dismissal belongs)."""
        if self.source is None:
            return None
        return active_mention_token_in(self.input.chips, self.input.cursor_offset)

    def _refresh_token(self) -> None:
        at_cursor = self._token_at_cursor()
        if at_cursor is None or at_cursor.start != self._dismissed_start:
            # The dismissed `@` word was left (or its `@` deleted): the next one asks again.
            self._dismissed_start = None
        token = self._current_token()
        if token is None or self._dismissed_start is not None:
            self._close_popup()
            return
        key = (token.start, token.query)
        if key == self._active_key:
            return
        self._active_key = key
        self._start_search(token.query)

    def _keep_closed_after_paste(self) -> None:
        """A paste never opens the picker: treat the token it leaves as dismissed."""
        self._dismiss()

    def _dismiss(self) -> None:
        """Close the picker for the `@` word at the cursor: typing on in that word keeps it closed;
        leaving the word, deleting its `@` or pressing Tab in it asks again."""
        token = self._token_at_cursor()
        self._dismissed_start = None if token is None else token.start
        self._close_popup()

    def _close_popup(self) -> None:
        self._generation += 1
        self._active_key = None
        self._abort_search()
        if self.popup.is_open:
            self.popup.close()

    def _abort_search(self) -> None:
        if self._search_signal is not None:
            self._search_signal.abort("superseded")
            self._search_signal = None
        self.workers.cancel_group(self, SEARCH_GROUP)

    def _start_search(self, query: str) -> None:
        self._generation += 1
        self._abort_search()
        self.popup.preview.pause()
        signal = AbortSignal()
        self._search_signal = signal
        self._search(query, self._generation, signal)

    @work(exclusive=True, group=SEARCH_GROUP, exit_on_error=False)
    async def _search(self, query: str, generation: int, signal: AbortSignal) -> None:
        # Debounce: a newer keystroke cancels this worker while it waits here.
        await self._sleep(SEARCH_DEBOUNCE)
        source = self.source
        if source is None or generation != self._generation:
            return
        loading = asyncio.create_task(self._loading_after_delay(generation))
        try:
            results = await source.candidates(query, signal)
        except asyncio.CancelledError:
            signal.abort("superseded")
            raise
        except Exception as error:  # a failing source degrades to a quiet row, never a crash
            if generation == self._generation:
                message = getattr(error, "message", None) or str(error) or type(error).__name__
                self.popup.show_error(f"sessions unavailable: {message}")
            return
        finally:
            loading.cancel()
        if generation != self._generation or signal.aborted:
            return  # stale: the token changed while this query ran
        # The previous rows stayed on screen while this query ran and are replaced in
        # one step now: clearing them first would make the list flash on every key.
        self.popup.show_results(query, results)

    async def _loading_after_delay(self, generation: int) -> None:
        await self._sleep(LOADING_DELAY)
        if generation == self._generation:
            self.popup.show_loading()

    def _accept(self, candidate: Any) -> None:
        field = self.input
        token = active_mention_token_in(field.chips, field.cursor_offset)
        self._close_popup()
        if token is None:
            return
        follows_space = token.end < len(field.text) and field.text[token.end].isspace()
        mention = mention_for(candidate)
        field.replace(
            mention if follows_space else mention + " ",
            field.location_of(token.start),
            field.location_of(token.end),
            maintain_selection_offset=False,
        )
        if follows_space:
            field.move_cursor_relative(columns=1)
        self._dismissed_start = None

    @on(events.DescendantBlur)
    def _focus_left(self, event: events.DescendantBlur) -> None:
        # The picker belongs to the text area: it never stays open for an unfocused input.
        if event.widget is self.input:
            self._close_popup()

    @on(MentionPopup.Picked)
    def _picked(self, event: MentionPopup.Picked) -> None:
        event.stop()
        self._accept(event.candidate)
        self.input.focus()

    async def _load_preview(self, session_id: str, signal: AbortSignal) -> Any:
        if self.source is None:
            raise LookupError("no session source")
        return await self.source.preview(session_id, signal)

    # --- notices ---------------------------------------------------------------------

    def _refresh_notice(self) -> None:
        # Called on every keystroke: the notice is touched only when what it says changes.
        state = (self._error, self._busy, self._busy_label, count_distinct_mentions(self.value))
        if state == self._notice_state:
            return
        self._notice_state = state
        error, busy, busy_label, mentioned = state
        self.query_one(ComposerNotice).show(
            error=error, busy=busy, busy_label=busy_label, mentioned=mentioned
        )
