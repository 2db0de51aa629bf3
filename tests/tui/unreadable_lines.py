"""Test data: a session log with unreadable lines in the middle, as a crashed writer leaves them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessionref.store import SessionStore


def break_log(store: SessionStore, session_id: str, count: int, after: dict[str, Any]) -> list[int]:
    """Append `count` unreadable lines to `session_id`'s log, then the event `after` through the store
    (so they sit in the middle); returns their 1-based line numbers."""
    log = next(Path(store.root).glob(f"*/{session_id}/session.jsonl"))
    lines_before = log.read_bytes().count(b"\n")
    with open(log, "ab") as file:
        for index in range(count):
            file.write(b"\x00garbage from a crashed writer " + str(index).encode() + b"\xff\n")
    store.append(session_id, [after])
    return list(range(lines_before + 1, lines_before + count + 1))
