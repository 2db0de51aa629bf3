"""A small modal that says what compaction does and asks before doing it.

Compaction rewrites what the model sees from then on, so it is never one stray key away: the
app asks here first (Enter compacts, Esc keeps the session as it is).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Final

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label

from sessionref_tui.display import inert

COMPACTION_EXPLAINED: Final = (
    "The model summarises the conversation so far into a checkpoint. From then on it sees that summary "
    "instead of the earlier messages. The log keeps every message, and the transcript shows the checkpoint."
)


class ConfirmCompactScreen(ModalScreen[bool]):
    """Dismisses with True when the user confirms with Enter, False on Esc."""

    CSS_PATH = Path(__file__).with_name("confirm_compact.tcss")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "confirm", "Compact"),
        Binding("escape", "keep", "Keep as it is"),
    ]

    def __init__(self, session_name: str) -> None:
        super().__init__()
        self.session_name = session_name

    def compose(self) -> ComposeResult:
        with Vertical(id="compact-dialog"):
            yield Label(
                Content.assemble("Compact ", (f"“{inert(self.session_name)}”", "bold"), "?"),
                id="compact-heading",
            )
            yield Label(Content(COMPACTION_EXPLAINED), id="compact-explained")
            yield Label(Content("Enter compacts · Esc keeps the session as it is"), id="compact-hint")

    def action_confirm(self) -> None:
        """Compact."""
        self.dismiss(True)

    def action_keep(self) -> None:
        """Close without compacting."""
        self.dismiss(False)
