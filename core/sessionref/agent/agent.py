"""The per-session agent: an inbox, a step loop driving a chat model, and its session log.

Lifecycle of a turn (everything is appended to the session log through the store):

``turn/start`` → claim → pre-step chain → (``Reject``: ``turn/end`` reason ``rejected``) or
``step/start``, one ``user/message`` per entered message, ``assistant/chunk``\\* (batched),
``assistant/message``, ``step/end`` → if next-step items are waiting, another step of the same
turn → ``turn/end`` reason ``completed``. Remaining next-turn items then start new turns.

``turn/end`` data is ``{"turn", "reason"}`` with reason ``completed``, ``rejected`` (plus
``rejectReason``), ``cancelled`` or ``error`` (plus ``error``: a message for people, and
``errorCode``: a stable code such as ``MODEL_AUTH``).

Cancellation: :meth:`Agent.cancel` stops the running turn. Text the model had streamed is kept
as the step's ``assistant/message``; a batch claimed but not yet entered is discarded with reason
``cancelled``. Messages still queued in the inbox stay queued: they are not discarded and do not
start a turn on their own. The next ``followup``/``steer`` (or :meth:`Agent.resume`) claims them.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable, Collection, Sequence
from typing import Any, Literal

from sessionref.agent import events
from sessionref.agent.chunks import ChunkBatcher
from sessionref.agent.errors import (
    AGENT_MODEL_FAILED,
    AGENT_NO_EVENT_LOOP,
    AGENT_NOTHING_TO_COMPACT,
    AGENT_PRE_STEP_FAILED,
    AGENT_READ_ONLY,
    AGENT_STORE_FAILED,
    AgentError,
)
from sessionref.agent.events import TurnEnd, last_turn_number
from sessionref.agent.inbox import Inbox, InboxList
from sessionref.agent.listeners import Listeners
from sessionref.agent.messages import check_user_message, conversation_from_surface
from sessionref.agent.prestep import PreStepChain, PreStepContext, PreStepListener, Reject
from sessionref.contract.options import Placement

logger = logging.getLogger(__name__)

AgentStatus = Literal["idle", "running"]


class Agent:
    """One session's agent. Create and use it inside a running asyncio event loop.

    ``store`` is a :class:`sessionref.store.SessionStore` (``record``, ``is_writable``,
    ``append``, ``read_log``, ``read_surface``, ``write_compaction``); ``model`` a
    :class:`sessionref.models.ChatModel`. ``placement`` is the default snapshot placement used by
    :func:`sessionref.agent.deliver_with_references`. Raises the store's error if the session
    does not exist.
    """

    def __init__(self, store: Any, session_id: str, model: Any, *, placement: Placement = "before") -> None:
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
        # permissions) and offers the next step; a store without that answer gets a generic one.
        refusal = getattr(self._store, "write_refusal", None)
        error = refusal(self.id) if callable(refusal) else None
        message = getattr(error, "message", None)
        if isinstance(message, str) and message:
            return message
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
            return self._store.write_compaction(self.id, summary)

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
                    await self._run_turn()
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("agent %s stopped after a failure it could not log", self.id)
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

    def _log(self, batch: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return self._store.append(self.id, list(batch))

    def _next_turn_number(self) -> int:
        if self._last_turn is None:
            self._last_turn = last_turn_number(self._store.read_log(self.id)[1])
        self._last_turn += 1
        return self._last_turn

    async def _run_turn(self) -> None:
        turn = self._next_turn_number()
        self._log([events.turn_start(turn)])
        end = events.completed()
        step = 0
        try:
            while step == 0 or self._inbox.has_step_items():
                batch = self._inbox.claim(turn_boundary=step == 0)
                if not batch:
                    break
                step += 1
                step_end = await self._run_step(turn, step, batch)
                if step_end is not None:
                    end = step_end
                    break
        except asyncio.CancelledError:
            self._log([events.turn_end(turn, events.cancelled())])
            raise
        self._log([events.turn_end(turn, end)])

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
            return events.failed(AGENT_PRE_STEP_FAILED, f"a pre-step listener failed: {_describe(exc)}")
        entered_ids = {message["id"] for message in entered}
        self._discard([message for message in batch if message["id"] not in entered_ids], "dropped")
        if not entered:
            return events.rejected("no message entered the step")
        try:
            self._log([events.step_start(turn, step), *map(events.user_message, entered)])
        except Exception as exc:
            logger.exception("writing the step's messages failed in session %s", self.id)
            self._discard(entered, "error")
            return events.failed(getattr(exc, "code", AGENT_STORE_FAILED), _describe(exc))
        self._entered.emit([copy.deepcopy(message) for message in entered])
        # A later step of a running turn was started by a steer: say so to the model.
        return await self._answer(turn, step, steered_ids=entered_ids if step > 1 else frozenset())

    async def _answer(self, turn: int, step: int, *, steered_ids: Collection[str] = ()) -> TurnEnd | None:
        """Stream the model's reply into the log and close the step; returns an error end or None."""
        batcher = ChunkBatcher(self._log, turn=turn, step=step)
        parts: list[str] = []
        end: TurnEnd | None = None
        try:
            surface = await self._store.read_surface(self.id)
            stream = self.model.stream(conversation_from_surface(surface["events"], steered_ids=steered_ids))
            try:
                async for delta in stream:
                    if isinstance(delta, str) and delta:
                        parts.append(delta)
                        batcher.add(delta)
            finally:
                close = getattr(stream, "aclose", None)
                if close is not None:
                    await close()
        except asyncio.CancelledError:
            self._close_step(turn, step, batcher, "".join(parts), completed=False)
            raise
        except Exception as exc:
            code = getattr(exc, "code", None)
            if not isinstance(code, str):
                logger.exception("model call failed in session %s", self.id)
                code = AGENT_MODEL_FAILED
            end = events.failed(code, _describe(exc))
        self._close_step(turn, step, batcher, "".join(parts), completed=end is None)
        return end

    def _close_step(self, turn: int, step: int, batcher: ChunkBatcher, text: str, *, completed: bool) -> None:
        """Write the remaining chunks, the assistant message (if anything was said) and ``step/end``."""
        pending = batcher.take_pending()
        if text or completed:
            pending.append(events.assistant_message(turn, step, text, self.model))
        pending.append(events.step_end(turn, step))
        self._log(pending)


def _describe(exc: BaseException) -> str:
    message = getattr(exc, "message", None)
    if isinstance(message, str) and message:
        return message
    return str(exc) or type(exc).__name__
