"""Project a folded session surface to the conversation a reference may show (docs/contract.md §3.3).

Only what a person typed (`source.kind == "user"`), compaction checkpoints and
assistant answers are projected; injected context, plugin messages, tool
results and `system/message` events (a surface type of the later contract)
never propagate into another session. Text is the `"\\n"`-join of the
string `text` of every `type == "text"` block; empty results are dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple

from sessionref.contract.events import SurfaceSnapshot
from sessionref.contract.excerpts import bounded_excerpt
from sessionref.contract.js_json import js_json_stringify

__all__ = [
    "ProjectedColumns",
    "ProjectedItem",
    "UnreachableSurfaceEventError",
    "is_compact_checkpoint_source",
    "message_text",
    "project_conversation_columns",
    "project_session_conversation",
]

Role = Literal["user", "assistant"]
_UNREACHABLE_PREFIX = "unreachable variant in session-reference surface event: "
QUOTED_EVENT_LIMIT = 65_536
"""Events whose JSON has up to this many characters are quoted whole (upstream's vectors go to ~44,700)."""
QUOTED_EVENT_EXCERPT = 1_024
"""How many characters (from both ends) of a longer event's JSON the message quotes."""


class UnreachableSurfaceEventError(Exception):
    """A surface event of a type the projection does not know (upstream's `assertNever`; code None)."""

    name = "Error"
    code: None = None

    def __init__(self, event: object) -> None:
        try:
            shown = str(js_json_stringify(event))
        except (TypeError, RecursionError):
            shown = repr(event)
        if len(shown) > QUOTED_EVENT_LIMIT:
            shown = bounded_excerpt(shown, QUOTED_EVENT_EXCERPT)
        super().__init__(_UNREACHABLE_PREFIX + shown)
        self.event = event


class ProjectedItem(NamedTuple):
    """One projected message: its role, its joined text, and whether it is a compaction checkpoint.

    A named tuple rather than a dataclass: projections run to 100,000s of items and this is cheaper to build.
    """

    role: Role
    text: str
    checkpoint: bool = False


def is_compact_checkpoint_source(source: object) -> bool:
    """True iff `source` is a compaction checkpoint marker: `kind == "plugin"` and `plugin == "compact"`."""
    if not isinstance(source, Mapping):
        return False
    return source.get("kind") == "plugin" and source.get("plugin") == "compact"


def message_text(content: object) -> str:
    """The `"\\n"`-join of the string `text` of every `type == "text"` block of `content`."""
    if type(content) is not list and (not isinstance(content, Sequence) or isinstance(content, str | bytes)):
        return ""
    if len(content) == 1:  # the common case, without building a list
        block = content[0]
        if (type(block) is dict or isinstance(block, Mapping)) and block.get("type") == "text":
            text = block.get("text")
            return text if isinstance(text, str) else ""
        return ""
    texts: list[str] = []
    for block in content:
        if (type(block) is dict or isinstance(block, Mapping)) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                texts.append(text)
    return texts[0] if len(texts) == 1 else "\n".join(texts)


class ProjectedColumns(NamedTuple):
    """A projection as three parallel lists: cheaper than one object per message for large sessions."""

    roles: list[Role]
    texts: list[str]
    checkpoints: list[bool]


def project_conversation_columns(snapshot: SurfaceSnapshot) -> ProjectedColumns:
    """`project_session_conversation` as parallel role/text/checkpoint lists (same rules, same errors).

    The snapshot's events come from a log: every field read here is checked first.
    """
    roles: list[Role] = []
    texts: list[str] = []
    checkpoints: list[bool] = []
    for event in snapshot.get("events") or ():
        kind = event.get("type")
        data = event.get("data")
        if type(data) is not dict and not isinstance(data, Mapping):
            data = {}
        if kind == "user/message":
            source = data.get("source")
            if type(source) is not dict and not isinstance(source, Mapping):
                continue
            source_kind = source.get("kind")
            checkpoint = source_kind == "plugin" and source.get("plugin") == "compact"
            if not (checkpoint or source_kind == "user"):
                continue
            text = message_text(data.get("content"))
            role: Role = "user"
        elif kind == "assistant/message":
            message = data.get("message")
            is_mapping = type(message) is dict or isinstance(message, Mapping)
            text = message_text(message.get("content")) if is_mapping and message is not None else ""
            role, checkpoint = "assistant", False
        elif kind == "tool/result" or kind == "system/message":  # never propagated (later contract)
            continue
        else:
            raise UnreachableSurfaceEventError(event)
        if text:
            roles.append(role)
            texts.append(text)
            checkpoints.append(checkpoint)
    return ProjectedColumns(roles, texts, checkpoints)


def project_session_conversation(snapshot: SurfaceSnapshot) -> list[ProjectedItem]:
    """The projected conversation of a surface snapshot `{session, capturedThroughSeq, events}`.

    Raises `UnreachableSurfaceEventError` for an event type outside the surface
    union (`user/message`, `assistant/message`, `tool/result`, `system/message`).
    """
    columns = project_conversation_columns(snapshot)
    return [ProjectedItem(role, text, checkpoint) for role, text, checkpoint in zip(*columns, strict=True)]
