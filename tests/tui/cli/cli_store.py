"""Test data for the CLI tests: log events as the agent writes them, and a small store with three sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessionref.store import open_store

HERE = "/home/ana/app"
ELSEWHERE = "/srv/other"
HOSTILE_ID = "hostile\x1b[31m"


def user_message(text: str, message_id: str) -> dict[str, Any]:
    """A direct user message event, as the agent writes it."""
    data = {
        "source": {"kind": "user"},
        "content": [{"type": "text", "text": text}],
        "role": "user",
        "id": message_id,
    }
    return {"type": "user/message", "data": data, "surfaceOp": "append"}


def assistant_message(text: str, turn: int = 1) -> dict[str, Any]:
    """A completed assistant reply event."""
    message = {
        "id": f"a{turn}",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "model", "provider": "demo", "model": "demo"},
    }
    return {
        "type": "assistant/message",
        "data": {"turn": turn, "step": 1, "message": message},
        "surfaceOp": "append",
    }


def build_store(root: Path) -> Path:
    """Three sessions: `alpha` (in HERE, titled), `beta` (ELSEWHERE), and one with a hostile id and text."""
    root.mkdir(parents=True, exist_ok=True)
    store = open_store(root)
    try:
        store.create_session(cwd=HERE, session_id="alpha", created_at=1_700_000_000_000)
        store.append(
            "alpha", [user_message("How do I parse ABNF?", "u1"), assistant_message("Use a grammar.")]
        )
        store.rename("alpha", "ABNF parser notes")
        store.create_session(cwd=ELSEWHERE, session_id="beta", created_at=1_700_000_100_000)
        store.append("beta", [user_message("beta question", "u2")])
        store.create_session(cwd=None, session_id=HOSTILE_ID, created_at=1_600_000_000_000)
        store.append(HOSTILE_ID, [user_message("evil \x1b]0;pwned\x07 text", "u3")])
    finally:
        store.close()
    return root


LONG_ID = "0b6f4c9e-51d2-4f0e-9a51-7d3c2b1a0f99-with-a-long-tail-0123456789abcdef"
TWIN_A = "7a00ffee-1111-4000-8000-000000000001"
TWIN_B = "7a00ffee-2222-4000-8000-000000000002"


def build_id_store(root: Path) -> Path:
    """Sessions whose ids test copying and prefixes: a long id, two sharing a prefix, `abc` and `abcd`."""
    root.mkdir(parents=True, exist_ok=True)
    store = open_store(root)
    try:
        for offset, session_id in enumerate([LONG_ID, TWIN_A, TWIN_B, "abc", "abcd"]):
            store.create_session(cwd=HERE, session_id=session_id, created_at=1_700_000_000_000 + offset)
            store.append(session_id, [user_message(f"question in {session_id}", f"u{offset}")])
        store.rename(LONG_ID, "A title long enough that the title column has to cut it somewhere")
    finally:
        store.close()
    return root
