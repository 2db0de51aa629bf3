"""Key bindings of the line mode.

Esc and the `@` menu. A terminal sends Alt+<key> as ESC followed by the key, so prompt_toolkit
reads a lone ESC byte as a possible Meta prefix: it waits `ttimeoutlen` (0.5 s by default) for
more bytes, then holds the Esc for `timeoutlen` (1 s) in case a Meta binding (Alt+b, Alt+f, …)
follows. With the menu open that read "Esc, then b" as Alt+b (the cursor jumped a word, the `b`
was lost) and kept the menu up for over a second. The trade taken here:

* While the cursor is in an `@` word (menu open, a lookup running, or already dismissed) Esc is
  an *eager* binding: it closes the menu as soon as it is read and the next key is typed as
  itself. Alt+<letter> shortcuts therefore act as Esc then the letter inside an `@` word. Alt+Enter
  (ESC CR arriving together) still inserts a newline there, so it never sends by surprise.
* The application reads a lone ESC byte as Esc after `ESCAPE_SEQUENCE_WAIT_SECONDS` instead of
  0.5 s (like Vim's `ttimeoutlen`). Terminals write a key's whole sequence at once, so only a link
  that splits one key's bytes by more than that could misread an arrow key.
* Outside an `@` word nothing changes: Esc then a letter within `timeoutlen` is Meta+letter, as in
  readline, and Ctrl+X chords keep their full second.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

from sessionref_tui.mentions import active_mention_token
from sessionref_tui.repl.completer import MentionLookups
from sessionref_tui.repl.transcript import Transcript

ESCAPE_SEQUENCE_WAIT_SECONDS: Final = 0.05
"""How long a lone ESC byte waits for the rest of an escape sequence before it is read as Esc
(the application's `ttimeoutlen`; prompt_toolkit's default is 0.5 s, Neovim's is 0.05 s)."""


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
    """Enter sends (or accepts an open menu), Alt+Enter/Ctrl+J newline, Tab accepts (or, in an `@`
    word whose menu is closed, asks again), Esc dismisses at once (see the module docs), a paste
    never opens the menu, Ctrl+C interrupts (see
    `KeyHost.interrupt`), Ctrl+D on an empty prompt exits."""
    bindings = KeyBindings()

    @Condition
    def menu_open() -> bool:
        state = host.session.default_buffer.complete_state
        return state is not None and bool(state.completions)

    @Condition
    def in_mention_word() -> bool:
        document = host.session.default_buffer.document
        return active_mention_token(document.text, document.cursor_position) is not None

    @Condition
    def prompt_empty() -> bool:
        return not host.session.default_buffer.text

    @bindings.add("enter", filter=menu_open)
    @bindings.add("tab", filter=menu_open)
    def _accept(event: KeyPressEvent) -> None:
        host.accept_completion()

    @bindings.add("tab", filter=~menu_open & in_mention_word)
    def _ask_again(event: KeyPressEvent) -> None:
        host.lookups.ask_again()  # as in the app: Tab in a dismissed `@` word asks again

    @bindings.add("escape", filter=menu_open | in_mention_word, eager=True)
    def _dismiss(event: KeyPressEvent) -> None:
        host.lookups.dismiss()
        waiting = event.app.key_processor.input_queue
        if waiting and waiting[0].key == Keys.ControlM:  # ESC CR read together: the terminal's Alt+Enter
            waiting.popleft()
            event.current_buffer.insert_text("\n")

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
        event.current_buffer.insert_text(event.data.replace("\r\n", "\n").replace("\r", "\n"))
        host.lookups.pasted()  # a paste never opens the menu (the `@` word it ends in counts as dismissed)

    @bindings.add("c-c")
    @bindings.add("<sigint>")
    def _interrupt(event: KeyPressEvent) -> None:
        host.interrupt()

    @bindings.add("c-d", filter=prompt_empty)
    def _eof(event: KeyPressEvent) -> None:
        host.request_exit()

    return bindings
