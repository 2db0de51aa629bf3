"""A small modal asking for a session's new title."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from sessionref_tui.display import inert


class RenameScreen(ModalScreen[str | None]):
    """Dismisses with the new title (stripped, non-empty), or None when cancelled with Esc."""

    CSS_PATH = Path(__file__).with_name("rename.tcss")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, current_title: str) -> None:
        super().__init__()
        self.current_title = current_title

    def compose(self) -> ComposeResult:
        with Vertical(id="rename-dialog"):
            yield Label(Content("Rename session"), id="rename-heading")
            yield Input(value=inert(self.current_title), id="rename-input", select_on_focus=False)
            yield Label(Content("Enter to save · Esc to cancel"), id="rename-hint")

    @on(Input.Submitted, "#rename-input")
    def _save(self, event: Input.Submitted) -> None:
        title = event.value.strip()
        self.dismiss(title if title else None)

    def action_cancel(self) -> None:
        """Close without renaming."""
        self.dismiss(None)
