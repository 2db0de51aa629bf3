"""`ReferencePreview`: how one source would be captured now, for a UI's preview pane."""

from __future__ import annotations

from dataclasses import dataclass

from sessionref.contract.reference_budget import RetainedReference

PREVIEW_LINE_CHARS = 120
"""The longest first/last line excerpt a preview carries (longer ones end with an ellipsis)."""


@dataclass(frozen=True, slots=True)
class ReferencePreview:
    """How one source would be captured right now, for a UI preview.

    `retained_bytes` is the size of its budgeted JSON, never above `budget_bytes`.
    `first_line`/`last_line` are short excerpts (raw data: display them inertly).
    """

    session_id: str
    label: str
    captured_through_seq: int | None
    budget_bytes: int
    message_count: int
    retained_messages: int
    omitted_messages: int
    retained_bytes: int
    omitted_bytes: int
    truncated: bool
    compacted: bool
    first_line: str | None
    last_line: str | None


def _short_line(text: str, *, last: bool) -> str:
    lines = text.splitlines() or [""]
    line = lines[-1] if last else lines[0]
    if len(line) > PREVIEW_LINE_CHARS:
        return line[: PREVIEW_LINE_CHARS - 1] + "\u2026"
    return line


def reference_preview(
    session_id: str, label: str, retained: RetainedReference, budget: int
) -> ReferencePreview:
    """The preview of a session retained as `retained` under `budget` bytes."""
    conversation = retained.data["conversation"]
    stats = retained.stats
    return ReferencePreview(
        session_id=session_id,
        label=label,
        captured_through_seq=retained.data["capturedThroughSeq"],
        budget_bytes=budget,
        message_count=stats.original_messages,
        retained_messages=stats.retained_messages,
        omitted_messages=stats.omitted_messages,
        retained_bytes=retained.data_bytes,
        omitted_bytes=stats.omitted_bytes,
        truncated=stats.truncated,
        compacted=stats.compacted,
        first_line=_short_line(conversation[0]["text"], last=False) if conversation else None,
        last_line=_short_line(conversation[-1]["text"], last=True) if conversation else None,
    )
