"""What the offline demo model says: a pure function of the conversation it received.

The reply shows a user that references work without any network: which referenced sessions arrived
as snapshots, how many of their messages were visible, whether they were truncated or compacted, a
short quote of each one's latest message, and a restatement of the user's own latest message.
Everything quoted from data is flattened to one line and Markdown-escaped, so it stays inert.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from sessionref.models.base import one_line_excerpt

SNAPSHOT_HEADING: Final = "## Referenced sessions"
SNAPSHOT_OPEN: Final = "<referenced-sessions>\n"
SNAPSHOT_CLOSE: Final = "\n</referenced-sessions>"
OMISSIONS_HEADING: Final = "## Reference omissions"
OMISSION_NOTICE_MARK: Final = "[… omitted "
COMPACTED_MARK: Final = "<compacted-summary>"
_DEMO_SUMMARY_START = re.compile(r"\s*Summary of \d+ messages?:")
DEMO_HEADING: Final = "**Demo model** · offline, no AI · set `OPENAI_API_KEY` to talk to a real model"

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")
QUOTE_LIMIT: Final = 90


@dataclass(frozen=True)
class ReferencedSessionView:
    """One referenced session as the demo model saw it inside a snapshot message."""

    session_id: str
    label: str
    message_count: int
    truncated: bool
    compacted: bool
    omitted_messages: int | None
    latest_role: str | None
    latest_text: str | None


@dataclass
class SnapshotScan:
    """The referenced sessions found in one snapshot message (``unreadable`` if its JSON was bad)."""

    sessions: list[ReferencedSessionView] = field(default_factory=list)
    unreadable: bool = False


def is_snapshot_text(content: str) -> bool:
    """True when a user message is a referenced-sessions snapshot rather than something a person typed."""
    return content.lstrip().startswith(SNAPSHOT_HEADING) and SNAPSHOT_OPEN in content


def is_checkpoint_text(content: str) -> bool:
    """True when a message is a compaction summary (DSH's ``<compacted-summary>`` or our demo's own)."""
    return COMPACTED_MARK in content or _DEMO_SUMMARY_START.match(content) is not None


def _is_direct(role: str, content: str) -> bool:
    """A message a person wrote: a user message that is neither a snapshot nor a checkpoint."""
    return role == "user" and not is_snapshot_text(content) and not is_checkpoint_text(content)


def scan_snapshot(content: str) -> SnapshotScan:
    """Parse the tag-safe JSON of a snapshot message (and its omission notices, if any)."""
    start = content.find(SNAPSHOT_OPEN)
    end = content.find(SNAPSHOT_CLOSE, start + len(SNAPSHOT_OPEN)) if start >= 0 else -1
    if start < 0 or end < 0:
        return SnapshotScan(unreadable=True)
    try:
        payload = json.loads(content[start + len(SNAPSHOT_OPEN) : end])
    except ValueError:
        return SnapshotScan(unreadable=True)
    if not isinstance(payload, list):
        return SnapshotScan(unreadable=True)
    notices = _omission_notices(content[end + len(SNAPSHOT_CLOSE) :])
    scan = SnapshotScan()
    for entry in payload:
        view = _session_view(entry, notices)
        if view is None:
            scan.unreadable = True
        else:
            scan.sessions.append(view)
    return scan


def _omission_notices(tail: str) -> dict[str, int]:
    """Map session id -> omittedMessages from a ``## Reference omissions`` block (empty if none)."""
    if OMISSIONS_HEADING not in tail:
        return {}
    last_line = tail.rstrip().rsplit("\n", 1)[-1]
    try:
        notices = json.loads(last_line)
    except ValueError:
        return {}
    found: dict[str, int] = {}
    if isinstance(notices, list):
        for notice in notices:
            if isinstance(notice, dict) and isinstance(notice.get("sessionId"), str):
                omitted = notice.get("omittedMessages")
                found[notice["sessionId"]] = omitted if isinstance(omitted, int) else 0
    return found


def _session_view(entry: Any, notices: dict[str, int]) -> ReferencedSessionView | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("sessionId"), str):
        return None
    conversation = entry.get("conversation")
    if not isinstance(conversation, list):
        conversation = []
    items = [item for item in conversation if isinstance(item, dict)]
    texts = [item["text"] for item in items if isinstance(item.get("text"), str)]
    session_id: str = entry["sessionId"]
    given_label = entry.get("label")
    label = given_label if isinstance(given_label, str) else session_id
    latest = items[-1] if items else None
    latest_text = latest.get("text") if latest is not None else None
    return ReferencedSessionView(
        session_id=session_id,
        label=label,
        message_count=len(items),
        truncated=session_id in notices or any(OMISSION_NOTICE_MARK in text for text in texts),
        compacted=any(is_checkpoint_text(text) for text in texts),
        omitted_messages=notices.get(session_id),
        latest_role=str(latest.get("role")) if latest is not None else None,
        latest_text=latest_text if isinstance(latest_text, str) else None,
    )


def inert_markdown(text: str, limit: int = QUOTE_LIMIT) -> str:
    """One line of data, shortened and with every Markdown-significant character escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", one_line_excerpt(text, limit))


def _pairs(messages: Sequence[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    """(role, content, steered) for each well-formed message; anything else is ignored."""
    pairs: list[tuple[str, str, bool]] = []
    for message in messages:
        role, content = message.get("role"), message.get("content")
        if isinstance(role, str) and isinstance(content, str):
            pairs.append((role, content, bool(message.get("steer"))))
    return pairs


def compose_demo_reply(messages: Sequence[dict[str, Any]]) -> str:
    """The demo model's full reply to ``messages``: deterministic, short Markdown."""
    pairs = _pairs(messages)
    last_reply = max((i for i, (role, _, _) in enumerate(pairs) if role == "assistant"), default=-1)
    current = pairs[last_reply + 1 :]
    earlier = pairs[: last_reply + 1]
    lines = [DEMO_HEADING, ""]
    lines.extend(_reference_lines([c for r, c, _ in current if r == "user" and is_snapshot_text(c)]))
    earlier_count = sum(1 for r, c, _ in earlier if r == "user" and is_snapshot_text(c))
    if earlier_count:
        lines.append(f"- Earlier in this conversation: {earlier_count} snapshot message(s), still in view.")
    if any(role == "user" and is_checkpoint_text(content) for role, content, _ in pairs):
        lines.append("- This session was compacted: I see a summary in place of its earlier messages.")
    lines.append("")
    lines.extend(_question_lines(pairs, current, replied_before=last_reply >= 0))
    lines.append("")
    lines.append(f"_Demo reply · {len(pairs)} message(s) in my context._")
    return "\n".join(lines)


def _reference_lines(snapshots: list[str]) -> list[str]:
    if not snapshots:
        return [
            "**Referenced sessions:** none — no sessions were referenced in this message. "
            "Type `@` to mention one."
        ]
    scans = [scan_snapshot(text) for text in snapshots]
    views = [view for scan in scans for view in scan.sessions]
    lines = [f"**Referenced sessions:** I received a read-only snapshot of {len(views)}:"]
    for view in views:
        lines.extend(_view_lines(view))
    if any(scan.unreadable for scan in scans):
        lines.append("- One snapshot block could not be read as JSON; I ignored that part.")
    return lines


def _view_lines(view: ReferencedSessionView) -> list[str]:
    name = f"**{inert_markdown(view.label, 60)}**"
    if view.label != view.session_id:
        name += f" ({inert_markdown(view.session_id, 40)})"
    facts = [f"saw {view.message_count} message{'s' if view.message_count != 1 else ''}"]
    if view.truncated:
        dropped = f", {view.omitted_messages} dropped" if view.omitted_messages else ""
        facts.append(f"truncated{dropped}")
    if view.compacted:
        facts.append("compacted")
    lines = [f"- {name} — {' · '.join(facts)}"]
    if view.latest_text is not None:
        role = inert_markdown(view.latest_role or "message", 20)
        lines.append(f"  - latest ({role}): {_latest_quote(view.latest_text)}")
    else:
        lines.append("  - its conversation is empty")
    return lines


_RESTATED = re.compile(r"\*\*(?:You asked|New message[^*]*|Your last message):?\*\*[^“]*“(.*?)”")
_MARKDOWN_ESCAPE = re.compile(r"\\(.)")


def _latest_quote(text: str) -> str:
    """A short quote of a message; a demo reply is shown as what it answered, not its heading."""
    if text.startswith(DEMO_HEADING):
        restated = _RESTATED.search(text)
        if restated is not None:
            question = _MARKDOWN_ESCAPE.sub(r"\1", restated.group(1))
            return f"a demo reply to “{inert_markdown(question)}”"
        return "a demo reply"
    return f"“{inert_markdown(text)}”"


def _question_lines(
    pairs: list[tuple[str, str, bool]], current: list[tuple[str, str, bool]], *, replied_before: bool
) -> list[str]:
    direct_now = [(c, steered) for r, c, steered in current if _is_direct(r, c)]
    if not direct_now:
        direct_all = [c for r, c, _ in pairs if _is_direct(r, c)]
        if not direct_all:
            return ["**Your message:** I did not receive a message from you to answer."]
        return [f"**Your last message:** “{inert_markdown(direct_all[-1])}”"]
    latest = direct_now[-1][0]
    steered = any(flag for _, flag in direct_now) or (replied_before and len(direct_now) > 1)
    lines: list[str] = []
    if steered:
        count = f" ({len(direct_now)} since my last reply)" if len(direct_now) > 1 else ""
        lines.append(
            f"**New message while I was replying**{count}: “{inert_markdown(latest)}” — noted, "
            "I'm taking it into account."
        )
    elif replied_before:
        lines.append(f"**New message since my last reply:** “{inert_markdown(latest)}”")
    else:
        lines.append(f"**You asked:** “{inert_markdown(latest)}”")
    if len(direct_now) > 1:
        earlier = "; ".join(f"“{inert_markdown(c, 40)}”" for c, _ in direct_now[:-1])
        lines.append(f"- Also received in the same batch: {earlier}")
    return lines


def compose_demo_summary(messages: Sequence[dict[str, Any]], *, max_lines: int = 8) -> str:
    """A deterministic compaction summary: the count, then the first line of each early message."""
    pairs = _pairs(messages)
    lines = [f"Summary of {len(pairs)} message{'s' if len(pairs) != 1 else ''}:"]
    for role, content, _ in pairs[:max_lines]:
        text = "(referenced-sessions snapshot)" if is_snapshot_text(content) else content.strip()
        first_line = text.split("\n", 1)[0] if text else "(empty)"
        lines.append(f"- {role}: {one_line_excerpt(first_line, 100)}")
    if len(pairs) > max_lines:
        lines.append(f"- … and {len(pairs) - max_lines} more")
    return "\n".join(lines)
