"""The per-session agent: an inbox, a step loop driving a chat model, and its session log.

Lifecycle of a turn (everything is appended to the session log through the store):

``turn/start`` → claim → pre-step chain → (``Reject``: ``turn/end`` reason ``rejected``) or
``step/start``, one ``user/message`` per entered message, ``assistant/chunk``\\* (batched),
``assistant/message``, ``step/end`` → if next-step items are waiting, another step of the same
turn → ``turn/end`` reason ``completed``. Remaining next-turn items then start new turns.

``turn/end`` data is ``{"turn", "reason"}`` with reason ``completed``, ``rejected`` (plus
``rejectReason``), ``cancelled`` or ``error`` (plus ``error``: a message for people, and
``errorCode``: a stable code such as ``MODEL_AUTH``).

Writes go to the session's ordered writer off the event loop (``store.enqueue_append``): the
step loop awaits the writes that frame a turn, while streamed chunks are sent in batches without
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
import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal

from sessionref.agent import events
from sessionref.agent.errors import (
    AGENT_NO_EVENT_LOOP,
    AGENT_NOTHING_TO_COMPACT,
    AGENT_PRE_STEP_FAILED,
    AGENT_READ_ONLY,
    AGENT_TURN_FAILED,
    AgentError,
    TurnFailure,
)
from sessionref.agent.events import TurnEnd, last_turn_number
from sessionref.agent.inbox import Inbox, InboxList
from sessionref.agent.listeners import Listeners
from sessionref.agent.messages import check_user_message, conversation_from_surface
from sessionref.agent.ports import AgentModel, AgentStore, LogEvent
from sessionref.agent.prestep import PreStepChain, PreStepContext, PreStepListener, Reject
from sessionref.agent.replies import StoreFailed, answer, describe
from sessionref.agent.waiting import uninterrupted
from sessionref.contract.options import Placement

logger = logging.getLogger(__name__)

AgentStatus = Literal["idle", "running"]


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
        self.model = model
        self.placement: Placement = placement
        self.cwd: str | None = store.record(session_id).cwd
        self._inbox = Inbox()
        self._chain = PreStepChain()
        self._discarded: Listeners[[dict[str, Any], str]] = Listeners("discard")
        self._entered: Listeners[[list[dict[str, Any]]]] = Listeners("entered")
        self._status_changed: Listeners[[str]] = Listeners("status")
        self._turn_failed: Listeners[[TurnFailure]] = Listeners("turn error")
        self._status: AgentStatus = "idle"
        self._driver: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._last_turn: int | None = None
        self._stop_requested = False
        self._wake_after_stop = False
        self._writable: bool | None = None

    # -- state -----------------------------------------------------------------------------

    @property
    def status(self) -> AgentStatus:
        """``running`` from the moment a turn is requested until the loop has nothing left to claim."""
        return self._status

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
        self._wake()
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
            self._wake()

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
        task = self._driver
        if task is None or task.done():
            return False
        self._stop_requested = True
        task.cancel()
        if task is not asyncio.current_task():
            await asyncio.wait({task})
        return True

    async def wait_idle(self) -> None:
        """Return once the agent is idle (immediately if it already is)."""
        while self._driver is not None:
            if self._driver.done():
                self._driver_stopped(self._driver)
            else:
                await asyncio.wait({self._driver})

    async def compact(self) -> dict[str, Any]:
        """Summarise the current surface with the model and write it as a compaction checkpoint.

        Waits until no turn is running and keeps turns from starting meanwhile. Returns the
        checkpoint event. Raises AGENT_READ_ONLY, AGENT_NOTHING_TO_COMPACT, or the model's
        ModelError (nothing is written then).
        """
        self.ensure_writable()
        async with self._lock:
            surface = await self._store.read_surface(self.id)
            conversation = conversation_from_surface(surface["events"])
            if not conversation:
                raise AgentError(AGENT_NOTHING_TO_COMPACT, "this session has no messages to compact yet")
            summary = await self.model.summarize(conversation)
            return await uninterrupted(self._store.write_compaction_async(self.id, summary))

    # -- the step loop ---------------------------------------------------------------------

    def _set_status(self, status: AgentStatus) -> None:
        if status != self._status:
            self._status = status
            self._status_changed.emit(status)

    def _wake(self) -> None:
        if self._driver is not None and not self._driver.done():
            if self._stop_requested:
                self._wake_after_stop = True
            return
        self._set_status("running")
        task = asyncio.get_running_loop().create_task(self._drive(), name=f"agent {self.id}")
        self._driver = task
        # Also covers a driver cancelled before it ever ran (its ``finally`` never executes).
        task.add_done_callback(self._driver_stopped)

    async def _drive(self) -> None:
        try:
            async with self._lock:
                while self._inbox.has_work():
                    if not await self._run_turn():
                        break  # the log takes no writes: what is queued waits for the next send
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a bug, not a refused write: still shown, never silent
            logger.exception("agent %s stopped after an unexpected failure", self.id)
            message = f"the reply stopped after an unexpected failure: {describe(error)}"
            self._report(TurnFailure(self.id, self._last_turn, AGENT_TURN_FAILED, message, logged=False))
        finally:
            task = asyncio.current_task()
            if task is not None:
                self._driver_stopped(task)

    def _driver_stopped(self, task: asyncio.Task[None]) -> None:
        """Settle the status once the driver ``task`` has finished (idempotent, any outcome)."""
        if self._driver is not task:
            return
        self._driver = None
        restart = self._wake_after_stop and self._inbox.has_work()
        self._stop_requested = False
        self._wake_after_stop = False
        if restart:
            self._wake()
        else:
            self._set_status("idle")

    def _queue_write(self, batch: Sequence[LogEvent]) -> asyncio.Future[list[LogEvent]]:
        """Queue an append on the session's writer now (its place in the log is fixed here)."""
        return asyncio.ensure_future(self._store.enqueue_append(self.id, list(batch)))

    async def _write(self, batch: Sequence[LogEvent]) -> list[LogEvent]:
        """Append and wait until it has landed (through a cancel); `StoreFailed` if it could not."""
        try:
            return await uninterrupted(self._queue_write(batch))
        except Exception as error:
            raise StoreFailed(error) from error

    async def _next_turn_number(self) -> int:
        if self._last_turn is None:
            try:
                _, logged = await uninterrupted(asyncio.to_thread(self._store.read_log, self.id))
            except Exception as error:
                raise StoreFailed(error) from error
            self._last_turn = last_turn_number(logged)
        self._last_turn += 1
        return self._last_turn

    async def _run_turn(self) -> bool:
        """Run one turn; False when its start or end could not be logged (the driver stops then)."""
        # Claimed before the first await: a message sent to an idle agent leaves the inbox (is no
        # longer "queued") in the same loop turn as the send, as when writes were synchronous.
        batch = self._inbox.claim(turn_boundary=True)
        try:
            turn = await self._next_turn_number()
            await self._write([events.turn_start(turn)])
        except StoreFailed as failure:
            self._last_turn = None  # the turn did not start: its number is read from the log again
            self._discard(batch, "error")  # never logged: the UI gives them back as drafts
            self._report(TurnFailure(self.id, None, failure.code, failure.message, logged=False))
            return False
        end = events.completed()
        step = 0
        try:
            while batch:
                step += 1
                step_end = await self._run_step(turn, step, batch)
                if step_end is not None:
                    end = step_end
                    break
                batch = self._inbox.claim(turn_boundary=False)
        except asyncio.CancelledError:
            await self._end_turn(turn, events.cancelled())
            raise
        except StoreFailed as failure:
            end = failure.turn_end()
        return await self._end_turn(turn, end)

    async def _end_turn(self, turn: int, end: TurnEnd) -> bool:
        """Log ``turn/end``; report an error end (or a ``turn/end`` the log refused) to listeners."""
        logged = True
        try:
            await self._write([events.turn_end(turn, end)])
        except StoreFailed as failure:
            logged = False
            if end.get("reason") != "error":
                end = failure.turn_end()
        if end.get("reason") == "error":
            self._report(TurnFailure(self.id, turn, str(end["errorCode"]), str(end["error"]), logged=logged))
        return logged

    def _report(self, failure: TurnFailure) -> None:
        if not failure.logged:
            logger.warning("session %s: %s: %s (not in the log)", self.id, failure.code, failure.message)
        self._turn_failed.emit(failure)

    def _discard(self, messages: Sequence[dict[str, Any]], reason: str) -> None:
        for message in messages:
            self._discarded.emit(message, reason)

    async def _run_step(self, turn: int, step: int, batch: list[dict[str, Any]]) -> TurnEnd | None:
        """Decide, log and answer one step; returns how the turn ends, or None to go on."""
        context = PreStepContext(agent=self, messages=tuple(batch), turn=turn, step=step)
        try:
            decision = await self._chain.decide(context)
            if isinstance(decision, Reject):
                self._discard(batch, "rejected")
                return events.rejected(decision.reason)
            entered = [copy.deepcopy(check_user_message(message)) for message in decision.messages]
        except asyncio.CancelledError:
            self._discard(batch, "cancelled")
            raise
        except Exception as exc:
            logger.exception("pre-step chain failed in session %s", self.id)
            self._discard(batch, "error")
            return events.failed(AGENT_PRE_STEP_FAILED, f"a pre-step listener failed: {describe(exc)}")
        entered_ids = {message["id"] for message in entered}
        self._discard([message for message in batch if message["id"] not in entered_ids], "dropped")
        if not entered:
            return events.rejected("no message entered the step")
        try:
            await self._write([events.step_start(turn, step), *map(events.user_message, entered)])
        except StoreFailed as failure:
            logger.warning("session %s: the step's messages were not written: %s", self.id, failure.message)
            self._discard(entered, "error")  # not in the log: the UI gives them back as drafts
            return failure.turn_end()
        self._entered.emit([copy.deepcopy(message) for message in entered])
        # A later step of a running turn was started by a steer: say so to the model.
        steered = entered_ids if step > 1 else frozenset()
        return await answer(
            self._store, self.id, self.model, self._queue_write, turn, step, steered_ids=steered
        )
