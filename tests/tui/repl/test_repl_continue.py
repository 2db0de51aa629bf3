"""`/continue`: the line mode's way out of a read-only session (the app's Ctrl+F), issue 21."""

from __future__ import annotations

from pathlib import Path

import zstandard
from repl_harness import Harness
from sessionref.contract.uri import SessionReference, format_session_reference_mention


def make_read_only(harness: Harness, session_id: str) -> None:
    """Compress the session's log the way DSH stores old sessions (read-only for us)."""
    root = Path(harness.store.root)
    (log,) = [path for path in root.rglob("session.jsonl") if session_id in path.read_text("utf-8")[:300]]
    log.with_suffix(".jsonl.zstd").write_bytes(zstandard.ZstdCompressor().compress(log.read_bytes()))
    log.unlink()
    harness.store.refresh()
    assert not harness.store.is_writable(session_id)


async def test_continue_from_a_read_only_session_starts_a_new_one_mentioning_it(harness: Harness) -> None:
    make_read_only(harness, "abacus-id")
    harness.type("/switch abacus\r")
    await harness.until(lambda: harness.mode.agent.id == "abacus-id")
    harness.type("more beads?\r")
    await harness.until(lambda: harness.printed("/continue starts a new session"))
    harness.mode.session.default_buffer.text = ""
    harness.type("/continue and then?\r")
    chip = format_session_reference_mention(SessionReference("abacus-id", "Abacus"))
    await harness.until(lambda: harness.text == f"{chip} and then? ")
    assert harness.mode.agent.id != "abacus-id"
    assert harness.printed("new session mentioning “Abacus”")
    harness.type("\r")
    await harness.until(lambda: any(e["type"] == "turn/end" for e in harness.events()))
    kinds = [e["data"]["source"]["kind"] for e in harness.events() if e["type"] == "user/message"]
    assert kinds == ["session-reference", "user"]
