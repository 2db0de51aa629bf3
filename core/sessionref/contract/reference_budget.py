"""Fit one referenced session into an exact UTF-8 byte budget (docs/contract.md §4).

The budget applies to the tag-safe JSON text of the snapshot data
`{sessionId, label, cwd, capturedThroughSeq, conversation: [{role, text}]}`.
Over budget, the oldest messages that are neither checkpoints nor the newest
message are dropped first; then the longest remaining text is shortened with a
notice, always from its original text, until the data fits or cannot shrink.

The result is byte-identical to upstream, but sizes are kept incrementally
(the data's size is a fixed part plus one cost per message), so retention is
linear in the number of messages instead of quadratic.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sessionref.contract.events import SurfaceSnapshot
from sessionref.contract.js_json import stringify_tag_safe_json, tag_safe_string_bytes, to_js_string, utf8_len
from sessionref.contract.projection import ProjectedColumns, ProjectedItem, project_conversation_columns
from sessionref.contract.text_retainer import truncate_with_notice

__all__ = [
    "RetainedReference",
    "RetentionStats",
    "retain_projected_columns",
    "retain_projected_items",
    "retain_referenced_session",
    "snapshot_data",
]

# `{"role":` + `,"text":` + `}` around the two string literals of one conversation item.
_ITEM_FRAME_BYTES = len('{"role":') + len(',"text":') + len("}")


@dataclass(frozen=True, slots=True)
class RetentionStats:
    """What retention kept and left out of one referenced session."""

    compacted: bool
    original_messages: int
    retained_messages: int
    omitted_messages: int
    omitted_bytes: int
    truncated: bool

    def to_json(self) -> dict[str, Any]:
        """The camelCase stats object in upstream key order."""
        return {
            "compacted": self.compacted,
            "originalMessages": self.original_messages,
            "retainedMessages": self.retained_messages,
            "omittedMessages": self.omitted_messages,
            "omittedBytes": self.omitted_bytes,
            "truncated": self.truncated,
        }


@dataclass(frozen=True, slots=True)
class RetainedReference:
    """A referenced session fitted to its budget.

    `data` is the JSON-ready snapshot object that goes into the prompt and
    `data_bytes` the UTF-8 size of its tag-safe JSON text (never above the
    budget). `full_data` has the same shape over the whole untruncated projection
    (built on access: most callers never need it). `kept_indices` are the
    positions, in the projection, of the messages in `data`.
    """

    data: dict[str, Any]
    stats: RetentionStats
    data_bytes: int
    kept_indices: tuple[int, ...]
    full_roles: tuple[str, ...]
    full_texts: tuple[str, ...]

    @property
    def full_data(self) -> dict[str, Any]:
        """The snapshot object over every projected message, untruncated (a new dict on each access)."""
        fields = {key: value for key, value in self.data.items() if key != "conversation"}
        fields["conversation"] = [
            {"role": role, "text": text} for role, text in zip(self.full_roles, self.full_texts, strict=True)
        ]
        return fields


def snapshot_data(
    session_id: str,
    label: str,
    cwd: str | None,
    captured_through_seq: int | None,
    conversation: Sequence[tuple[str, str]],
) -> dict[str, Any]:
    """The snapshot object in upstream key order, `conversation` given as (role, text) pairs."""
    return {
        "sessionId": session_id,
        "label": label,
        "cwd": cwd,
        "capturedThroughSeq": captured_through_seq,
        "conversation": [{"role": role, "text": text} for role, text in conversation],
    }


def _item_bytes(role_bytes: int, text: str) -> int:
    return _ITEM_FRAME_BYTES + role_bytes + tag_safe_string_bytes(text)


def retain_projected_items(
    items: Sequence[ProjectedItem],
    *,
    session_id: str,
    label: str,
    cwd: str | None,
    captured_through_seq: int | None,
    max_bytes: int,
) -> RetainedReference | None:
    """Retain projected `items` within `max_bytes`; None when the data cannot fit (budget failure)."""
    columns = ProjectedColumns(
        [item.role for item in items], [item.text for item in items], [item.checkpoint for item in items]
    )
    return retain_projected_columns(
        columns,
        session_id=session_id,
        label=label,
        cwd=cwd,
        captured_through_seq=captured_through_seq,
        max_bytes=max_bytes,
    )


def retain_projected_columns(
    columns: ProjectedColumns,
    *,
    session_id: str,
    label: str,
    cwd: str | None,
    captured_through_seq: int | None,
    max_bytes: int,
) -> RetainedReference | None:
    """`retain_projected_items` over a column projection; None when the data cannot fit."""
    roles, original_texts, checkpoints = columns
    texts = [to_js_string(text) for text in original_texts]
    role_bytes = {role: tag_safe_string_bytes(role) for role in set(roles)}
    costs = [_item_bytes(role_bytes[role], text) for role, text in zip(roles, texts, strict=True)]
    empty_data = snapshot_data(session_id, label, cwd, captured_through_seq, ())
    size = utf8_len(stringify_tag_safe_json(empty_data)) + sum(costs) + max(0, len(texts) - 1)

    alive = [True] * len(texts)
    omitted_messages = 0
    dropped_bytes = 0
    for index in range(len(texts) - 1):
        if size <= max_bytes:
            break
        if checkpoints[index]:
            continue
        alive[index] = False
        size -= costs[index] + 1
        omitted_messages += 1
        dropped_bytes += utf8_len(texts[index])

    kept = [index for index in range(len(texts)) if alive[index]]
    current = {index: texts[index] for index in kept}
    current_bytes = {index: utf8_len(texts[index]) for index in kept}
    shortened_omitted: dict[int, int] = {}
    longest = [(-current_bytes[index], index) for index in kept]
    heapq.heapify(longest)
    while size > max_bytes:
        while longest and -longest[0][0] != current_bytes[longest[0][1]]:
            heapq.heappop(longest)
        if not longest or longest[0][0] == 0:
            return None
        negative_bytes, index = longest[0]
        target = max(0, -negative_bytes - (size - max_bytes))
        shortened = truncate_with_notice(texts[index], target)
        if shortened.text == current[index]:
            return None
        size += _item_bytes(role_bytes[roles[index]], shortened.text) - _item_bytes(
            role_bytes[roles[index]], current[index]
        )
        current[index] = shortened.text
        current_bytes[index] = utf8_len(shortened.text)
        shortened_omitted[index] = shortened.omitted_bytes
        heapq.heappush(longest, (-current_bytes[index], index))

    omitted_bytes = dropped_bytes + sum(shortened_omitted.values())
    stats = RetentionStats(
        compacted=any(checkpoints),
        original_messages=len(texts),
        retained_messages=len(kept),
        omitted_messages=omitted_messages,
        omitted_bytes=omitted_bytes,
        truncated=omitted_messages > 0 or omitted_bytes > 0,
    )
    data = snapshot_data(
        session_id, label, cwd, captured_through_seq, [(roles[index], current[index]) for index in kept]
    )
    return RetainedReference(data, stats, size, tuple(kept), tuple(roles), tuple(texts))


MISSING_SESSION_ID_MESSAGE = "the surface snapshot has no session header with a string id"


def retain_referenced_session(
    snapshot: SurfaceSnapshot, label: str, max_bytes: int
) -> RetainedReference | None:
    """Project `snapshot` (`{session, capturedThroughSeq, events}`) and retain it within `max_bytes`.

    Returns None when even the fixed fields cannot fit. Raises
    `UnreachableSurfaceEventError` for an event type outside the surface union, and
    `TypeError` for a snapshot whose header has no string `id` (the snapshot's `sessionId`
    would otherwise be `null`: every backend we know folds a header with an id).
    """
    header = snapshot.get("session")
    session_id = header.get("id") if isinstance(header, Mapping) else None
    if not isinstance(session_id, str):
        raise TypeError(MISSING_SESSION_ID_MESSAGE)
    cwd = header.get("cwd") if isinstance(header, Mapping) else None
    return retain_projected_columns(
        project_conversation_columns(snapshot),
        session_id=session_id,
        label=label,
        cwd=cwd,
        captured_through_seq=snapshot.get("capturedThroughSeq"),
        max_bytes=max_bytes,
    )
