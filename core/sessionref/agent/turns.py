"""`TurnRunner`: the driver task of one session's agent and the turns and steps it runs.

The `Agent` owns one runner and hands it what it needs at construction. One driver task claims
from the inbox and runs turns while there is work: each turn is numbered from the log, framed by
``turn/start`` and ``turn/end``, and made of steps (pre-step chain, the entered ``user/message``
events, the model's answer). Every turn that ends in an error is reported to the turn-error
listeners. The lifecycle is described in `agent`'s module doc.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sessionref.agent import events
from sessionref.agent.errors import AGENT_PRE_STEP_FAILED, AGENT_TURN_FAILED, TurnFailure
from sessionref.agent.events import TurnEnd
from sessionref.agent.inbox import Inbox
from sessionref.agent.listeners import Listeners
from sessionref.agent.messages import check_user_message
from sessionref.agent.ports import AgentModel, LogEvent
from sessionref.agent.prestep import PreStepChain, PreStepContext, Reject
from sessionref.agent.replies import StoreFailed, answer, describe
from sessionref.agent.session_log import SessionLog
from sessionref.agent.waiting import uninterrupted

logger = logging.getLogger("sessionref.agent.agent")

AgentStatus = Literal["idle", "running"]

StepContext = Callable[[list[dict[str, Any]], int, int], PreStepContext]
"""Build what the pre-step chain sees of a step from its batch, turn and step numbers."""


@dataclass(frozen=True, slots=True)
class TurnListeners:
    """Who hears what the turns do: messages discarded or entered, and turns that failed."""

    discarded: Listeners[[dict[str, Any], str]]
    entered: Listeners[[list[dict[str, Any]]]]
    failed: Listeners[[TurnFailure]]


class TurnRunner:
    """Runs an agent's turns on one driver task: started by `wake`, stopped by `cancel`.

    ``lock`` is held while the driver runs (the agent holds it to keep turns from starting);
    ``on_status`` hears ``running`` when a driver starts and ``idle`` once it has stopped.
    """

    def __init__(
        self,
        log: SessionLog,
        model: AgentModel,
        *,
        inbox: Inbox,
        chain: PreStepChain,
        listeners: TurnListeners,
        step_context: StepContext,
        on_status: Callable[[AgentStatus], None],
        lock: asyncio.Lock,
    ) -> None:
        self.model = model
        self._log = log
        self._inbox = inbox
        self._chain = chain
        self._listeners = listeners
        self._step_context = step_context
        self._on_status = on_status
        self._lock = lock
        self._driver: asyncio.Task[None] | None = None
        self._last_turn: int | None = None
        self._stop_requested = False
        self._wake_after_stop = False

    @property
    def id(self) -> str:
        """The session's id."""
        return self._log.session_id

    # -- the driver ------------------------------------------------------------------------

    def wake(self) -> None:
        """Start a driver for the queued work unless one runs (after a cancel: once it stopped)."""
        if self._driver is not None and not self._driver.done():
            if self._stop_requested:
                self._wake_after_stop = True
            return
        self._on_status("running")
        task = asyncio.get_running_loop().create_task(self._drive(), name=f"agent {self.id}")
        self._driver = task
        # Also covers a driver cancelled before it ever ran (its ``finally`` never executes).
        task.add_done_callback(self._driver_stopped)

    async def cancel(self) -> bool:
        """Cancel the running driver and wait until its turn was closed; False if none ran."""
        task = self._driver
        if task is None or task.done():
            return False
        self._stop_requested = True
        task.cancel()
        if task is not asyncio.current_task():
            await asyncio.wait({task})
        return True

    async def wait_idle(self) -> None:
        """Return once no driver runs (immediately if none does)."""
        while self._driver is not None:
            if self._driver.done():
                self._driver_stopped(self._driver)
            else:
                await asyncio.wait({self._driver})

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
            self.wake()
        else:
            self._on_status("idle")

    async def _write(self, batch: Sequence[LogEvent]) -> list[LogEvent]:
        """Append and wait until it has landed (through a cancel); `StoreFailed` if it could not."""
        try:
            return await uninterrupted(self._log.queue_append(batch))
        except Exception as error:
            raise StoreFailed(error) from error

    async def _run_turn(self) -> bool:
        """Run one turn; False when its start or end could not be logged (the driver stops then)."""
        # Claimed before the first await: a message sent to an idle agent leaves the inbox (is no
        # longer "queued") in the same loop turn as the send, as when writes were synchronous.
        batch = self._inbox.claim(turn_boundary=True)
        try:
            try:
                turn = self._last_turn = await self._log.next_turn_number()
            except Exception as error:
                raise StoreFailed(error) from error
            await self._write([events.turn_start(turn)])
        except StoreFailed as failure:
            self._log.turn_not_started()  # its number is read from the log again
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
        self._listeners.failed.emit(failure)

    def _discard(self, messages: Sequence[dict[str, Any]], reason: str) -> None:
        for message in messages:
            self._listeners.discarded.emit(message, reason)

    async def _run_step(self, turn: int, step: int, batch: list[dict[str, Any]]) -> TurnEnd | None:
        """Decide, log and answer one step; returns how the turn ends, or None to go on."""
        context = self._step_context(batch, turn, step)
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
        self._listeners.entered.emit([copy.deepcopy(message) for message in entered])
        # A later step of a running turn was started by a steer: say so to the model.
        steered = entered_ids if step > 1 else frozenset()
        return await answer(self._log, self.model, turn, step, steered_ids=steered)
