"""A minimal stand-in for the real composer, used only until `widgets/composer.py` exists.

Same surface as the composer the app talks to: `value`, `Submitted(value)`, `set_busy`,
`show_error`, `clear_error`, `clear_if_unchanged`. No `@` popup, no chips.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static, TextArea

from sessionref_tui.display import inert


class _Input(TextArea):
    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            composer = self.parent
            if isinstance(composer, PlaceholderComposer):
                composer.post_message(PlaceholderComposer.Submitted(self.text))
            return
        await super()._on_key(event)


class PlaceholderComposer(Vertical):
    """A text area that posts `Submitted(value)` on Enter and shows busy/error lines under it."""

    DEFAULT_CSS = """
    PlaceholderComposer { height: auto; }
    PlaceholderComposer _Input { height: 3; }
    PlaceholderComposer #composer-status { height: auto; }
    """

    class Submitted(Message):
        """The user pressed Enter with `value` in the composer."""

        def __init__(self, value: str) -> None:
            super().__init__()
            self.value = value

    def __init__(
        self, source: Any = None, *, now_ms: Any = None, cursor_blink: bool = True, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.source = source

    def compose(self) -> ComposeResult:
        area = _Input(id="composer-input")
        area.cursor_blink = False
        yield area
        yield Static("", id="composer-status")

    @property
    def value(self) -> str:
        """The draft."""
        return self.query_one(_Input).text

    def focus(self, scroll_visible: bool = True) -> PlaceholderComposer:
        """Focus the text area."""
        self.query_one(_Input).focus(scroll_visible)
        return self

    def set_busy(self, busy: bool, label: str = "") -> None:
        """Show `label` while busy; the draft stays."""
        self.query_one("#composer-status", Static).update(Content(inert(label)) if busy else "")

    def show_error(self, message: str) -> None:
        """Show `message` under the draft."""
        self.query_one("#composer-status", Static).update(Content(inert(message)))

    def clear_error(self) -> None:
        """Remove the error line."""
        self.query_one("#composer-status", Static).update("")

    def clear_if_unchanged(self, value: str) -> bool:
        """Clear the draft only if it still equals `value`."""
        if self.value != value:
            return False
        self.query_one(_Input).clear()
        return True
