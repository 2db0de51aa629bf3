"""One step's reply: stream the model into the log in batches, then close the step.

Used by the agent's turn runner. The model is called with the conversation of the surface the
`SessionLog` keeps (no re-read of the log it has just written). Every write goes through
`queue_write` (`SessionLog.queue_append`), which queues an append on the session's ordered writer
at once (nothing reorders) and returns a future; a failed write becomes `StoreFailed`, which ends
the turn with the store's code.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Collection, Sequence

from sessionref.agent import events
from sessionref.agent.chunks import ChunkBatcher
from sessionref.agent.errors import AGENT_MODEL_FAILED, AGENT_STORE_FAILED
from sessionref.agent.events import TurnEnd
from sessionref.agent.messages import conversation_from_surface
from sessionref.agent.ports import AgentModel, LogEvent
from sessionref.agent.session_log import SessionLog
from sessionref.agent.waiting import landed

logger = logging.getLogger("sessionref.agent.agent")

QueueWrite = Callable[[Sequence[LogEvent]], "asyncio.Future[list[LogEvent]]"]
"""Queue one append on the session's writer now; the future settles once it has landed."""


def describe(error: BaseException) -> str:
    """A sentence for people: a coded error's message, else the exception's text or type."""
    message = getattr(error, "message", None)
    if isinstance(message, str) and message:
        return message
    return str(error) or type(error).__name__


class StoreFailed(Exception):
    """A read or write of the session's log failed; the turn ends with the store's code."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(describe(error))
        self.error = error
        code = getattr(error, "code", None)
        self.code: str = code if isinstance(code, str) and code else AGENT_STORE_FAILED
        self.message = describe(error)

    def turn_end(self) -> TurnEnd:
        """The ``turn/end`` data of a turn this failure stops."""
        return events.failed(self.code, self.message)


async def answer(
    log: SessionLog,
    model: AgentModel,
    turn: int,
    step: int,
    *,
    steered_ids: Collection[str] = (),
) -> TurnEnd | None:
    """Stream the model's reply into the log and close the step; returns an error end or None.

    A model failure ends the turn with the model's code (the step is closed first). A write that
    fails stops the stream; the step is still closed if the log takes it, then `StoreFailed` is
    raised. A cancel closes the step with what was streamed and propagates.
    """
    queue_write: QueueWrite = log.queue_append
    batcher = ChunkBatcher(queue_write, turn=turn, step=step)
    parts: list[str] = []
    end: TurnEnd | None = None
    write_failure: StoreFailed | None = None
    try:
        surface = await log.surface_events()
        stream = model.stream(conversation_from_surface(surface, steered_ids=steered_ids))
        try:
            async for delta in stream:
                if isinstance(delta, str) and delta:
                    parts.append(delta)
                    batcher.add(delta)
                    await _keep_up(batcher)
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
    except asyncio.CancelledError:
        with contextlib.suppress(StoreFailed):  # the turn's end reports a log that refuses writes
            await close_step(queue_write, model, batcher, turn, step, "".join(parts), completed=False)
        raise
    except StoreFailed as failure:
        write_failure = failure
    except Exception as exc:
        code = getattr(exc, "code", None)
        if not isinstance(code, str):
            logger.exception("model call failed in session %s", log.session_id)
            code = AGENT_MODEL_FAILED
        end = events.failed(code, describe(exc))
    completed = end is None and write_failure is None
    try:
        await close_step(queue_write, model, batcher, turn, step, "".join(parts), completed=completed)
    except StoreFailed as failure:
        raise (write_failure or failure) from None
    if write_failure is not None:
        raise write_failure
    return end


async def close_step(
    queue_write: QueueWrite,
    model: AgentModel,
    batcher: ChunkBatcher,
    turn: int,
    step: int,
    text: str,
    *,
    completed: bool,
) -> None:
    """Write the unsent chunks, the assistant message (if anything was said) and ``step/end``.

    Queued behind the chunk batches still in flight; `StoreFailed` names the first that failed.
    """
    pending = batcher.take_pending()
    if text or completed:
        pending.append(events.assistant_message(turn, step, text, model))
    pending.append(events.step_end(turn, step))
    final = queue_write(pending)
    first: BaseException | None = None
    try:
        await batcher.settle()
    except Exception as error:
        first = error
    await landed(final)
    if first is None and not final.cancelled():
        first = final.exception()
    if first is not None:
        raise StoreFailed(first) from first


async def _keep_up(batcher: ChunkBatcher) -> None:
    try:
        await batcher.keep_up()
    except Exception as error:
        raise StoreFailed(error) from error
