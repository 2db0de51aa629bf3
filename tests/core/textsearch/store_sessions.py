"""Events and stores for the conversation-index integration tests (real `SessionStore`, real logs)."""

from __future__ import annotations

from pathlib import Path

from log_events import answered, injected, said
from sessionref.store import SessionStore, open_store


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
