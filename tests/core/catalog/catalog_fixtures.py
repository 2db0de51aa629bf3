"""Sessions for the catalog tests: real stores with events a person, a model and tools wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessionref.store import SessionStore, open_store


def said(text: str, number: int = 0) -> dict[str, Any]:
    """A message a person typed."""
    data = {"source": {"kind": "user"}, "content": [{"type": "text", "text": text}], "role": "user"}
    return {
        "type": "user/message",
        "data": {**data, "id": f"u{number}-{abs(hash(text))}"},
        "surfaceOp": "append",
    }


def answered(text: str) -> dict[str, Any]:
    """An assistant's answer."""
    message = {
        "id": f"a-{abs(hash(text))}",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "model", "provider": "demo", "model": "demo"},
    }
    return {
        "type": "assistant/message",
        "data": {"turn": 1, "step": 1, "message": message},
        "surfaceOp": "append",
    }


def injected(text: str) -> dict[str, Any]:
    """Context a plugin injected: never published."""
    event = said(text)
    event["data"]["source"] = {"kind": "plugin", "plugin": "workspace"}
    return event


def tool_output(text: str) -> dict[str, Any]:
    """A tool's result: never published."""
    message = {
        "source": {"kind": "tool", "callId": "c"},
        "content": [{"type": "text", "text": text}],
        "role": "tool",
    }
    return {"type": "tool/result", "data": {"message": message}, "surfaceOp": "append"}


def machine_store(
    root: Path, sessions: dict[str, tuple[str | None, str, list[dict[str, Any]]]]
) -> SessionStore:
    """A store at `root` with `{id: (cwd, title, events)}`, each session one second newer than the last."""
    store = open_store(root)
    for number, (session_id, (cwd, title, events)) in enumerate(sessions.items(), start=1):
        store.create_session(cwd=cwd, session_id=session_id, created_at=number * 1_000)
        store.append(session_id, events, time_ms=number * 1_000 + 500)
        store.rename(session_id, title, time_ms=number * 1_000 + 600)
    return store
