"""The composer: a message editor with `@` session mentions, chips and a live preview.

Mount `Composer(source)` where `source` is a `MentionSource`; handle
`Composer.Submitted` to send `event.value` (the canonical text). While sending,
call `set_busy(True, "…")`; on failure `show_error(message)` (the draft is never
touched); on success `clear_if_unchanged(value)`.

When the `@` menu asks and what it shows is decided by the toolkit-free
`MentionLookupController` (`sessionref_tui.lookup`), the same one the line mode
drives: this widget reports keys and cursor moves to it, runs its one lookup job
as a worker in an exclusive group, and renders what it is told in the popup.
The source's conversation search fills the popup's second group; picking one
of its rows inserts the same mention.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Final, Protocol

from sessionref.service.abort import AbortSignal
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import TextArea
from textual.worker import Worker

from sessionref_tui.lookup import Job, MentionLookupController
from sessionref_tui.mentions import (
    Mentionable,
    MentionToken,
    active_mention_token_in,
    count_distinct_mentions,
    mention_for,
    mention_insertion,
)
from sessionref_tui.widgets.composer_input import ComposerInput
from sessionref_tui.widgets.composer_notice import ComposerNotice
from sessionref_tui.widgets.mention_popup import MentionPopup
from sessionref_tui.widgets.popup_lookup_view import PopupLookupView
from sessionref_tui.widgets.reference_preview import CONTEXT_AROUND

if TYPE_CHECKING:
    from sessionref.service.candidates import Candidate
    from sessionref.service.conversations import ConversationSearchResult, MessageContext
    from sessionref.service.reference_preview import ReferencePreview

SEARCH_GROUP: Final = "mention-search"
"""The exclusive worker group of candidate lookups."""

NEWLINE_KEYS: Final = frozenset({"shift+enter", "ctrl+j", "alt+enter"})
"""Keys that insert a line break instead of sending.

Ctrl+J is the one shown (placeholder, footer): every terminal sends it. Shift+Enter and Alt+Enter
also work where the terminal can send them distinctly (many send plain Enter for both)."""

WORD_STATE_KEYS: Final = frozenset({"space", "escape"})
"""Keys whose meaning depends on the `@` word the lookups know of: a space goes on in a word that
matches, Esc closes it. Before one of them, the lookups are told of the word typed so far."""

PLACEHOLDER: Final = "Message  ·  @ mentions a session  ·  Enter sends, Ctrl+J new line"
"""What the empty composer says."""

Sleep = Callable[[float], Awaitable[None]]


class MentionSource(Protocol):
    """Where the composer gets candidates, previews and conversation matches for the session on
    screen (`sessionref.host.mention_source.MentionSource` is the one the app hands it)."""

    async def candidates(self, query: str, signal: AbortSignal) -> Sequence[Candidate]:
        """Candidates for `query`, best first (the popup's first group)."""
        ...

    async def preview(self, session_id: str, signal: AbortSignal) -> ReferencePreview:
        """What the model would receive from `session_id`."""
        ...

    async def conversations(self, query: str, signal: AbortSignal) -> ConversationSearchResult | None:
        """Sessions where `query` was said (the popup's second group), None when there is no group."""
        ...

    async def prepare(self) -> int:
        """Make ready what the first lookups would compute on the spot; returns how many titles."""
        ...

    async def context(self, session_id: str, seq: int, around: int, signal: AbortSignal) -> MessageContext:
        """The matched message `seq` of `session_id` with `around` neighbours each side."""
        ...

    def machine_of(self, session_id: str) -> str | None:
        """The machine a listed remote session comes from (None: a local one)."""
        ...

    def catalog_note(self) -> str | None:
        """Why the last lookup lacks the catalog's sessions, in one line (None: it has them)."""
        ...


def _wall_clock_ms() -> float:
    return time.time() * 1000


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
        self.lookups: MentionLookupController[Candidate] = MentionLookupController(
            self._candidates,
            PopupLookupView(self),
            conversations=self._conversations,
            after_titles=self._after_titles_drawn,
            spawn=self._spawn_lookup,
            sleep=lambda delay: self._sleep(delay),  # looked up each time: a test or bench may swap it
        )
        """When the `@` picker asks and what it shows (the line mode drives the same controller)."""
        self._busy = False
        self._busy_label = ""
        self.newline_key_in_footer = True
        """Whether the footer shows Ctrl+J (a narrow screen leaves it to the placeholder; the key works)."""
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
        self.popup.preview.context_loader = self._load_context
        self.popup.preview.sleep = self._sleep
        self.popup.preview.now_ms = lambda: self._now_ms()
        self.popup.remote = self.source

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
        # A draft put back (a failed send, returned messages) behaves like a paste: never opens the picker.
        self.lookups.pasted(self._token_at_cursor())
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
        if key in WORD_STATE_KEYS and self.lookups.active is None:
            # Keys of one burst are all handled before the first `Changed`: tell the lookups of
            # the `@` word typed so far, so that a space goes on in it and Esc closes it.
            self._refresh_token()
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
        if key == "escape" and (popup.is_open or self.lookups.active is not None):
            # Also while a lookup is still pending: the picker must not open after Esc.
            self._dismiss()
            return True
        if key == "tab" and (token := self._current_token()) is not None:
            # Tab in an `@` token whose picker was dismissed asks again.
            self.lookups.ask_again(token)
            return True
        if key in NEWLINE_KEYS:
            self.action_insert_newline()
            return True
        if key == "enter":
            self._submit()
            return True
        return False

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Ctrl+J is left out of the footer when `newline_key_in_footer` is off (the key itself always
        reaches the composer's key handler first)."""
        if action == "insert_newline":
            return self.newline_key_in_footer
        return True

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
        """The `@` word at the cursor, None while text is selected (where Tab asks again)."""
        return self._token_at_cursor() if self.input.selection.is_empty else None

    def _token_at_cursor(self) -> MentionToken | None:
        """The `@` word the cursor is in, selection or not (where a dismissal belongs)."""
        if self.source is None:
            return None
        return active_mention_token_in(self.input.chips, self.input.cursor_offset, self.lookups.continues_at)

    def _refresh_token(self) -> None:
        self.lookups.follow(self._token_at_cursor(), can_open=self.input.selection.is_empty)

    def _keep_closed_after_paste(self) -> None:
        """A paste never opens the picker: the token it leaves counts as dismissed."""
        self.lookups.pasted(self._token_at_cursor())

    def _dismiss(self) -> None:
        """Close the picker for the `@` word at the cursor: typing on in that word keeps it closed;
        leaving the word, deleting its `@` or pressing Tab in it asks again."""
        self.lookups.dismiss(self._token_at_cursor())

    def _close_popup(self) -> None:
        self.lookups.close()

    def _spawn_lookup(self, job: Callable[[], Coroutine[None, None, None]]) -> Job:
        worker: Worker[None] = self.run_worker(job, group=SEARCH_GROUP, exclusive=True, exit_on_error=False)
        return worker

    async def _candidates(self, query: str, signal: AbortSignal) -> Sequence[Candidate]:
        if self.source is None:
            raise LookupError("no session source")
        return await self.source.candidates(query, signal)

    async def _after_titles_drawn(self) -> None:
        """Return once the screen was refreshed after the title rows were shown: the search of what
        was said starts then, so its thread never competes with drawing them (`lookup.AfterTitles`)."""
        drawn: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def mark_drawn() -> None:
            if not drawn.done():
                drawn.set_result(None)

        self.call_after_refresh(mark_drawn)
        await drawn

    async def _conversations(self, query: str, signal: AbortSignal) -> ConversationSearchResult | None:
        if self.source is None:
            raise LookupError("no session source")
        return await self.source.conversations(query, signal)

    def _accept(self, candidate: Mentionable) -> None:
        field = self.input
        token = active_mention_token_in(field.chips, field.cursor_offset, self.lookups.continues_at)
        self.lookups.accepted()
        if token is None:
            return
        insertion = mention_insertion(field.chips, token, mention_for(candidate))
        field.replace(
            insertion.text,
            field.location_of(insertion.start),
            field.location_of(insertion.end),
            maintain_selection_offset=False,
        )
        field.move_cursor(field.location_of(insertion.cursor))

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

    async def _load_preview(self, session_id: str, signal: AbortSignal) -> ReferencePreview:
        if self.source is None:
            raise LookupError("no session source")
        return await self.source.preview(session_id, signal)

    async def _load_context(self, session_id: str, seq: int, signal: AbortSignal) -> MessageContext:
        if self.source is None:
            raise LookupError("no session source")
        return await self.source.context(session_id, seq, CONTEXT_AROUND, signal)

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
