"""Key bindings of the line mode."""

from __future__ import annotations

from typing import Any, Protocol

from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

from sessionref_tui.repl.completer import MentionLookups
from sessionref_tui.repl.transcript import Transcript


class KeyHost(Protocol):
    """What the bindings act on."""

    session: Any
    lookups: MentionLookups
    transcript: Transcript

    @property
    def preparing(self) -> bool: ...
    def accept_completion(self) -> None: ...
    def interrupt(self) -> None: ...
    def request_exit(self) -> None: ...


def line_mode_key_bindings(host: KeyHost) -> KeyBindings:
    """Enter sends (or accepts an open menu), Alt+Enter/Ctrl+J newline, Tab accepts, Esc dismisses,
    a paste never opens the menu, Ctrl+C interrupts (see `KeyHost.interrupt`), Ctrl+D on an empty
    prompt exits."""
    bindings = KeyBindings()

    @Condition
    def menu_open() -> bool:
        state = host.session.default_buffer.complete_state
        return state is not None and bool(state.completions)

    @Condition
    def prompt_empty() -> bool:
        return not host.session.default_buffer.text

    @bindings.add("enter", filter=menu_open)
    @bindings.add("tab", filter=menu_open)
    def _accept(event: KeyPressEvent) -> None:
        host.accept_completion()

    @bindings.add("escape", filter=menu_open)
    def _dismiss(event: KeyPressEvent) -> None:
        host.lookups.dismiss()

    @bindings.add("enter", filter=~menu_open)
    def _send(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if host.preparing and buffer.text.strip():
            host.transcript.notice("still preparing the previous message (Ctrl+C cancels it)")
            return
        buffer.validate_and_handle()

    @bindings.add("escape", "enter")
    @bindings.add("c-j")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add(Keys.BracketedPaste)
    def _paste(event: KeyPressEvent) -> None:
        host.lookups.ignore_pasted_token()
        event.current_buffer.insert_text(event.data.replace("\r\n", "\n").replace("\r", "\n"))

    @bindings.add("c-c")
    @bindings.add("<sigint>")
    def _interrupt(event: KeyPressEvent) -> None:
        host.interrupt()

    @bindings.add("c-d", filter=prompt_empty)
    def _eof(event: KeyPressEvent) -> None:
        host.request_exit()

    return bindings
