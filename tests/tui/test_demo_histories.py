"""The demo's Claude Code, Codex CLI and Gemini CLI homes: read by the real readers, nothing skipped."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sessionref.contract.projection import project_session_conversation
from sessionref.store import open_store
from sessionref.store.foreign_state import ForeignRoot
from sessionref_tui.demo_histories import seed_demo_histories

NOW_MS = 1_800_000_000_000
HERE = "/home/ana/src/payments"


def test_every_demo_history_is_a_clean_session_with_its_title(tmp_path: Path) -> None:
    homes = seed_demo_histories(tmp_path / "agents", HERE, now_ms=NOW_MS)
    sources = [ForeignRoot.of(kind, root) for kind, root in homes.items()]
    store = open_store(tmp_path / "store", sources=sources)
    try:
        records = asyncio.run(store.list_sessions())
        titles = {f"{record.id.split(':')[0]} {store.title(record.id)}": record.cwd for record in records}
        assert titles == {
            "claude-code Speed up CI (14 → 4 min)": HERE,
            "claude-code Refund webhook signature check": "/srv/billing-service",
            "codex Payments API pagination": HERE,
            "gemini Q3 roadmap summary": "/home/ana/notes",
        }
        for record in records:
            report = asyncio.run(store.read_surface_report(record.id))
            assert report.skipped_lines == ()
            texts = " ".join(item.text for item in project_session_conversation(report.snapshot))
            for left_out in ("toolu_", "environment_context", "Thinking about", "call_1", "jobs:"):
                assert left_out not in texts
        assert all(record.last_activity <= NOW_MS for record in records)
    finally:
        store.close()
