"""The per-session agent: an inbox, a step loop driving a chat model, and its session log.

Lifecycle of a turn (everything is appended to the session log through the store):

``turn/start`` → claim → pre-step chain → (``Reject``: ``turn/end`` reason ``rejected``) or
``step/start``, one ``user/message`` per entered message, ``assistant/chunk``\\* (batched),
``assistant/message``, ``step/end`` → if next-step items are waiting, another step of the same
turn → ``turn/end`` reason ``completed``. Remaining next-turn items then start new turns.

``turn/end`` data is ``{"turn", "reason"}`` with reason ``completed``, ``rejected`` (plus
``rejectReason``), ``cancelled`` or ``error`` (plus ``error``: a message for people, and
``errorCode``: a stable code such as ``MODEL_AUTH``).

The agent is its state, the sending calls, the listeners and the controls; its turns are run by
a `TurnRunner` it owns (``turns``), and its writes and the surface it keeps go through a
`SessionLog` (``session_log``): a step builds the model's request from that kept surface, not
from a re-read of the log.

Writes go to the session's ordered writer off the event loop (``store.on_lane``): the
turn runner awaits the writes that frame a turn, while streamed chunks are sent in batches without
waiting (see ``chunks``). A write that fails (``STORE_LOCK_TIMEOUT``, a full disk) ends the turn
with the store's code in ``turn/end``; every turn that ends in an error is also reported to
:meth:`Agent.on_turn_error` listeners, with ``logged=False`` when not even ``turn/end`` could be
written, so a UI can always show it.

Cancellation: :meth:`Agent.cancel` stops the running turn. Text the model had streamed is kept
as the step's ``assistant/message``; a batch claimed but not yet entered is discarded with reason
``cancelled``. Messages still queued in the inbox stay queued: they are not discarded and do not
start a turn on their own. The next ``followup``/``steer`` (or :meth:`Agent.resume`) claims them.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from typing import Any

from sessionref.agent.errors import (
    AGENT_NO_EVENT_LOOP,
    AGENT_NOTHING_TO_COMPACT,
    AGENT_READ_ONLY,
    AgentError,
    TurnFailure,
)
from sessionref.agent.inbox import Inbox, InboxList
from sessionref.agent.listeners import Listeners
from sessionref.agent.messages import check_user_message, conversation_from_surface
from sessionref.agent.ports import AgentModel, AgentStore
from sessionref.agent.prestep import PreStepChain, PreStepContext, PreStepListener
from sessionref.agent.session_log import SessionLog
from sessionref.agent.turns import AgentStatus, TurnListeners, TurnRunner
from sessionref.contract.options import Placement

__all__ = ["Agent", "AgentStatus"]


class Agent:
    """One session's agent. Create and use it inside a running asyncio event loop.

    ``store`` is an :class:`~sessionref.agent.ports.AgentStore` (the embedded
    :class:`sessionref.store.SessionStore`); ``model`` an :class:`~sessionref.agent.ports.AgentModel`
    (a :class:`sessionref.models.ChatModel`). ``placement`` is the default snapshot placement used by
    :func:`sessionref.agent.deliver_with_references`. Raises the store's error if the session
    does not exist.
    """

    def __init__(
        self, store: AgentStore, session_id: str, model: AgentModel, *, placement: Placement = "before"
    ) -> None:
        if placement not in ("before", "after"):
            raise ValueError('placement must be "before" or "after"')
        self._store = store
        self.id = session_id
        self.placement: Placement = placement
        self.cwd: str | None = store.record(session_id).cwd
        self._inbox = Inbox()
        self._chain = PreStepChain()
        self._discarded: Listeners[[dict[str, Any], str]] = Listeners("discard")
        self._entered: Listeners[[list[dict[str, Any]]]] = Listeners("entered")
        self._status_changed: Listeners[[str]] = Listeners("status")
        self._turn_failed: Listeners[[TurnFailure]] = Listeners("turn error")
        self._status: AgentStatus = "idle"
        self._lock = asyncio.Lock()
        self._writable: bool | None = None
        self._log = SessionLog(store, session_id)
        self._turns = TurnRunner(
            self._log,
            model,
            inbox=self._inbox,
            chain=self._chain,
            listeners=TurnListeners(self._discarded, self._entered, self._turn_failed),
            step_context=self._step_context,
            on_status=self._set_status,
            lock=self._lock,
        )

    # -- state -----------------------------------------------------------------------------

    @property
    def model(self) -> AgentModel:
        """The chat model that answers this session's turns."""
        return self._turns.model

    @property
    def status(self) -> AgentStatus:
        """``running`` from the moment a turn is requested until the loop has nothing left to claim."""
        return self._status

    def _set_status(self, status: AgentStatus) -> None:
        if status != self._status:
            self._status = status
            self._status_changed.emit(status)

    @property
    def writable(self) -> bool:
        """False for sessions the store can only read (DSH's sessions, ``.zstd`` logs, read-only files)."""
        if self._writable is None:
            self._writable = bool(self._store.is_writable(self.id))
        return self._writable

    def ensure_writable(self) -> None:
        """Raise AGENT_READ_ONLY if this session cannot be written; the message says why and what to do."""
        if not self.writable:
            raise AgentError(AGENT_READ_ONLY, self._read_only_message())

    def _read_only_message(self) -> str:
        # The store says why (a compressed DSH log, a session another program writes, file
        # permissions) and offers the next step; without an answer the message is a generic one.
        error = self._store.write_refusal(self.id)
        if error is not None and error.message:
            return error.message
        return (
            f"session {self.id!r} is read-only; start a new session and mention it with @ to continue from it"
        )

    def pending(self) -> list[dict[str, Any]]:
        """Copies of the queued messages, in the order a fresh turn would claim them."""
        return [copy.deepcopy(message) for _, message in self._inbox.pending()]

    def listener_counts(self) -> dict[str, int]:
        """How many pre-step, discard, entered and status listeners are registered (for leak checks)."""
        return {
            "pre_step": len(self._chain),
            "discard": len(self._discarded),
            "entered": len(self._entered),
            "status": len(self._status_changed),
            "turn_error": len(self._turn_failed),
        }

    # -- sending ---------------------------------------------------------------------------

    def followup(self, message: dict[str, Any]) -> None:
        """Queue ``message`` on next-turn: it becomes the ordinary message of its own turn.

        Starts a turn when idle. Raises AgentError (nothing queued) for a read-only session or a
        malformed message. The message is copied; the caller's dict is never mutated.
        """
        self._enqueue("next-turn", message, wake=True)

    def steer(self, message: dict[str, Any]) -> None:
        """Queue ``message`` on next-step: a running turn takes it at its next step; idle starts a turn."""
        self._enqueue("next-step", message, wake=True)

    def inject(self, message: dict[str, Any]) -> None:
        """Queue ``message`` on next-step without waking: it rides along with the next claim."""
        self._enqueue("next-step", message, wake=False)

    def resume(self) -> bool:
        """Start a turn for already-queued messages (e.g. after a cancel); False if nothing is queued."""
        if not self._inbox.has_work():
            return False
        self._turns.wake()
        return True

    def discard_pending(self, message_id: str, *, reason: str = "removed") -> bool:
        """Remove a queued message and notify discard listeners; False if it is not queued."""
        message = self._inbox.remove(message_id)
        if message is None:
            return False
        self._discarded.emit(message, reason)
        return True

    def _enqueue(self, target: InboxList, message: dict[str, Any], *, wake: bool) -> None:
        self.ensure_writable()
        check_user_message(message)
        if wake:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                raise AgentError(
                    AGENT_NO_EVENT_LOOP, "the agent must be used inside a running event loop"
                ) from None
        self._inbox.push(target, copy.deepcopy(message))
        if wake:
            self._turns.wake()

    # -- listeners -------------------------------------------------------------------------

    def add_pre_step(
        self, listener: PreStepListener, *, prepend: bool = False, once: bool = False
    ) -> Callable[[], None]:
        """Register a pre-step listener (``prepend``: outermost); returns its remover."""
        return self._chain.add(listener, prepend=prepend, once=once)

    def on_discard(self, callback: Callable[[dict[str, Any], str], object]) -> Callable[[], None]:
        """Call ``callback(message, reason)`` for every message dropped without being logged.

        Reasons: ``rejected`` (a pre-step listener rejected its batch), ``cancelled`` (claimed,
        then the turn was cancelled), ``dropped`` (a listener's Enter left it out), ``error`` (a
        listener or the store failed), ``removed`` (:meth:`discard_pending`).
        """
        return self._discarded.add(callback)

    def on_entered(self, callback: Callable[[list[dict[str, Any]]], object]) -> Callable[[], None]:
        """Call ``callback(messages)`` after a step's messages were written as ``user/message`` events."""
        return self._entered.add(callback)

    def on_status(self, callback: Callable[[str], object]) -> Callable[[], None]:
        """Call ``callback(status)`` whenever the status changes between ``idle`` and ``running``."""
        return self._status_changed.add(callback)

    def on_turn_error(self, callback: Callable[[TurnFailure], object]) -> Callable[[], None]:
        """Call ``callback(failure)`` when a turn ends in an error (the model, a listener or the store).

        ``failure.logged`` is False when the log could not record it (e.g. ``STORE_LOCK_TIMEOUT``
        on ``turn/end``): then this call is the only place the error shows up.
        """
        return self._turn_failed.add(callback)

    # -- control ---------------------------------------------------------------------------

    async def cancel(self) -> bool:
        """Cancel the running turn and wait until it has been closed in the log.

        Returns False when nothing was running. Queued messages stay queued (see module docs).
        """
        return await self._turns.cancel()

    async def wait_idle(self) -> None:
        """Return once the agent is idle (immediately if it already is)."""
        await self._turns.wait_idle()

    async def compact(self) -> dict[str, Any]:
        """Summarise the current surface with the model and write it as a compaction checkpoint.

        Waits until no turn is running and keeps turns from starting meanwhile. Returns the
        checkpoint event. Raises AGENT_READ_ONLY, AGENT_NOTHING_TO_COMPACT, or the model's
        ModelError (nothing is written then).
        """
        self.ensure_writable()
        async with self._lock:
            conversation = conversation_from_surface(await self._log.surface_events())
            if not conversation:
                raise AgentError(AGENT_NOTHING_TO_COMPACT, "this session has no messages to compact yet")
            summary = await self.model.summarize(conversation)
            return await self._log.write_compaction(summary)

    def _step_context(self, batch: list[dict[str, Any]], turn: int, step: int) -> PreStepContext:
        return PreStepContext(agent=self, messages=tuple(batch), turn=turn, step=step)
