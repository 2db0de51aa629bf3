"""Pure summaries of session log events, shared by the transcript and the inspector.

Nothing here imports Textual: these functions turn the raw event dicts written by
the store into small, plain values (a source kind, a one-line preview, the labels
of a snapshot) that the widgets render. Every string returned is still *data*: the
widgets must pass it through `display.inert` / `rich.text.Text`, never markup.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

SNAPSHOT_OPEN_TAG = "<referenced-sessions>"
SNAPSHOT_CLOSE_TAG = "</referenced-sessions>"
PREVIEW_CHARS = 120
"""How many characters of a message the inspector keeps for its one-line preview."""


def message_of(event: dict[str, Any]) -> dict[str, Any] | None:
    """The message dict carried by a `user/message` or `assistant/message` event, else None."""
    data = event.get("data")
    if not isinstance(data, dict):
        return None
    if event.get("type") == "user/message":
        return data
    if event.get("type") == "assistant/message":
        message = data.get("message")
        return message if isinstance(message, dict) else None
    return None


def message_text(message: dict[str, Any]) -> str:
    """All text parts of a message joined with blank lines (non-text parts are skipped)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        part["text"]
        for part in content
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
    ]
    return "\n\n".join(parts)


def source_kind(event: dict[str, Any]) -> str:
    """The `source.kind` of the event's message or title change, or "" when it has none."""
    data = event.get("data")
    message = message_of(event)
    holder = message if message is not None else data
    if isinstance(holder, dict):
        source = holder.get("source")
        if isinstance(source, dict) and isinstance(source.get("kind"), str):
            return source["kind"]
    return ""


def is_snapshot(message: dict[str, Any]) -> bool:
    """True for a session-reference snapshot message."""
    source = message.get("source")
    return isinstance(source, dict) and source.get("kind") == "session-reference"


def is_checkpoint(message: dict[str, Any]) -> bool:
    """True for a compaction checkpoint (decision D7: source kind plugin, plugin compact)."""
    source = message.get("source")
    return isinstance(source, dict) and source.get("kind") == "plugin" and source.get("plugin") == "compact"


def context_source(message: dict[str, Any]) -> str | None:
    """Who injected `message` when it is context rather than the user's own words, else None.

    A user-role message whose source is neither the user (or none at all), nor a session-reference
    snapshot, nor a compaction checkpoint was put there by something else: a plugin (its name, e.g.
    a DSH runtime context), or another kind of source (the kind, e.g. `agent-instructions`).
    """
    source = message.get("source")
    if not isinstance(source, dict) or is_snapshot(message) or is_checkpoint(message):
        return None
    kind = source.get("kind")
    if kind in (None, "user"):
        return None
    plugin = source.get("plugin")
    if kind == "plugin" and isinstance(plugin, str) and plugin:
        return plugin
    return str(kind)


@dataclass(frozen=True, slots=True)
class ReferenceStats:
    """What one referenced session contributed to a snapshot, from the snapshot's `source`."""

    session_id: str
    label: str
    captured_through_seq: int | None
    original_messages: int | None
    retained_messages: int | None
    omitted_messages: int | None
    omitted_bytes: int | None
    truncated: bool
    compacted: bool


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def snapshot_references(message: dict[str, Any]) -> list[ReferenceStats]:
    """The per-reference stats recorded in a snapshot message's source (malformed entries skipped)."""
    source = message.get("source")
    refs = source.get("references") if isinstance(source, dict) else None
    if not isinstance(refs, list):
        return []
    stats: list[ReferenceStats] = []
    for ref in refs:
        if not isinstance(ref, dict) or not isinstance(ref.get("sessionId"), str):
            continue
        label = ref.get("label")
        stats.append(
            ReferenceStats(
                session_id=ref["sessionId"],
                label=label if isinstance(label, str) else ref["sessionId"],
                captured_through_seq=_int_or_none(ref.get("capturedThroughSeq")),
                original_messages=_int_or_none(ref.get("originalMessages")),
                retained_messages=_int_or_none(ref.get("retainedMessages")),
                omitted_messages=_int_or_none(ref.get("omittedMessages")),
                omitted_bytes=_int_or_none(ref.get("omittedBytes")),
                truncated=ref.get("truncated") is True,
                compacted=ref.get("compacted") is True,
            )
        )
    return stats


def snapshot_title(message: dict[str, Any]) -> str:
    """`Referenced sessions · label, label` — the collapsed row of a snapshot."""
    labels = [ref.label for ref in snapshot_references(message)]
    return "Referenced sessions · " + (", ".join(labels) if labels else "(unknown)")


def snapshot_json_pretty(message: dict[str, Any]) -> str:
    """The snapshot's JSON payload pretty-printed; the raw text when it is not valid JSON.

    The payload sits between `<referenced-sessions>` tags with every `<` written as
    `\\u003c`; `json.loads` restores it, and the pretty form keeps non-ASCII text readable.
    """
    text = message_text(message)
    start = text.find(SNAPSHOT_OPEN_TAG)
    end = text.rfind(SNAPSHOT_CLOSE_TAG)
    if start < 0 or end < start:
        return text
    payload = text[start + len(SNAPSHOT_OPEN_TAG) : end].strip()
    try:
        parsed = json.loads(payload)
    except ValueError:
        return payload
    return json.dumps(parsed, indent=2, ensure_ascii=False)


def describe_stats(ref: ReferenceStats) -> str:
    """One plain line of numbers for a reference, e.g. `kept 4 of 6 messages, omitted 2 (1,234 bytes)`."""
    parts: list[str] = []
    if ref.retained_messages is not None and ref.original_messages is not None:
        parts.append(f"kept {ref.retained_messages} of {ref.original_messages} messages")
    if ref.omitted_messages:
        omitted = f"omitted {ref.omitted_messages}"
        if ref.omitted_bytes is not None:
            omitted += f" ({ref.omitted_bytes:,} bytes)"
        parts.append(omitted)
    if ref.truncated:
        parts.append("truncated")
    if ref.compacted:
        parts.append("compacted")
    if ref.captured_through_seq is not None:
        parts.append(f"through seq {ref.captured_through_seq}")
    return ", ".join(parts) if parts else "no stats recorded"


def one_line(text: str, limit: int = PREVIEW_CHARS) -> str:
    """Whitespace runs (including newlines) collapsed to single spaces, cut to `limit` characters with `…`."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def event_preview(event: dict[str, Any]) -> str:
    """A one-line, human summary of any log event (unknown types summarise their data keys)."""
    kind = event.get("type")
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    assert isinstance(data, dict)
    message = message_of(event)
    if message is not None:
        if is_snapshot(message):
            return snapshot_title(message)
        if is_checkpoint(message):
            return "checkpoint: " + one_line(message_text(message))
        return one_line(message_text(message))
    if kind == "assistant/chunk":
        chunk = data.get("chunk")
        text = chunk.get("text") if isinstance(chunk, dict) else None
        return one_line(text) if isinstance(text, str) else ""
    if kind == "turn/end":
        reason = str(data.get("reason", ""))
        error = data.get("error")
        return f"turn {data.get('turn')} · {reason}" + (f" · {one_line(str(error))}" if error else "")
    if kind in ("turn/start",):
        return f"turn {data.get('turn')}"
    if kind in ("step/start", "step/end"):
        return f"turn {data.get('turn')} step {data.get('step')}"
    if kind == "session/title":
        return one_line(str(data.get("title", "")))
    return one_line(", ".join(sorted(str(key) for key in data)))


@dataclass(frozen=True, slots=True)
class LogRow:
    """One inspector row: a run of streamed chunks of one step is folded into a single row."""

    key: str
    seq: str
    type: str
    source: str
    preview: str


class LogRowFolder:
    """Turns a stream of log events into inspector rows, folding consecutive chunks.

    `feed` returns the rows to add or replace (same `key` = replace). A run of
    `assistant/chunk` events of the same turn and step becomes one row whose seq
    is the range and whose type counts the chunks; any other event ends the run.
    """

    def __init__(self) -> None:
        self._run_key: str | None = None
        self._run_step: tuple[Any, Any] | None = None
        self._run_first_seq: Any = None
        self._run_count = 0
        self._run_text = ""

    def feed(self, events: list[dict[str, Any]]) -> list[LogRow]:
        """Rows produced by `events`, in order; a later row with a known key replaces the earlier one."""
        rows: list[LogRow] = []
        for event in events:
            seq = event.get("seq")
            kind = str(event.get("type", "?"))
            if kind == "assistant/chunk":
                data = event.get("data") if isinstance(event.get("data"), dict) else {}
                assert isinstance(data, dict)
                step = (data.get("turn"), data.get("step"))
                if self._run_key is None or step != self._run_step:
                    self._run_key = f"chunks-{seq}"
                    self._run_step = step
                    self._run_first_seq = seq
                    self._run_count = 0
                    self._run_text = ""
                self._run_count += 1
                self._run_text += event_preview(event) + " "
                seq_text = str(seq) if self._run_first_seq == seq else f"{self._run_first_seq}–{seq}"
                rows.append(
                    LogRow(
                        key=self._run_key,
                        seq=seq_text,
                        type=f"assistant/chunk ×{self._run_count}",
                        source="",
                        preview=one_line(self._run_text),
                    )
                )
                continue
            self._run_key = None
            self._run_step = None
            rows.append(
                LogRow(
                    key=f"seq-{seq}",
                    seq=str(seq),
                    type=kind,
                    source=source_kind(event),
                    preview=event_preview(event),
                )
            )
        return rows
