"""`SessionFeed`: the current session's log events, printed above the prompt as they are appended.

The store calls its subscribers in whichever thread wrote (or on the loop that subscribed);
the feed always shows events on the line mode's loop, only those of the session the prompt
sends to, and passes a changed title on. `replay_recent` prints a session's last messages when
the line mode switches to it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sessionref.agent import Agent
from sessionref.contract.errors import describe_error
from sessionref.host.workspace import DraftSession

from sessionref_tui.event_view import skipped_lines_notice
from sessionref_tui.repl.transcript import Transcript

if TYPE_CHECKING:
    from sessionref.host.workspace import Workspace

logger = logging.getLogger(__name__)

TITLE_EVENTS = ("session/title", "user/message")
"""Events after which a session's title is looked up again (a first message gives a fallback title)."""


class SessionFeed:
    """Follows the store for the line mode (see the module doc).

    `current()` is the session the prompt sends to; `retitled(title)` is called with its title
    when an event may have changed it.
    """

    def __init__(
        self,
        workspace: Workspace,
        transcript: Transcript,
        *,
        current: Callable[[], Agent | DraftSession],
        retitled: Callable[[str | None], None],
    ) -> None:
        self._workspace = workspace
        self._transcript = transcript
        self._current = current
        self._retitled = retitled
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._unsubscribe: Callable[[], None] | None = None

    def attach(self) -> None:
        """Subscribe to the store's appends; call it on the line mode's running loop."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._unsubscribe = self._workspace.on_log_appended(self._on_store_events)

    def detach(self) -> None:
        """Stop following the store (nothing is shown afterwards)."""
        if self._unsubscribe is not None:
            self._unsubscribe()

    def _on_store_events(self, session_id: str, events: list[dict[str, Any]]) -> None:
        loop = self._loop
        if loop is None:
            return
        if threading.get_ident() == self._loop_thread:
            self._show_store_events(session_id, events)
        else:
            loop.call_soon_threadsafe(self._show_store_events, session_id, events)

    def _show_store_events(self, session_id: str, events: Sequence[Mapping[str, Any]]) -> None:
        if session_id != self._current().id:
            return
        try:
            if any(event.get("type") in TITLE_EVENTS for event in events):
                self._retitled(self._workspace.title(session_id))  # index lookup: fallback titles too
            self._transcript.show_events(events)
        except Exception as error:  # showing an event must never break the writer that appended it
            logger.exception("the line mode could not show new events")
            self._transcript.error(*describe_error(error, self._workspace.error_log))

    def replay_recent(self, session_id: str, limit: int = 6) -> None:
        """Print the last `limit` messages of `session_id` (and how many earlier ones there are)."""
        try:
            report = self._workspace.read_log(session_id)
        except Exception as error:
            self._transcript.error(*describe_error(error, self._workspace.error_log))
            return
        if (skipped := skipped_lines_notice(report.skipped_lines)) is not None:
            self._transcript.notice(skipped)
        messages = [e for e in report.events if e.get("type") in ("user/message", "assistant/message")]
        if len(messages) > limit:
            self._transcript.notice(f"… {len(messages) - limit} earlier messages (/log lists every event)")
        self._transcript.show_events(messages[-limit:])
