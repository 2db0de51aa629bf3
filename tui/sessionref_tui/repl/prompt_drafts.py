"""Drafts that go back into the line mode's prompt, so nothing typed is lost.

Two kinds come back: a message whose send failed before anything was queued (a bad mention, a
cancelled prepare), and messages that were queued and then returned (Ctrl+C, or the agent
dropped them). A failed send goes back only into an empty prompt (else the notice points to the
history, where every sent line also is); returned messages go before what is being typed
(`merge_returned_drafts`). Between two prompts (while a command runs) they wait and are put in
when the next prompt starts. A draft put back behaves like a paste: a draft that ends in an `@`
word does not open the session menu (`loaded`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.document import Document
from sessionref.host.workspace import merge_returned_drafts

from sessionref_tui.repl.transcript import Transcript


class PromptDrafts:
    """Puts drafts into `session`'s prompt now, or when its next prompt starts (`apply_pending`)."""

    def __init__(
        self,
        session: PromptSession[Any],
        transcript: Transcript,
        invalidate: Callable[[], None],
        *,
        loaded: Callable[[], None] = lambda: None,
    ) -> None:
        self._session = session
        self._transcript = transcript
        self._invalidate = invalidate
        self._loaded = loaded
        """Called right after a draft was put into the prompt (the `@` menu treats it as a paste)."""
        self._pending: list[str] = []
        self._returned_text: str | None = None
        """The prompt's text right after returned messages were put in (until it is edited or taken)."""

    def restore_failed(self, text: str) -> None:
        """After a failed send: put `text` back into an empty prompt, else say where the draft is."""
        buffer = self._session.default_buffer
        if not self._session.app.is_running:
            self._pending.append(text)
        elif buffer.text:
            self._transcript.notice("your draft is in the history (↑) — the prompt already holds new text")
        else:
            buffer.document = Document(text, len(text))
            self._loaded()
            self._invalidate()

    def put_back(self, drafts: list[str]) -> None:
        """Put returned `drafts` into the prompt, before what is being typed; the cursor stays put."""
        if not self._session.app.is_running:
            self._pending.extend(drafts)
            return
        buffer = self._session.default_buffer
        current = buffer.document
        merged = merge_returned_drafts(drafts, current.text)
        if current.text.strip():
            cursor = len(merged) - len(current.text) + current.cursor_position
        else:
            cursor = len(merged)
        buffer.document = Document(merged, cursor)
        self._returned_text = merged
        self._loaded()
        self._invalidate()

    def start_with(self, text: str) -> None:
        """Put `text` at the start of the prompt (now, or when the next prompt starts), before
        anything typed: a new session's first words (`/continue`)."""
        self.put_back([text])
        self._returned_text = None

    def holds_returned(self) -> bool:
        """Whether the prompt still holds exactly what it held when returned messages were put in:
        a Ctrl+C meant for the stopped reply must not wipe them (`take_returned` once warned)."""
        return self._returned_text is not None and self._session.default_buffer.text == self._returned_text

    def take_returned(self) -> None:
        """Forget that the prompt holds returned messages (the user was told; the next Ctrl+C clears)."""
        self._returned_text = None

    def apply_pending(self) -> None:
        """Put in what came back between two prompts (the `pre_run` of each prompt)."""
        drafts, self._pending = self._pending, []
        if drafts:
            self.put_back(drafts)
