"""What both UIs show of a session's log events: pure, toolkit-free, one of each.

The Textual transcript and inspector and the line mode's transcript and `/log` all read the
raw event dicts the store writes through these functions, so a message reads the same in both:

* **Message text** is the contract's (`sessionref.contract.projection.message_text`: the text
  blocks joined with one newline), i.e. exactly the text a reference would carry.
* **What a user message is** (`user_message_kind`): the user's own prompt, a snapshot of
  referenced sessions, a compaction checkpoint (the contract's `is_compact_checkpoint_source`),
  or context something else injected (`context_source` names who).
* **One-line previews** (`event_preview`) and **source labels** (`source_label`) for log rows,
  with chunk runs folded into one row (`LogRowFolder`, `log_rows`).
* **Snapshots**: their per-reference stats and their JSON, found between the contract's
  `<referenced-sessions>` tags.

Every string returned is still *data*: a UI shows it through `display.inert` / `rich.text.Text`,
never as markup, and cuts it to its own width in cells.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from sessionref.contract.context_message import PROMPT_PREFIX, PROMPT_SUFFIX
from sessionref.contract.projection import is_compact_checkpoint_source
from sessionref.contract.projection import message_text as content_text

SNAPSHOT_OPEN_TAG: Final = PROMPT_PREFIX.rstrip("\n").rsplit("\n", 1)[-1]
"""`<referenced-sessions>`: the line of the contract's prompt prefix that opens a snapshot's JSON."""

SNAPSHOT_CLOSE_TAG: Final = PROMPT_SUFFIX.strip()
"""`</referenced-sessions>`: the contract's prompt suffix, which closes it."""

PREVIEW_CHARS: Final = 400
"""The most characters a one-line preview keeps (then `…`): wider than any terminal row it is
shown in (each UI cuts it again to its column, in cells), and a bound on what a log row holds."""

UserMessageKind = Literal["prompt", "snapshot", "checkpoint", "context"]
"""What a user-role message is: the user's own words, a snapshot of referenced sessions, a
compaction checkpoint, or context something else put there."""


def message_of(event: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The message carried by a `user/message` or `assistant/message` event, else None."""
    data = event.get("data")
    if not isinstance(data, Mapping):
        return None
    if event.get("type") == "user/message":
        return data
    if event.get("type") == "assistant/message":
        message = data.get("message")
        return message if isinstance(message, Mapping) else None
    return None


def message_text(message: Mapping[str, Any]) -> str:
    """A message's text: its text blocks joined as the contract joins them (a plain string
    `content`, which some other programs write, is shown as it is)."""
    content = message.get("content")
    return content if isinstance(content, str) else content_text(content)


def is_snapshot(message: Mapping[str, Any]) -> bool:
    """True for a session-reference snapshot message."""
    source = message.get("source")
    return isinstance(source, Mapping) and source.get("kind") == "session-reference"


def is_checkpoint(message: Mapping[str, Any]) -> bool:
    """True for a compaction checkpoint (source kind `plugin`, plugin `compact`)."""
    return is_compact_checkpoint_source(message.get("source"))


def context_source(message: Mapping[str, Any]) -> str | None:
    """Who injected `message` when it is context rather than the user's own words, else None.

    A user-role message whose source is neither the user (or none at all), nor a session-reference
    snapshot, nor a compaction checkpoint was put there by something else: a plugin (its name, e.g.
    a DSH runtime context), or another kind of source (the kind, e.g. `agent-instructions`).
    """
    source = message.get("source")
    if not isinstance(source, Mapping) or is_snapshot(message) or is_checkpoint(message):
        return None
    kind = source.get("kind")
    if kind in (None, "user"):
        return None
    plugin = source.get("plugin")
    if kind == "plugin" and isinstance(plugin, str) and plugin:
        return plugin
    return str(kind)


def user_message_kind(message: Mapping[str, Any]) -> UserMessageKind:
    """Whether a user-role message is the user's `prompt`, a `snapshot`, a `checkpoint` or `context`."""
    if is_snapshot(message):
        return "snapshot"
    if is_checkpoint(message):
        return "checkpoint"
    if context_source(message) is not None:
        return "context"
    return "prompt"


def _source_of(event: Mapping[str, Any]) -> Mapping[str, Any] | None:
    message = message_of(event)
    holder = message if message is not None else event.get("data")
    source = holder.get("source") if isinstance(holder, Mapping) else None
    return source if isinstance(source, Mapping) else None


def source_kind(event: Mapping[str, Any]) -> str:
    """The `source.kind` of the event's message or title change, or "" when it has none."""
    source = _source_of(event)
    kind = source.get("kind") if source is not None else None
    return kind if isinstance(kind, str) else ""


def source_label(event: Mapping[str, Any]) -> str:
    """The source column of a log row: the source kind, `plugin:<name>` for a named plugin."""
    kind = source_kind(event)
    source = _source_of(event)
    plugin = source.get("plugin") if source is not None else None
    if kind == "plugin" and isinstance(plugin, str) and plugin:
        return f"plugin:{plugin}"
    return kind


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


def snapshot_references(message: Mapping[str, Any]) -> list[ReferenceStats]:
    """The per-reference stats recorded in a snapshot message's source (malformed entries skipped)."""
    source = message.get("source")
    refs = source.get("references") if isinstance(source, Mapping) else None
    if not isinstance(refs, list):
        return []
    stats: list[ReferenceStats] = []
    for ref in refs:
        if not isinstance(ref, Mapping) or not isinstance(ref.get("sessionId"), str):
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


def snapshot_title(message: Mapping[str, Any]) -> str:
    """`Referenced sessions · label, label` — how a snapshot is named in one line."""
    labels = [ref.label for ref in snapshot_references(message)]
    return "Referenced sessions · " + (", ".join(labels) if labels else "(unknown)")


def snapshot_json_pretty(message: Mapping[str, Any]) -> str:
    """The snapshot's JSON payload pretty-printed; the raw text when it is not valid JSON.

    The payload sits between the contract's `<referenced-sessions>` tags with every `<` written
    as `\\u003c`; `json.loads` restores it, and the pretty form keeps non-ASCII text readable.
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


def _chunk_text(data: Mapping[str, Any]) -> str:
    chunk = data.get("chunk")
    text = chunk.get("text") if isinstance(chunk, Mapping) else None
    return text if isinstance(text, str) else ""


def event_preview(event: Mapping[str, Any], limit: int = PREVIEW_CHARS) -> str:
    """A one-line, human summary of any log event, at most `limit` characters (unknown types
    summarise their data keys)."""
    kind = event.get("type")
    raw = event.get("data")
    data: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    message = message_of(event)
    if message is not None:
        if is_snapshot(message):
            return one_line(snapshot_title(message), limit)
        if is_checkpoint(message):
            return one_line("checkpoint: " + message_text(message), limit)
        return one_line(message_text(message), limit)
    if kind == "assistant/chunk":
        return one_line(_chunk_text(data), limit)
    if kind == "turn/end":
        error = data.get("error")
        summary = f"turn {data.get('turn')} · {data.get('reason', '')}" + (f" · {error}" if error else "")
        return one_line(summary, limit)
    if kind == "turn/start":
        return f"turn {data.get('turn')}"
    if kind in ("step/start", "step/end"):
        return f"turn {data.get('turn')} step {data.get('step')}"
    if kind == "session/title":
        return one_line(str(data.get("title", "")), limit)
    return one_line(", ".join(sorted(str(key) for key in data)), limit)


@dataclass(frozen=True, slots=True)
class LogRow:
    """One row of a log listing (inspector, `/log`): a run of streamed chunks of one step is one row."""

    key: str
    seq: str
    type: str
    source: str
    preview: str


class LogRowFolder:
    """Turns a stream of log events into log rows, folding consecutive chunks.

    `feed` returns the rows to add or replace (same `key` = replace). A run of
    `assistant/chunk` events of the same turn and step becomes one row whose seq
    is the range, whose type counts the chunks and whose preview is their text
    joined; any other event ends the run.
    """

    def __init__(self, limit: int = PREVIEW_CHARS) -> None:
        self._limit = limit
        self._run_key: str | None = None
        self._run_step: tuple[Any, Any] | None = None
        self._run_first_seq: Any = None
        self._run_count = 0
        self._run_text = ""
        self._run_full = False

    def feed(self, events: Iterable[Mapping[str, Any]]) -> list[LogRow]:
        """Rows produced by `events`, in order; a later row with a known key replaces the earlier one."""
        rows: list[LogRow] = []
        for event in events:
            seq = event.get("seq")
            kind = str(event.get("type", "?"))
            if kind == "assistant/chunk":
                rows.append(self._chunk_row(event, seq))
                continue
            self._run_key = None
            self._run_step = None
            preview = event_preview(event, self._limit)
            rows.append(LogRow(f"seq-{seq}", str(seq), kind, source_label(event), preview))
        return rows

    def _chunk_row(self, event: Mapping[str, Any], seq: Any) -> LogRow:
        raw = event.get("data")
        data: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        step = (data.get("turn"), data.get("step"))
        if self._run_key is None or step != self._run_step:
            self._run_key = f"chunks-{seq}"
            self._run_step = step
            self._run_first_seq = seq
            self._run_count = 0
            self._run_text = ""
            self._run_full = False
        self._run_count += 1
        if not self._run_full:  # once the preview is full, more text cannot change it: stop keeping it
            self._run_text += _chunk_text(data)
            self._run_full = len(" ".join(self._run_text.split())) > self._limit
        seq_text = str(seq) if self._run_first_seq == seq else f"{self._run_first_seq}–{seq}"
        preview = one_line(self._run_text, self._limit)
        return LogRow(self._run_key, seq_text, f"assistant/chunk ×{self._run_count}", "", preview)


def log_rows(events: Iterable[Mapping[str, Any]], limit: int = PREVIEW_CHARS) -> list[LogRow]:
    """The rows of a whole log, top to bottom (each chunk run folded into its final row)."""
    rows: dict[str, LogRow] = {}
    for row in LogRowFolder(limit).feed(events):
        rows[row.key] = row  # a dict keeps the first position of a key and its newest value
    return list(rows.values())


SKIPPED_LINES_SHOWN: Final = 5
"""How many skipped line numbers a notice names before it says `…`."""


def line_numbers(lines: Sequence[int], shown: int) -> str:
    """`3, 7, 12` — the first `shown` of `lines`, then `…` if there are more."""
    named = ", ".join(str(line) for line in lines[:shown])
    return named + ", …" if len(lines) > shown else named


def skipped_lines_notice(lines: Sequence[int]) -> str | None:
    """What a user is told when a log had unreadable lines the store skipped, or None when none.

    "2 unreadable lines in this log were skipped (lines 3, 7)": the readable events are shown; the
    numbers (1-based, at most `SKIPPED_LINES_SHOWN`) say where to look in the file.
    """
    if not lines:
        return None
    count = len(lines)
    named = line_numbers(lines, SKIPPED_LINES_SHOWN)
    if count == 1:
        return f"1 unreadable line in this log was skipped (line {named})"
    return f"{count:,} unreadable lines in this log were skipped (lines {named})"
