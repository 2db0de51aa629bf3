"""Sessions for the catalog tests: real stores with events a person, a model and tools wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessionref.store import SessionStore, open_store


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
