"""Reading a Claude Code, Codex CLI or Gemini CLI session through the store: bounded, read-only (issue 11)."""

from __future__ import annotations

import json
import os
from contextlib import closing
from pathlib import Path

import pytest
from foreign_fixtures import CART, CI, SPLIT, fixture_roots, open_with
from sessionref.agent import AgentError
from sessionref.contract.errors import CodedError
from sessionref.contract.projection import project_session_conversation
from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref.host.workspace import Workspace
from sessionref.service.references import SessionReferences
from sessionref.sources import claude_code
from sessionref.store import StoreError

CART_FILE = ("projects", "-home-ana-shop", "5f1c2a9e-3b7d-4c1e-9a2f-0d8e6b4c1a01.jsonl")


class NoModel:
    """A model the refused sends never reach."""

    name = "none"

    async def aclose(self) -> None:
        """Nothing to release."""


async def test_the_surface_is_the_readers_with_skipped_positions_and_no_half_line(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    with closing(open_with(tmp_path, roots)) as store:
        path = roots["claude-code"].joinpath(*CART_FILE)
        expected = claude_code.read_session(roots["claude-code"], path)
        report = await store.read_surface_report(CART)
        assert report.snapshot == expected.snapshot
        assert report.skipped_lines == expected.skipped_at
        # The fixture's malformed line is named; its half-written last line is not there yet.
        assert len(report.skipped_lines) == expected.skipped_lines - 1 >= 1
        log = store.read_log_report(CART)
        assert log.header == store.header(CART) == report.snapshot["session"]
        assert [event["seq"] for event in log.events] == [event["seq"] for event in report.snapshot["events"]]
        assert report.snapshot["capturedThroughSeq"] == max(event["seq"] for event in log.events)


async def test_the_half_written_last_line_counts_once_another_program_finishes_it(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    with closing(open_with(tmp_path, roots)) as store:
        path = roots["claude-code"].joinpath(*CART_FILE)
        before = await store.read_surface_report(CART)
        with path.open("a", encoding="utf-8") as stream:  # the tool finishes writing its answer
            stream.write(' else?"}]},"type":"assistant","uuid":"c1a00000-0000-4000-8000-000000000017",'
                         '"timestamp":"2026-03-02T09:02:30.000Z"}\n')  # fmt: skip
        after = await store.read_surface_report(CART)
        texts = [
            block["text"]
            for event in after.snapshot["events"]
            if event["type"] == "assistant/message"
            for block in event["data"]["message"]["content"]
        ]
        assert "Stopped. Anything else?" in texts
        assert after.snapshot["capturedThroughSeq"] == 23 > before.snapshot["capturedThroughSeq"]
        assert after.skipped_lines == before.skipped_lines


@pytest.mark.parametrize("session_id", [CART, SPLIT, CI])
async def test_every_write_into_a_foreign_session_is_refused_with_the_next_step(
    tmp_path: Path, session_id: str
) -> None:
    roots = fixture_roots(tmp_path)
    with closing(open_with(tmp_path, roots)) as store:
        assert not store.is_writable(session_id)
        refusal = store.write_refusal(session_id)
        assert refusal is not None and refusal.code == "STORE_READ_ONLY"
        assert "start a new session and mention it with @" in refusal.message
        assert store.source_of(session_id).name in refusal.message  # type: ignore[union-attr]
        for action in (
            lambda: store.append(session_id, [{"type": "turn/end", "data": {}}]),
            lambda: store.rename(session_id, "mine now"),
            lambda: store.write_compaction(session_id, "summary"),
            lambda: store.delete_session(session_id),
        ):
            with pytest.raises(StoreError) as caught:
                action()
            assert caught.value.code == "STORE_READ_ONLY"
        workspace = Workspace(store, NoModel(), cwd="/home/ana/shop")
        with pytest.raises(AgentError) as refused:
            await workspace.submit(workspace.agent(session_id), "hello from sessionref")
        assert refused.value.code == "AGENT_READ_ONLY"
        assert refused.value.message == refusal.message
        await workspace.close(close_store=False)


async def test_a_mention_of_a_foreign_session_prepares_its_snapshot(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    with closing(open_with(tmp_path, roots)) as store:
        service = SessionReferences(store)
        record = store.create_session(cwd="/home/ana/shop")
        mention = format_session_reference_mention(SessionReference(CART, "cart"))
        prepared = await service.prepare_text(
            Workspace(store, NoModel(), cwd=None).agent(record.id), f"compare with {mention}"
        )
        (reference,) = prepared.references
        assert reference["sessionId"] == CART
        surface = await store.read_surface(CART)
        assert reference["capturedThroughSeq"] == surface["capturedThroughSeq"]
        assert prepared.additional_context is not None
        context = prepared.additional_context["content"][0]["text"]
        assert f'"sessionId":"{CART}"' in context
        first = project_session_conversation(surface)[0].text
        assert json.dumps(first, ensure_ascii=False)[1:-1] in context


async def test_a_file_gone_or_turned_into_a_link_out_of_the_root_fails_with_a_code(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    with closing(open_with(tmp_path, roots)) as store:
        path = roots["claude-code"].joinpath(*CART_FILE)
        outside = tmp_path / "outside.jsonl"
        outside.write_bytes(path.read_bytes())
        path.unlink()
        with pytest.raises(CodedError) as gone:
            await store.read_surface(CART)
        assert gone.value.code == "FOREIGN_SOURCE_UNREADABLE"
        os.symlink(outside, path)
        with pytest.raises(CodedError) as linked:
            store.read_log_report(CART)
        assert linked.value.code == "FOREIGN_SOURCE_OUTSIDE_ROOT"
