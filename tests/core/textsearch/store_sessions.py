"""Events and stores for the conversation-index integration tests (real `SessionStore`, real logs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessionref.store import SessionStore, open_store


def said(text: str, number: int = 0) -> dict[str, Any]:
    """A direct user message event, ready for `store.append`."""
    data = {
        "source": {"kind": "user"},
        "content": [{"type": "text", "text": text}],
        "role": "user",
        "id": f"u{number}-{abs(hash(text))}",
    }
    return {"type": "user/message", "data": data, "surfaceOp": "append"}


def answered(text: str) -> dict[str, Any]:
    """An assistant message event."""
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
    """Context a plugin put into the session: never indexed."""
    event = said(text)
    event["data"]["source"] = {"kind": "plugin", "plugin": "workspace"}
    return event


def chunk(text: str) -> dict[str, Any]:
    """A streamed delta: log-only, never indexed."""
    return {
        "type": "assistant/chunk",
        "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": text}},
    }


def seeded_store(root: Path) -> SessionStore:
    """Three sessions: two in /work (one about pg_dump, one about retries), one elsewhere about pg_dump."""
    store = open_store(root)
    store.create_session(cwd="/work", session_id="dump-here", created_at=1_000)
    store.append(
        "dump-here",
        [said("how do we restore the billing dump"), answered("use pg_dump with --no-owner")],
        time_ms=2_000,
    )
    store.create_session(cwd="/work", session_id="retry-here", created_at=1_000)
    store.append(
        "retry-here",
        [said("the retry budget is three attempts"), injected("secret pg_dump context")],
        time_ms=3_000,
    )
    store.create_session(cwd="/elsewhere", session_id="dump-there", created_at=1_000)
    store.append("dump-there", [said("pg_dump failed on the replica")], time_ms=4_000)
    return store
