"""In-memory `SessionQuery` fakes and session builders for the reference-service tests.

`FakeSessions` holds surface snapshots and discovery records as plain dicts,
counts every call, and lets a test make reads fail, hang until released, or run
a hook (e.g. abort a signal) before answering.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sessionref.contract.js_json import json_string_literal
from sessionref.service.protocols import SessionRecord, SurfaceSnapshot


@dataclass
class Agent:
    """The minimal agent the service needs: an id and an optional cwd."""

    id: str
    cwd: str | None = None


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


class SessionBuilder:
    """Appends DSH-shaped events to one session; `snapshot()` folds the surface like session-query."""

    def __init__(self, session_id: str, *, cwd: str | None = None, created_at: int = 0, version: int = 0):
        self.header: dict[str, Any] = {"type": "session", "version": version, "id": session_id}
        self.header["createdAt"] = created_at
        if cwd is not None:
            self.header["cwd"] = cwd
        self.header["delegationDepth"] = 0
        self.events: list[dict[str, Any]] = []

    @property
    def id(self) -> str:
        return self.header["id"]

    def _append(self, event_type: str, data: dict[str, Any], surface_op: Any = "append", **extra: Any) -> int:
        seq = len(self.events)
        event: dict[str, Any] = {"type": event_type, "seq": seq, "time": seq, "data": data}
        event.update(extra)
        if surface_op is not None:
            event["surfaceOp"] = surface_op
        self.events.append(event)
        return seq

    def user(self, *blocks: str | dict[str, Any], source: dict[str, Any] | None = None, **extra: Any) -> int:
        content = [text_block(block) if isinstance(block, str) else block for block in blocks]
        message = {"id": f"u{len(self.events)}", "role": "user", "content": content}
        message["source"] = source if source is not None else {"kind": "user"}
        return self._append("user/message", message, **extra)

    def checkpoint(self, text: str, start: int, end: int) -> int:
        source = {"kind": "plugin", "plugin": "compact", "compactionId": f"k{len(self.events)}"}
        return self.user(
            text,
            source=source,
            surface_op={"op": "replace", "start": start, "end": end},
            sourceEventSeqs=list(range(start, end + 1)),
        )

    def assistant(self, *blocks: str | dict[str, Any]) -> int:
        content = [text_block(block) if isinstance(block, str) else block for block in blocks]
        message = {
            "id": f"a{len(self.events)}",
            "role": "assistant",
            "content": content,
            "source": {"kind": "model", "provider": "mock", "model": "mock"},
        }
        return self._append("assistant/message", {"turn": 1, "step": 1, "message": message})

    def tool_result(self, text: str) -> int:
        message = {
            "id": f"t{len(self.events)}",
            "role": "user",
            "source": {"kind": "tool", "callId": "c"},
            "content": [
                {"type": "tool-result", "toolCallId": "c", "content": [text_block(text)], "isError": False}
            ],
        }
        return self._append("tool/result", {"turn": 1, "step": 1, "message": message})

    def chunk(self, text: str) -> int:
        chunk = {"type": "text-delta", "text": text}
        return self._append("assistant/chunk", {"turn": 1, "step": 1, "chunk": chunk}, surface_op=None)

    def title(self, title: str) -> int:
        data = {"title": title, "messageSeqs": [], "source": {"kind": "fallback"}}
        return self._append("session/title", data, surface_op=None)

    def latest_title(self) -> str | None:
        titles = [event["data"]["title"] for event in self.events if event["type"] == "session/title"]
        return titles[-1] if titles else None

    def snapshot(self) -> SurfaceSnapshot:
        """The current surface: replace ops shadow their inclusive range, log-only events skipped."""
        order: list[int] = []
        for event in self.events:
            op = event.get("surfaceOp")
            if op is None:
                continue
            if op == "append":
                order.append(event["seq"])
                continue
            first, last = order.index(op["start"]), order.index(op["end"])
            order[first : last + 1] = [event["seq"]]
        return {
            "session": copy.deepcopy(self.header),
            "capturedThroughSeq": self.events[-1]["seq"] if self.events else None,
            "events": [copy.deepcopy(self.events[seq]) for seq in order],
        }

    def record(self) -> SessionRecord:
        return SessionRecord(self.id, self.header["createdAt"], self.header.get("cwd"))


def append_conversation(session: SessionBuilder) -> None:
    """The upstream `appendConversation` fixture: projects to 4 items, capturedThroughSeq 13."""
    session.user("old user")
    session.assistant("old assistant")
    session.checkpoint("<compacted-summary>checkpoint</compacted-summary>", 0, 1)
    session.user("recent user")
    session.user("workspace secret", source={"kind": "plugin", "plugin": "workspace"})
    session.user("human steer")
    session.user("plugin steer", source={"kind": "plugin", "plugin": "goal"})
    session.tool_result("tool output")
    session.assistant({"type": "reasoning", "text": "private reasoning"}, "visible answer")
    session.user("plugin-generated user", source={"kind": "plugin", "plugin": "goal"})
    session.user({"type": "reasoning", "text": "empty projected user"})
    session.user({"type": "reasoning", "text": "empty projected steering"})
    session.assistant({"type": "reasoning", "text": "reasoning only"})
    session.chunk("unfinished answer")


def not_found_message(session_id: str) -> str:
    """session-query's wording for an unknown id."""
    return f"session {json_string_literal(session_id)} not found"


@dataclass
class FakeSessions:
    """A `SessionQuery` over in-memory snapshots and records (newest first, as given)."""

    snapshots: dict[str, SurfaceSnapshot] = field(default_factory=dict)
    records: list[SessionRecord] = field(default_factory=list)
    titles: dict[str, str | None] = field(default_factory=dict)
    failures: dict[str, BaseException] = field(default_factory=dict)
    missing_message: Callable[[str], str] = not_found_message
    before_read: Callable[[str], Awaitable[None]] | None = None
    hold_list: asyncio.Event | None = None
    hold_titles: asyncio.Event | None = None
    reads: list[str] = field(default_factory=list)
    list_entered: asyncio.Event = field(default_factory=asyncio.Event)
    titles_entered: asyncio.Event = field(default_factory=asyncio.Event)
    read_entered: asyncio.Event = field(default_factory=asyncio.Event)
    list_calls: int = 0
    title_calls: list[list[str]] = field(default_factory=list)

    @classmethod
    def of(cls, *sessions: SessionBuilder, **options: Any) -> FakeSessions:
        """Snapshots and records of `sessions` (records sorted newest first, ties by id)."""
        fake = cls(**options)
        for session in sessions:
            fake.add(session)
        return fake

    def add(self, session: SessionBuilder) -> None:
        self.snapshots[session.id] = session.snapshot()
        self.records.append(session.record())
        self.records.sort(key=lambda record: (-record.created_at, record.id))
        title = session.latest_title()
        if title is not None:
            self.titles[session.id] = title

    async def list_sessions(self) -> Sequence[SessionRecord]:
        self.list_calls += 1
        self.list_entered.set()
        if self.hold_list is not None:
            await self.hold_list.wait()
        return list(self.records)

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        self.reads.append(session_id)
        self.read_entered.set()
        if self.before_read is not None:
            await self.before_read(session_id)
        if session_id in self.failures:
            raise self.failures[session_id]
        if session_id not in self.snapshots:
            raise LookupError(self.missing_message(session_id))
        return copy.deepcopy(self.snapshots[session_id])

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        self.title_calls.append(list(session_ids))
        self.titles_entered.set()
        if self.hold_titles is not None:
            await self.hold_titles.wait()
        return {session_id: self.titles.get(session_id) for session_id in session_ids}


class FakeSearchSessions(FakeSessions):
    """`FakeSessions` plus a `CandidateSearch` fast path written independently of the service."""

    search_calls: int = 0

    async def search_candidates(
        self, *, exclude_id: str, target_cwd: str | None, needle: str, limit: int
    ) -> Sequence[tuple[SessionRecord, str]]:
        self.search_calls += 1

        def rank(record: SessionRecord) -> int:
            if record.cwd is None:
                return 1
            return 0 if record.cwd == target_cwd else 2

        labelled = [
            (record, self.titles.get(record.id) or record.id)
            for record in self.records
            if record.id != exclude_id
        ]
        hits = [
            (record, label)
            for record, label in labelled
            if not needle or any(needle in field.lower() for field in (record.id, label, record.cwd or ""))
        ]
        hits.sort(key=lambda pair: rank(pair[0]))
        return hits[:limit]
