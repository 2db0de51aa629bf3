"""Golden tests: every fixture session's projection and prepared context message, checked by eye once.

Each golden file (`tests/fixtures/histories/golden/<kind>/<session>.json`) holds the session's
discovery summary, line counts, the conversation `project_session_conversation` gives for its
snapshot, and the context message `SessionReferences.prepare` builds when another session
mentions it (its random message id masked). Regenerate with `SESSIONREF_UPDATE_GOLDEN=1`
and read the diff before committing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from histories import FIXTURES, GOLDEN, FixtureSession, SnapshotQuery, fixture_sessions
from sessionref.contract.projection import project_session_conversation
from sessionref.service.references import SessionReferences
from sessionref.sources import ForeignSession, ForeignSummary

UPDATE = os.environ.get("SESSIONREF_UPDATE_GOLDEN") == "1"
SESSIONS = fixture_sessions()
MASKED_ID = "<fresh message id>"


class Target:
    """The session that mentions the fixture session."""

    id = "target-session"
    cwd = "/home/ana/shop"


def summary_shape(summary: ForeignSummary) -> dict[str, Any]:
    return {
        "sessionId": summary.session_id,
        "sourceKind": summary.source_kind,
        "nativeId": summary.native_id,
        "cwd": summary.cwd,
        "createdAt": summary.created_at,
        "updatedAt": summary.updated_at,
        "title": summary.title,
        "paths": [str(path.relative_to(FIXTURES)) for path in summary.paths],
    }


async def golden_shape(session: ForeignSession) -> dict[str, Any]:
    references = SessionReferences(SnapshotQuery([session]), {"maxReferenceBytes": 65536})
    label = session.title or session.session_id
    prepared = await references.prepare(
        Target(),
        [{"type": "text", "text": f"see @{label}"}],
        [{"sessionId": session.session_id, "label": label}],
    )
    context = prepared.additional_context
    assert context is not None
    context = {**context, "id": MASKED_ID}
    return {
        "summary": summary_shape(session.summary),
        "linesRead": session.lines_read,
        "skippedLines": session.skipped_lines,
        "capturedThroughSeq": session.snapshot["capturedThroughSeq"],
        "conversation": [item._asdict() for item in project_session_conversation(session.snapshot)],
        "context": context,
    }


def golden_path(fixture: FixtureSession) -> Path:
    return GOLDEN / fixture.kind / f"{fixture.key}.json"


def test_every_fixture_session_has_a_golden_file() -> None:
    expected = {golden_path(fixture) for fixture in SESSIONS}
    present = set(GOLDEN.glob("*/*.json"))
    assert len(SESSIONS) == 12
    assert present == expected or UPDATE


@pytest.mark.parametrize("fixture", SESSIONS, ids=lambda fixture: f"{fixture.kind}/{fixture.key}")
async def test_projection_and_context_match_golden(fixture: FixtureSession) -> None:
    actual = await golden_shape(fixture.read())
    path = golden_path(fixture)
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(actual, indent=2) + "\n", encoding="utf-8")
    assert actual == json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("fixture", SESSIONS, ids=lambda fixture: f"{fixture.kind}/{fixture.key}")
def test_discovery_scan_agrees_with_the_full_read(fixture: FixtureSession) -> None:
    assert fixture.scan() == fixture.read().summary
