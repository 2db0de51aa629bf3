"""A remote session as a surface: the catalog's copy rebuilt so the snapshot projection gives it back.

The catalog holds a session's projected messages, not its log. `surface_from_rows` builds a
`SurfaceSnapshot` with one event per message (a person's text as a direct `user/message`, a
checkpoint as a `plugin: compact` one, the assistant's as an `assistant/message`), so that
`project_conversation_columns` of it yields exactly the published rows, in order: the reference
service captures a remote session like any other, and the capture is immutable like every snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from sessionref.contract.events import SurfaceEvent, SurfaceSnapshot

CATALOG_MODEL_SOURCE: Final = {"kind": "model", "provider": "sessionref-catalog", "model": "published"}
"""The source of a rebuilt assistant message: the catalog does not publish which model wrote it."""


def _event(session_id: str, seq: int, role: str, kind: str, time: int, text: str) -> SurfaceEvent:
    content: list[Any] = [{"type": "text", "text": text}]
    message_id = f"{session_id}#{seq}"
    if role == "assistant":
        data: dict[str, Any] = {
            "message": {
                "id": message_id,
                "role": "assistant",
                "content": content,
                "source": dict(CATALOG_MODEL_SOURCE),
            }
        }
        return {"type": "assistant/message", "seq": seq, "time": time, "data": data, "surfaceOp": "append"}
    source = {"kind": "plugin", "plugin": "compact"} if kind == "checkpoint" else {"kind": "user"}
    data = {"source": source, "content": content, "role": "user", "id": message_id}
    return {"type": "user/message", "seq": seq, "time": time, "data": data, "surfaceOp": "append"}


def surface_from_rows(
    session_id: str,
    created_at: int,
    cwd: str | None,
    through_seq: int | None,
    format_version: int,
    rows: Iterable[tuple[int, str, str, int, str]],
) -> SurfaceSnapshot:
    """The surface of a published session from its `(seq, role, kind, time, text)` rows (seq order);
    `format_version` is its source log's (what a capture reports as `capturedFormatVersion`)."""
    header: Any = {"type": "session", "version": format_version, "id": session_id, "createdAt": created_at}
    if cwd is not None:
        header["cwd"] = cwd
    events = [_event(session_id, *row) for row in rows]
    last = events[-1]["seq"] if events else None
    through = through_seq if through_seq is not None else last
    return {"session": header, "capturedThroughSeq": through, "events": events}
