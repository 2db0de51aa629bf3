"""Messages sent while a reply runs that the model has not taken yet, shown dim under the conversation.

A message sent while the agent replies waits in its inbox until the next step boundary. Until
then it is in no log, so the transcript cannot show it: this pane does, with the readable text
and its mention chips, so a sent message is never invisible. When the step takes it, it leaves
this pane and appears in the transcript as a normal message; when the reply is stopped (Esc), it
goes back into the composer (see `sessionref_tui.returned_drafts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from sessionref_tui.widgets.transcript import chip_content

QUEUED_HEADING = "Queued · the model reads these at its next step · Esc stops the reply and returns them"
"""The line above the queued messages: what they are and how to get them back."""


class QueuedMessage(Protocol):
    """What the pane shows of one queued message (`sessionref.host.workspace.QueuedMessage`)."""

    @property
    def text(self) -> str: ...
    @property
    def references(self) -> tuple[str, ...]: ...


def queued_content(message: QueuedMessage) -> Content:
    """One queued message: a dim `queued ›` marker, then its readable text with `@label` chips (inert)."""
    return Content.assemble(("queued › ", "bold"), chip_content(message.text, set(message.references)))


class QueuedMessages(VerticalScroll, can_focus=False):
    """The queued messages of the session on screen; hidden while there are none."""

    DEFAULT_CSS = """
    QueuedMessages {
        display: none;
        height: auto;
        max-height: 8;
        padding: 0 1;
        scrollbar-size-vertical: 1;
        &.-shown { display: block; }
        .queued-heading { color: $text-muted; text-style: italic; }
        .queued-message {
            padding: 0 1;
            color: $text-muted;
            border-left: dashed $success 60%;
        }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.messages: tuple[QueuedMessage, ...] = ()

    def show(self, messages: Sequence[QueuedMessage]) -> None:
        """Show exactly `messages` (in send order); an empty sequence hides the pane."""
        messages = tuple(messages)
        if messages == self.messages:
            return
        self.messages = messages
        self.remove_children()
        self.set_class(bool(messages), "-shown")
        if not messages:
            return
        self.mount(Static(Content(QUEUED_HEADING), classes="queued-heading"))
        self.mount_all(Static(queued_content(message), classes="queued-message") for message in messages)
        self.scroll_end(animate=False)
