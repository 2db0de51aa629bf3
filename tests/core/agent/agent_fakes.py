"""Test doubles for the agent runtime: a scripted, gate-controlled model and log helpers."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


@dataclass
class Reply:
    """One scripted model reply: ``before`` deltas, then (optionally) wait on ``gate``, then
    ``after`` deltas, then raise ``error`` if set. ``reached`` is set when the gate point is hit."""

    before: list[str] = field(default_factory=lambda: ["Hello", " there"])
    after: list[str] = field(default_factory=list)
    gate: asyncio.Event | None = None
    error: Exception | None = None
    reached: asyncio.Event = field(default_factory=asyncio.Event)


class ScriptedModel:
    """A ChatModel whose replies are scripted per call; unscripted calls answer ``ok``."""

    name = "scripted model"
    provider = "test"
    model = "scripted"
    context_window: int | None = 8192

    def __init__(self, *replies: Reply) -> None:
        self.replies: deque[Reply] = deque(replies)
        self.calls: list[list[dict[str, Any]]] = []
        self.summaries: list[list[dict[str, Any]]] = []

    def script(self, reply: Reply) -> Reply:
        """Queue ``reply`` for a later call and return it."""
        self.replies.append(reply)
        return reply

    def hold(self, before: Sequence[str] = ("partial",), after: Sequence[str] = ("rest",)) -> Reply:
        """Queue a reply that blocks after ``before`` until its ``gate`` is set."""
        return self.script(Reply(before=list(before), after=list(after), gate=asyncio.Event()))

    async def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        self.calls.append([dict(message) for message in messages])
        reply = self.replies.popleft() if self.replies else Reply()
        for delta in reply.before:
            yield delta
        reply.reached.set()
        if reply.gate is not None:
            await reply.gate.wait()
        for delta in reply.after:
            yield delta
        if reply.error is not None:
            raise reply.error

    async def summarize(self, messages: list[dict[str, Any]]) -> str:
        self.summaries.append([dict(message) for message in messages])
        return f"summary of {len(messages)} messages"

    async def aclose(self) -> None:
        """Nothing to release."""


class FakeModelError(Exception):
    """Shaped like sessionref.models.ModelError (``code``, ``message``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


SKIPPED_TYPES = frozenset({"assistant/chunk", "session/title"})


def log_order(store: Any, session_id: str) -> list[tuple[str, str | None]]:
    """The session's events as (type, source kind) pairs, chunks and titles left out."""
    _, events = store.read_log(session_id)
    order: list[tuple[str, str | None]] = []
    for event in events:
        if event["type"] in SKIPPED_TYPES:
            continue
        data = event.get("data") or {}
        kind: str | None = None
        if event["type"] == "user/message":
            kind = data["source"]["kind"]
        elif event["type"] == "assistant/message":
            kind = data["message"]["source"]["kind"]
        order.append((event["type"], kind))
    return order


def events_of(store: Any, session_id: str, event_type: str) -> list[dict[str, Any]]:
    """Every raw event of ``event_type`` in the session's log."""
    _, events = store.read_log(session_id)
    return [event for event in events if event["type"] == event_type]


def user_texts(store: Any, session_id: str) -> list[str]:
    """The first text block of every logged user message, in log order."""
    return [event["data"]["content"][0]["text"] for event in events_of(store, session_id, "user/message")]


TURN = [("turn/start", None)]
STEP_END = [("assistant/message", "model"), ("step/end", None)]


class FakeStoreError(Exception):
    """Shaped like sessionref.store.StoreError."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass
class _FakeRecord:
    id: str
    created_at: int
    cwd: str | None = None


class MemoryStore:
    """An in-memory stand-in for SessionStore with the calls the agent makes."""

    def __init__(self) -> None:
        self.logs: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
        self.read_only: set[str] = set()
        self.append_calls = 0
        self._listeners: list[Any] = []
        self._clock = 1_000

    def create_session(
        self, *, cwd: str | None, session_id: str | None = None, created_at: int | None = None
    ) -> _FakeRecord:
        session_id = session_id or f"s{len(self.logs) + 1}"
        header: dict[str, Any] = {"type": "session", "version": 0, "id": session_id}
        header["createdAt"] = created_at if created_at is not None else self._clock
        if cwd is not None:
            header["cwd"] = cwd
        header["delegationDepth"] = 0
        self.logs[session_id] = (header, [])
        return self.record(session_id)

    def _require(self, session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        if session_id not in self.logs:
            raise FakeStoreError("STORE_SESSION_NOT_FOUND", f'session "{session_id}" not found')
        return self.logs[session_id]

    def record(self, session_id: str) -> _FakeRecord:
        header, _ = self._require(session_id)
        return _FakeRecord(session_id, header["createdAt"], header.get("cwd"))

    def header(self, session_id: str) -> dict[str, Any]:
        return dict(self._require(session_id)[0])

    def is_writable(self, session_id: str) -> bool:
        self._require(session_id)
        return session_id not in self.read_only

    def write_refusal(self, session_id: str) -> FakeStoreError | None:
        return None if self.is_writable(session_id) else FakeStoreError("STORE_READ_ONLY", "read-only")

    def on_lane(
        self, session_id: str, call: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
    ) -> asyncio.Future[T]:
        """Runs `call` at once (in call order, like the real writer) and returns a settled future."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        try:
            future.set_result(call(*args, **kwargs))
        except Exception as error:
            future.set_exception(error)
        return future

    def append(self, session_id: str, events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        _, log = self._require(session_id)
        if session_id in self.read_only:
            raise FakeStoreError("STORE_READ_ONLY", "read-only")
        self.append_calls += 1
        written = []
        for event in events:
            self._clock += 1
            full: dict[str, Any] = {"type": event["type"], "seq": len(log), "time": self._clock}
            full["data"] = event["data"]
            for key in ("sourceEventSeqs", "surfaceOp"):
                if key in event:
                    full[key] = event[key]
            log.append(full)
            written.append(full)
        for listener in list(self._listeners):
            listener(session_id, written)
        return written

    def read_log(self, session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        header, log = self._require(session_id)
        return dict(header), [dict(event) for event in log]

    def subscribe(self, listener: Any) -> Any:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _surface_seqs(self, log: list[dict[str, Any]]) -> list[int]:
        seqs: list[int] = []
        for event in log:
            op = event.get("surfaceOp")
            if op == "append":
                seqs.append(event["seq"])
            elif isinstance(op, dict):
                start, end = seqs.index(op["start"]), seqs.index(op["end"])
                seqs[start : end + 1] = [event["seq"]]
        return seqs

    async def read_surface(self, session_id: str) -> dict[str, Any]:
        header, log = self._require(session_id)
        seqs = self._surface_seqs(log)
        return {
            "session": dict(header),
            "capturedThroughSeq": log[-1]["seq"] if log else None,
            "events": [log[seq] for seq in seqs],
        }

    def write_compaction(
        self, session_id: str, summary: str, *, compaction_id: str | None = None
    ) -> dict[str, Any]:
        _, log = self._require(session_id)
        seqs = self._surface_seqs(log)
        source = {"kind": "plugin", "plugin": "compact", "compactionId": compaction_id or "c1"}
        message = {
            "source": source,
            "content": [{"type": "text", "text": summary}],
            "role": "user",
            "id": "cp",
        }
        event = {
            "type": "user/message",
            "data": message,
            "sourceEventSeqs": list(seqs),
            "surfaceOp": {"op": "replace", "start": seqs[0], "end": seqs[-1]},
        }
        return self.append(session_id, [event])[0]

    def delete_session(self, session_id: str) -> None:
        self._require(session_id)
        del self.logs[session_id]
