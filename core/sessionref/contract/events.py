"""The shapes of a session log and of the messages in it, as `TypedDict`s (docs/contract.md §3 and §5).

These are the JSON objects that cross a layer: what the store folds and the service reads (a
`SurfaceSnapshot` of `SurfaceEvent`s under a `SessionHeader`), what the agent and the readers of
other agents' histories write (`LogEvent`s carrying `UserMessage`s and `AssistantMessage`s), and
what `prepare` returns (a `UserMessage` whose source is a `SessionReferenceSource`). Keys are the
log's camelCase keys, in the log's order (docs/contract.md, decision D6).

A `TypedDict` is a promise about shape, not a check. What *we* build has these shapes; what we
*read* from a log — ours, DSH's or another program's — arrives unchecked. So a reader narrows
before it trusts a field: the store validates the envelope (`type`, `seq`, `surfaceOp`) and
whatever reads inside `data` checks each field it uses (as `sessionref.contract.projection`
does), treating the payload as a `Mapping[str, object]` until it has.

Payloads are typed `Mapping[str, Any]` where the log allows any JSON (a `data` object, a content
block of a kind we do not know), so a `UserMessage` fits where a generic payload is expected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

__all__ = [
    "SURFACE_TYPES",
    "AssistantMessage",
    "AssistantMessageData",
    "CheckpointSource",
    "ContentBlock",
    "DirectSource",
    "LogEvent",
    "MessageSource",
    "ModelSource",
    "PluginSource",
    "ReferenceRecord",
    "ReplaceOp",
    "SessionHeader",
    "SessionReferenceSource",
    "SurfaceEvent",
    "SurfaceOp",
    "SurfaceSnapshot",
    "SurfaceType",
    "TextBlock",
    "UserMessage",
    "text_block",
]


# --- content -------------------------------------------------------------------------------------


class TextBlock(TypedDict):
    """A text content block: the only kind projection reads (docs/contract.md §3.3)."""

    type: Literal["text"]
    text: str


ContentBlock: TypeAlias = Mapping[str, Any]
"""One content block: a `TextBlock`, or a block of another kind (an image, a tool call) kept verbatim."""


def text_block(text: str) -> TextBlock:
    """`{"type": "text", "text": text}`."""
    return {"type": "text", "text": text}


# --- message sources ------------------------------------------------------------------------------


class DirectSource(TypedDict):
    """A message a person typed. Only these (and checkpoints) are projected into a reference."""

    kind: Literal["user"]


class CheckpointSource(TypedDict):
    """A compaction checkpoint (docs/contract.md, decision D7): it summarises what came before it."""

    kind: Literal["plugin"]
    plugin: Literal["compact"]
    compactionId: NotRequired[str]


class PluginSource(TypedDict):
    """Context a plugin injected (any `plugin` other than `compact`); never projected."""

    kind: Literal["plugin"]
    plugin: str


class ReferenceRecord(TypedDict):
    """One referenced session in a context message's source, keys in upstream order (§5).

    `capturedFormatVersion` is absent in the rc8 profile (docs/contract.md §0).
    """

    sessionId: str
    label: str
    capturedFormatVersion: NotRequired[int]
    capturedThroughSeq: int | None
    compacted: bool
    originalMessages: int
    retainedMessages: int
    omittedMessages: int
    omittedBytes: int
    truncated: bool
    inputIndex: int


class SessionReferenceSource(TypedDict):
    """The source of a context message: the snapshots of the sessions a message cited (§5)."""

    kind: Literal["session-reference"]
    form: Literal["recall"]
    version: Literal[1]
    references: list[ReferenceRecord]


MessageSource: TypeAlias = DirectSource | CheckpointSource | PluginSource | SessionReferenceSource
"""Who a user message comes from; `kind` tells the variants apart (`plugin` tells a checkpoint)."""


class ModelSource(TypedDict):
    """The source of an assistant message: the model that wrote it."""

    kind: Literal["model"]
    provider: str
    model: str


# --- messages -------------------------------------------------------------------------------------


class UserMessage(TypedDict):
    """A `user/message` payload `{source, content, role, id}` (the upstream key order)."""

    source: MessageSource
    content: list[ContentBlock]
    role: Literal["user"]
    id: str


class AssistantMessage(TypedDict):
    """The message inside an `assistant/message` payload."""

    id: str
    role: Literal["assistant"]
    content: list[ContentBlock]
    source: ModelSource


class AssistantMessageData(TypedDict):
    """An `assistant/message` payload: the message, and the turn and step that produced it (if known)."""

    turn: NotRequired[int]
    step: NotRequired[int]
    message: AssistantMessage


# --- the log ---------------------------------------------------------------------------------------


class SessionHeader(TypedDict):
    """The first line of a log (§3.1). DSH writes more keys; readers ignore the ones they do not know."""

    type: Literal["session"]
    version: int
    id: str
    createdAt: int
    cwd: NotRequired[str]
    delegationDepth: NotRequired[int]


class ReplaceOp(TypedDict):
    """`surfaceOp` of a replacing event: it takes the place of surface seqs `start`..`end` (§3.2)."""

    op: Literal["replace"]
    start: int
    end: int


SurfaceOp: TypeAlias = Literal["append"] | ReplaceOp
"""How a surface event changes the conversation (glossary: surfaceOp)."""

SurfaceType: TypeAlias = Literal["user/message", "assistant/message", "tool/result", "system/message"]
"""The event types that make up the surface (`system/message`: later contract, never projected)."""

SURFACE_TYPES: frozenset[str] = frozenset(
    {"user/message", "assistant/message", "tool/result", "system/message"}
)
"""`SurfaceType`'s values, for membership tests on an event read from a log."""


class LogEvent(TypedDict):
    """One log line after the header (§3.1): `{type, seq, time, data, sourceEventSeqs?, surfaceOp?}`.

    `data` is a `UserMessage` for `user/message`, an `AssistantMessageData` for
    `assistant/message`, and any JSON object for the other types.
    """

    type: str
    seq: int
    time: int
    data: Mapping[str, Any]
    sourceEventSeqs: NotRequired[list[int]]
    surfaceOp: NotRequired[SurfaceOp]


class SurfaceEvent(TypedDict):
    """A `LogEvent` of a `SurfaceType`, as folding leaves it on the surface (§3.2)."""

    type: SurfaceType
    seq: int
    time: int
    data: Mapping[str, Any]
    sourceEventSeqs: NotRequired[list[int]]
    surfaceOp: SurfaceOp


class SurfaceSnapshot(TypedDict):
    """The folded current surface of one session (§3.2): what the reference service reads.

    `capturedThroughSeq` is the seq of the last event of the log, of any type (None for a log
    without events); `events` are the surface events in fold order: a read-only sequence (a
    store may parse them from the log each time they are read, so readers iterate it).
    """

    session: SessionHeader
    capturedThroughSeq: int | None
    events: Sequence[SurfaceEvent]
