"""Random DSH session logs for the conversation search tests (hypothesis strategies).

A log is built from actions: direct and injected user messages, assistant messages with text,
reasoning and tool-call blocks, tool results, log-only events, packed chunk rows and
compactions that replace a random range of the current surface with a checkpoint.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

WORDS = [
    "migration",
    "pg_dump",
    "retry",
    "budget",
    "the",
    "flag",
    "Zürich",
    "café",
    "数据库迁移",
    "用pg_dump",
    "NEAR(",
    "AND",
    "OR",
    "NOT",
    '"quoted"',
    "a*",
    "-minus",
    "^caret",
    "col:on",
    "(paren",
    "\x1b[31m",
    "\u202eevil",
    "[bold]x[/]",
    "ß",
    "ÉCOLE",
    "naïve",
    "\n",
    "  ",
    "",
]
TEXT = st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join) | st.text(max_size=30)
HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}


@dataclass
class LogBuilder:
    """Events of one log under construction, with its current surface (for valid replaces)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    packed: dict[int, dict[str, Any]] = field(default_factory=dict)  # event index -> packed row
    surface: list[int] = field(default_factory=list)
    seq: int = 0

    def add(self, kind: str, data: dict[str, Any], op: Any = None, sources: list[int] | None = None) -> int:
        event: dict[str, Any] = {"type": kind, "seq": self.seq, "time": 1000 + self.seq, "data": data}
        if sources is not None:
            event["sourceEventSeqs"] = sources
        if op is not None:
            event["surfaceOp"] = op
        self.events.append(event)
        self.seq += 1
        return event["seq"]

    def surface_event(self, kind: str, data: dict[str, Any]) -> None:
        self.surface.append(self.add(kind, data, "append"))

    def packed_row(self, count: int) -> None:
        row = {
            "type": "text-chunks",
            "seq0": self.seq,
            "time0": 1000 + self.seq,
            "data": {"turn": 1, "step": 1, "index": 0, "dt": [1] * (count - 1), "texts": ["x"] * count},
        }
        self.packed[len(self.events)] = row
        self.events.append({"type": "assistant/chunk", "seq": self.seq, "placeholder": True})
        self.seq += count

    def compact(self, start: int, end: int, text: str, checkpoint: bool) -> None:
        if not self.surface:
            return
        low = min(start, len(self.surface) - 1)
        high = max(low, min(end, len(self.surface) - 1))
        shadowed = self.surface[low : high + 1]
        source = (
            {"kind": "plugin", "plugin": "compact", "compactionId": "k"} if checkpoint else {"kind": "user"}
        )
        data = {"source": source, "content": [{"type": "text", "text": text}], "role": "user"}
        seq = self.add(
            "user/message",
            data,
            {"op": "replace", "start": shadowed[0], "end": shadowed[-1]},
            sources=shadowed,
        )
        self.surface[low : high + 1] = [seq]

    def lines(self, header: dict[str, Any]) -> list[str]:
        """The log as JSONL lines (packed rows written packed)."""
        out = [json.dumps(header, ensure_ascii=False, separators=(",", ":"))]
        for index, event in enumerate(self.events):
            record = self.packed.get(index, event)
            out.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        return out

    def unpacked(self) -> list[dict[str, Any]]:
        """The raw events with packed rows expanded (what the store's parser gives)."""
        events: list[dict[str, Any]] = []
        for index, event in enumerate(self.events):
            row = self.packed.get(index)
            if row is None:
                events.append(event)
                continue
            for offset in range(len(row["data"]["texts"])):
                events.append({"type": "assistant/chunk", "seq": row["seq0"] + offset, "time": 1, "data": {}})
        return events


def _block(kind: str, text: str) -> dict[str, Any]:
    if kind == "tool-call":
        return {"type": "tool-call", "id": "c", "name": "bash", "arguments": "{}"}
    return {"type": kind, "text": text}


ACTION = st.one_of(
    st.tuples(st.just("user"), TEXT, st.sampled_from(["user", "user", "plugin", "session-reference"])),
    st.tuples(
        st.just("assistant"),
        st.lists(st.tuples(st.sampled_from(["text", "text", "reasoning", "tool-call"]), TEXT), max_size=3),
    ),
    st.tuples(st.just("tool")),
    st.tuples(st.just("log")),
    st.tuples(st.just("packed"), st.integers(1, 4)),
    st.tuples(st.just("compact"), st.integers(0, 6), st.integers(0, 6), TEXT, st.booleans()),
)


def build_log(actions: list[tuple]) -> LogBuilder:
    """The log the actions describe."""
    log = LogBuilder()
    for action in actions:
        kind = action[0]
        if kind == "user":
            data = {
                "source": {"kind": action[2]},
                "content": [{"type": "text", "text": action[1]}],
                "role": "user",
            }
            log.surface_event("user/message", data)
        elif kind == "assistant":
            content = [_block(block, text) for block, text in action[1]]
            message = {"role": "assistant", "content": content, "source": {"kind": "model"}}
            log.surface_event("assistant/message", {"turn": 1, "step": 1, "message": message})
        elif kind == "tool":
            message = {
                "source": {"kind": "tool", "callId": "c"},
                "content": [{"type": "tool-result"}],
                "role": "tool",
            }
            log.surface_event("tool/result", {"message": message})
        elif kind == "log":
            log.add("turn/start", {"turn": 1})
        elif kind == "packed":
            log.packed_row(action[1])
        else:
            log.compact(action[1], action[2], action[3], action[4])
    return log


LOGS = st.lists(ACTION, max_size=14).map(build_log)
