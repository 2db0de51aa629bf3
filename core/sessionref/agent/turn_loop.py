"""`TurnLoop`: the step loop of one session's agent, the part of `Agent` that runs turns.

One driver task per agent claims from the inbox and runs turns while there is work: each turn is
numbered from the log, framed by ``turn/start`` and ``turn/end``, and made of steps (pre-step
chain, the entered ``user/message`` events, the model's answer). Every turn that ends in an error
is reported to the turn-error listeners. The lifecycle is described in `agent`'s module doc.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Sequence
from typing import Any, Literal

from sessionref.agent import events
from sessionref.agent.errors import AGENT_PRE_STEP_FAILED, AGENT_TURN_FAILED, TurnFailure
from sessionref.agent.events import TurnEnd, last_turn_number
from sessionref.agent.inbox import Inbox
from sessionref.agent.listeners import Listeners
from sessionref.agent.messages import check_user_message
from sessionref.agent.ports import AgentModel, AgentStore, LogEvent
from sessionref.agent.prestep import PreStepChain, PreStepContext, Reject
from sessionref.agent.replies import StoreFailed, answer, describe
from sessionref.agent.waiting import uninterrupted

logger = logging.getLogger("sessionref.agent.agent")

AgentStatus = Literal["idle", "running"]


class TurnLoop:
    """The driver and the turns of an `Agent` (which sets every attribute below in its `__init__`)."""

    id: str
    model: AgentModel
    _store: AgentStore
    _inbox: Inbox
    _chain: PreStepChain
    _discarded: Listeners[[dict[str, Any], str]]
    _entered: Listeners[[list[dict[str, Any]]]]
    _status_changed: Listeners[[str]]
    _turn_failed: Listeners[[TurnFailure]]
    _status: AgentStatus
    _driver: asyncio.Task[None] | None
    _lock: asyncio.Lock
    _last_turn: int | None
    _stop_requested: bool
    _wake_after_stop: bool

    def _step_context(self, batch: list[dict[str, Any]], turn: int, step: int) -> PreStepContext:
        """What the pre-step chain sees of a step (it names the `Agent`, which provides this)."""
        raise NotImplementedError

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
        return asyncio.ensure_future(self._store.on_lane(self.id, self._store.append, self.id, list(batch)))

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
        self._entered.emit([copy.deepcopy(message) for message in entered])
        # A later step of a running turn was started by a steer: say so to the model.
        steered = entered_ids if step > 1 else frozenset()
        return await answer(
            self._store, self.id, self.model, self._queue_write, turn, step, steered_ids=steered
        )
