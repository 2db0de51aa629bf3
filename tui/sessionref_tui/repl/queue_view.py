"""Queued messages in the line mode: each shown once, and every returned one put back into the prompt.

A message sent while a reply runs waits in the agent's inbox until the next step boundary
(`Workspace.queued`). The line mode prints it once, dim, as `queued › …` so it is never invisible,
and the toolbar counts what still waits. When messages come back instead of reaching the model
(Ctrl+C stops the reply and returns every queued message; the agent drops one for another
reason), the `Workspace.on_drafts_returned` listener hands their drafts back: into the prompt for
the session on screen (before what is being typed, `merge_returned_drafts`), or kept for another
session until the user switches to it. Either way a notice says where they are.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from sessionref.host.workspace import ReturnedDraft

from sessionref_tui.display import inert, truncate_end
from sessionref_tui.repl.transcript import Transcript
from sessionref_tui.returned_drafts import KeptDrafts

if TYPE_CHECKING:
    from sessionref.agent import Agent
    from sessionref.host.workspace import DraftSession, Workspace

logger = logging.getLogger(__name__)

QUEUED_PREFIX: Final = "queued › "
"""What starts the dim line that shows a message waiting in the inbox."""


def returned_notice(drafts: Sequence[ReturnedDraft], where: str) -> str:
    """ "2 queued messages are back in the prompt", or why they were not delivered when not stopped."""
    count = len(drafts)
    noun = "queued message is" if count == 1 else "queued messages are"
    reasons = sorted({draft.reason for draft in drafts if draft.reason != "cancelled"})
    if not reasons:
        return f"{count} {noun} back in {where}"
    return f"{count} {noun} back in {where} (not delivered: {inert(', '.join(reasons))})"


class QueueView:
    """Prints the current session's queued messages once each and routes returned drafts.

    `current()` is the session on screen; `into_prompt(drafts)` puts drafts back into the prompt
    (before what is being typed); `name_of(session_id)` names another session in a notice.
    """

    def __init__(
        self,
        workspace: Workspace,
        transcript: Transcript,
        *,
        current: Callable[[], Agent | DraftSession],
        into_prompt: Callable[[list[str]], None],
        name_of: Callable[[str], str],
    ) -> None:
        self._workspace = workspace
        self._transcript = transcript
        self._current = current
        self._into_prompt = into_prompt
        self._name_of = name_of
        self._shown: set[str] = set()
        self._kept = KeptDrafts()
        self._check_scheduled = False
        self._unsubscribe: list[Callable[[], None]] = []

    def attach(self) -> None:
        """Listen to the workspace (call inside the running event loop)."""
        self._unsubscribe = [
            self._workspace.on_queue_change(self._queue_changed),
            self._workspace.on_drafts_returned(self._drafts_returned),
        ]

    def detach(self) -> None:
        """Stop listening."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []

    @property
    def count(self) -> int:
        """How many direct messages of the current session wait in its inbox (snapshots not counted)."""
        return len(self._workspace.queued(self._current()))

    def take_kept(self, session_id: str) -> list[str]:
        """The drafts that came back for `session_id` while another session was on screen (then forgotten)."""
        return [draft.draft for draft in self._kept.take(session_id)]

    def show_new(self) -> None:
        """Print each queued message of the current session that has not been shown yet."""
        waiting = self._workspace.queued(self._current())
        self._shown &= {message.message_id for message in waiting}
        width = max(self._transcript.columns() - len(QUEUED_PREFIX) - 1, 8)
        for message in waiting:
            if message.message_id in self._shown:
                continue
            self._shown.add(message.message_id)
            preview = truncate_end(inert(" ".join(message.text.split())), width)
            self._transcript.print([("class:queued", QUEUED_PREFIX), ("class:queued.text", preview)])

    def _queue_changed(self, session_id: str) -> None:
        # A message sent to an idle agent is in the inbox only until the agent's task, created by
        # that same send, claims it on its first run. Looking one loop turn later shows only what
        # really waits for a step boundary (asyncio runs callbacks in the order they were scheduled).
        if session_id != self._current().id or self._check_scheduled:
            return
        self._check_scheduled = True
        asyncio.get_running_loop().call_soon(self._scheduled_check)

    def _scheduled_check(self) -> None:
        self._check_scheduled = False
        try:
            self.show_new()
        except Exception:  # showing must never break the agent or the send that changed the queue
            logger.exception("the line mode could not show queued messages")

    def _drafts_returned(self, session_id: str, drafts: Sequence[ReturnedDraft]) -> None:
        try:
            if session_id == self._current().id:
                self._into_prompt([draft.draft for draft in drafts])
                self._transcript.notice(returned_notice(drafts, "the prompt"))
            else:
                self._kept.keep(session_id, drafts)
                where = f"the prompt of “{inert(self._name_of(session_id))}” (/switch to it)"
                self._transcript.notice(returned_notice(drafts, where))
        except Exception:  # the drafts are still in the history; never break the agent's discard path
            logger.exception("the line mode could not put returned drafts back")
