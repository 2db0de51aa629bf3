"""The shapes of the log events the agent writes (DSH envelope, contract.md §3.1).

The store adds ``seq`` and ``time``; these helpers build ``type``, ``data`` and ``surfaceOp``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

LogEvent = dict[str, Any]
TurnEnd = dict[str, Any]


def turn_start(turn: int) -> LogEvent:
    """``turn/start {turn}``."""
    return {"type": "turn/start", "data": {"turn": turn}}


def turn_end(turn: int, end: TurnEnd) -> LogEvent:
    """``turn/end {turn, reason, ...}``; ``end`` comes from :func:`completed`, :func:`rejected`,
    :func:`cancelled` or :func:`failed`."""
    return {"type": "turn/end", "data": {"turn": turn, **end}}


def step_start(turn: int, step: int) -> LogEvent:
    """``step/start {turn, step}``."""
    return {"type": "step/start", "data": {"turn": turn, "step": step}}


def step_end(turn: int, step: int) -> LogEvent:
    """``step/end {turn, step}``."""
    return {"type": "step/end", "data": {"turn": turn, "step": step}}


def user_message(message: dict[str, Any]) -> LogEvent:
    """A surface ``user/message`` carrying ``message`` verbatim."""
    return {"type": "user/message", "data": message, "surfaceOp": "append"}


def assistant_message(turn: int, step: int, text: str, model: object) -> LogEvent:
    """A surface ``assistant/message`` with one text block, sourced from ``model``."""
    message = {
        "id": str(uuid.uuid4()),
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "source": {
            "kind": "model",
            "provider": getattr(model, "provider", "unknown"),
            "model": getattr(model, "model", "unknown"),
        },
    }
    return {
        "type": "assistant/message",
        "data": {"turn": turn, "step": step, "message": message},
        "surfaceOp": "append",
    }


def completed() -> TurnEnd:
    """The turn ran every step it claimed."""
    return {"reason": "completed"}


def cancelled() -> TurnEnd:
    """The turn was cancelled by the host."""
    return {"reason": "cancelled"}


def rejected(reason: str) -> TurnEnd:
    """A pre-step listener rejected the claimed batch."""
    return {"reason": "rejected", "rejectReason": reason}


def failed(code: str, message: str) -> TurnEnd:
    """The model, a listener or the store failed: a stable ``errorCode`` and a message for people."""
    return {"reason": "error", "error": message, "errorCode": code}


def last_turn_number(events: Iterable[Mapping[str, Any]]) -> int:
    """The highest ``turn`` of any ``turn/start`` in ``events`` (0 for a log without turns)."""
    turns = [
        event["data"]["turn"]
        for event in events
        if event.get("type") == "turn/start"
        and isinstance(event.get("data"), Mapping)
        and isinstance(event["data"].get("turn"), int)
    ]
    return max(turns, default=0)
