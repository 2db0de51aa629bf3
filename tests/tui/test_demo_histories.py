"""The demo's homes of the other agents: read by the real readers, nothing skipped."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from sessionref.contract.projection import project_session_conversation
from sessionref.service.protocols import ConversationRequest
from sessionref.sources.registry import SOURCES
from sessionref.store import open_store
from sessionref.store.foreign_state import ForeignRoot
from sessionref.textsearch.store_index import StoreConversationIndex
from sessionref_tui.demo_histories import seed_demo_histories

NOW_MS = 1_800_000_000_000
HERE = "/home/ana/src/payments"


def test_every_registered_source_has_a_demo_home(tmp_path: Path) -> None:
    homes = seed_demo_histories(tmp_path / "agents", HERE, now_ms=NOW_MS)
    assert sorted(homes) == sorted(info.kind for info in SOURCES)  # a first-time user sees every mark
    assert all(home.is_relative_to(tmp_path) for home in homes.values())


def test_every_demo_history_is_a_clean_session_with_its_title(tmp_path: Path) -> None:
    homes = seed_demo_histories(tmp_path / "agents", HERE, now_ms=NOW_MS)
    sources = [ForeignRoot.of(kind, root) for kind, root in homes.items()]
    crush_project = str((tmp_path / "agents").resolve() / "crush-project")
    store = open_store(tmp_path / "store", sources=sources)
    try:
        records = asyncio.run(store.list_sessions())
        titles = {f"{record.id.split(':')[0]} {store.title(record.id)}": record.cwd for record in records}
        assert titles == {
            "claude-code Speed up CI (14 → 4 min)": HERE,
            "claude-code Refund webhook signature check": "/srv/billing-service",
            "codex Payments API pagination": HERE,
            "gemini Q3 roadmap summary": "/home/ana/notes",
            "antigravity Fix the broken links in the onboarding page": "/home/ana/team-wiki",
            "copilot Terraform bucket recreate": "/srv/infra",
            "opencode Docs site search": "/home/ana/team-wiki",
            "qwen-code Make the shell scripts pass shellcheck": "/srv/infra",
            "cursor Dark mode toggle": None,  # Cursor's database names no folder
            "cursor-agent Remove the unused feature flags": None,  # its folder is not the process's
            "crush Retry the upload when the link drops": crush_project,  # "Untitled Session" is no title
        }  # Crush's sub-agent session is hidden
        for record in records:
            report = asyncio.run(store.read_surface_report(record.id))
            assert report.skipped_lines == ()
            texts = " ".join(item.text for item in project_session_conversation(report.snapshot))
            left_out_texts = (
                "toolu_",
                "environment_context",
                "Thinking about",
                "call_1",
                "jobs:",
                "Check each",
            )
            for left_out in (*left_out_texts, "grep -r", "toolRequests", "coding agent", "Sub-agent"):
                assert left_out not in texts
        assert all(record.last_activity <= NOW_MS for record in records)
    finally:
        store.close()


def test_what_other_agents_said_is_searchable_and_their_tools_and_thinking_are_not(tmp_path: Path) -> None:
    """Issue 10 covers issue 11's sources: the conversation index reads them through the store."""
    homes = seed_demo_histories(tmp_path / "agents", HERE, now_ms=NOW_MS)
    sources = [ForeignRoot.of(kind, root) for kind, root in homes.items()]
    store = open_store(tmp_path / "store", sources=sources)
    index = StoreConversationIndex(store, live_delay=60)
    try:
        report = index.catch_up_now()
        assert report.skipped == [] and report.fed == 11

        def found(text: str) -> list[tuple[str, str, bool]]:
            request = ConversationRequest(text, 20, cwd=HERE)
            hits = index.search_conversations(request, cancel=threading.Event()).matches
            return [(hit.session_id.split(":")[0], hit.role, hit.checkpoint) for hit in hits]

        assert found("HMAC") == [("claude-code", "user", True)]  # the compaction summary (a checkpoint)
        assert found("keyset pagination") == [("codex", "assistant", False)]
        assert found("residency") == [("gemini", "assistant", False)]
        assert found("data-theme") == [("cursor", "assistant", False)]  # read from the demo's state.vscdb
        assert found("retry three times") == [("crush", "assistant", False)]  # from the project's crush.db
        assert found("four flags") == [("cursor-agent", "assistant", False)]
        # Tool output, Claude's thinking, Gemini's thought, Codex's injected scaffolding:
        for never in ("setup-python", "workflow file first", "doc structure", "environment_context"):
            assert found(never) == [], never
    finally:
        index.close()
        store.close()
