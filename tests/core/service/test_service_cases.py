"""Named upstream cases (`conformance/cases.json`) for the service: prepare, listCandidates,
the rc.8 pre-step, and the later one-reference prepare and automatic budget."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest
from fakes import Agent, FakeSessions
from rc8_prestep import prepare_direct_messages
from sessionref.contract.context_message import automatic_reference_budget, reference_record, render_prompt
from sessionref.contract.errors import SessionReferenceError
from sessionref.contract.omissions import SpillOwner, SpillRef, SpillSource
from sessionref.contract.projection import ProjectedItem
from sessionref.contract.reference_budget import retain_projected_items
from sessionref.contract.uri import SessionReference
from sessionref.service.protocols import SessionRecord
from sessionref.service.references import CapturedReference, SessionReferences, omission_notices
from sessionref.service.spill import MemorySpillStore

CASES_FILE = Path(
    os.environ.get("SESSIONREF_CASES", Path(__file__).resolve().parents[2] / "conformance" / "cases.json")
)
SERVICE_FNS = ("prepare", "listCandidates", "preStep", "laterPrepareOne", "laterAutomaticBudget")


def _load() -> list[dict[str, Any]]:
    if not CASES_FILE.exists():
        return []
    return [case for case in json.loads(CASES_FILE.read_text("utf-8")) if case["fn"] in SERVICE_FNS]


CASES = _load()


def _case_id(case: dict[str, Any]) -> str:
    index = CASES.index(case)
    return f"{case['fn']}-{case.get('name', index)}-{index}"


def _cases(fn: str) -> list[Any]:
    return [pytest.param(case, id=_case_id(case)) for case in CASES if case["fn"] == fn]


def test_the_cases_file_has_service_cases() -> None:
    assert {case["fn"] for case in CASES} == set(SERVICE_FNS)


async def _fails_as_the_case_says(call: Awaitable[Any], case: dict[str, Any]) -> None:
    """Await `call`: it must raise the case's `SessionReferenceError` code and message."""
    with pytest.raises(SessionReferenceError) as raised:
        await call
    assert (raised.value.code, raised.value.message) == (case["error"], case["message"])


def _without_ids(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != "id"}


@pytest.mark.parametrize("case", _cases("prepare"))
async def test_prepare_case(case: dict[str, Any]) -> None:
    given = case["in"]
    service = SessionReferences(FakeSessions(snapshots=given["snapshots"]), given["config"], profile="rc8")
    call = service.prepare(Agent(given["agentId"]), given["content"], given["references"])
    if "error" in case:
        await _fails_as_the_case_says(call, case)
        return
    result = await call
    assert result.content == case["out"]["content"]
    if "additionalContext" not in case["out"]:
        assert result.additional_context is None
        return
    context = result.additional_context
    assert context is not None
    assert list(context) == ["source", "content", "role", "id"]
    assert _without_ids(context) == case["out"]["additionalContext"]


def _records(given: dict[str, Any]) -> list[SessionRecord]:
    return [SessionRecord(item["id"], item["createdAt"], item.get("cwd")) for item in given["records"]]


@pytest.mark.parametrize("case", _cases("listCandidates"))
async def test_list_candidates_case(case: dict[str, Any]) -> None:
    given = case["in"]
    titles = {} if given["titles"] == "all rejected" else given["titles"]
    service = SessionReferences(FakeSessions(records=_records(given), titles=titles))
    agent = Agent(given["agent"]["id"], given["agent"].get("cwd"))
    call = service.list_candidates(agent, given["query"], given["limit"])
    if "error" in case:
        await _fails_as_the_case_says(call, case)
        return
    candidates = await call
    assert [candidate.to_json("rc8") for candidate in candidates] == case["out"]
    same = [candidate.to_json()["sameWorkspace"] for candidate in candidates]
    assert same == [agent.cwd is not None and item.get("cwd") == agent.cwd for item in case["out"]]


# The `rejected` case is the agent's pre-step chain's business (it only calls us for `enter`).
ENTERED_PRE_STEPS = [
    param for param in _cases("preStep") if param.values[0]["in"]["downstreamDecision"]["kind"] == "enter"
]


@pytest.mark.parametrize("case", ENTERED_PRE_STEPS)
async def test_pre_step_case(case: dict[str, Any]) -> None:
    given = case["in"]
    service = SessionReferences(FakeSessions(snapshots=given["snapshots"]), profile="rc8")
    decision = given["downstreamDecision"]
    call = prepare_direct_messages(service, Agent(given["agentId"]), decision["messages"], placement="after")
    if "error" in case:
        await _fails_as_the_case_says(call, case)
        return
    messages = await call
    shown = [
        {**message, "id": "<generated>"} if message["source"]["kind"] == "session-reference" else message
        for message in messages
    ]
    assert shown == case["out"]["messages"]
    for before in decision["messages"]:
        if before["source"]["kind"] != "user" or "dsh-session:" not in json.dumps(before):
            assert any(after is before for after in messages), "untouched messages keep their identity"


class FailingStore:
    async def save_text(
        self, owner: SpillOwner, source: SpillSource, suggested_name: str, content: str
    ) -> SpillRef:
        raise OSError("disk full")


def _store(kind: str) -> MemorySpillStore | FailingStore | None:
    return {"saved": MemorySpillStore(), "missing": None, "fail": FailingStore()}[kind]


@pytest.mark.parametrize("case", _cases("laterPrepareOne"))
async def test_later_prepare_one_case(case: dict[str, Any]) -> None:
    given, expected = case["in"], case["out"]
    items = [ProjectedItem(item["role"], item["text"], item["checkpoint"]) for item in given["projected"]]
    retained = retain_projected_items(
        items,
        session_id=given["sessionId"],
        label=given["label"],
        cwd=given["cwd"],
        captured_through_seq=given["capturedThroughSeq"],
        max_bytes=given["maxBytes"],
    )
    assert retained is not None
    snapshot = {
        "session": {"version": given["sessionVersion"], "id": given["sessionId"]},
        "capturedThroughSeq": given["capturedThroughSeq"],
    }
    reference = SessionReference(given["sessionId"], given["label"])
    captured = CapturedReference(reference, snapshot, retained, given["inputIndex"])
    store = _store(given["store"])
    notices = await omission_notices(store, given["targetId"], [captured])
    assert render_prompt([retained], notices) == expected["prompt"]
    record = reference_record(reference, snapshot, retained, given["inputIndex"], "later")
    assert {"kind": "session-reference", "form": "recall", "version": 1, "references": [record]} == expected[
        "source"
    ]
    saves = [saved.to_json() for saved in store.saved] if isinstance(store, MemorySpillStore) else []
    assert saves == ([] if expected["saveRequest"] is None else [expected["saveRequest"]])


def _as_surface(given: dict[str, Any]) -> dict[str, Any]:
    """A surface snapshot whose projection is exactly `given["projected"]`."""
    events = []
    for seq, item in enumerate(given["projected"]):
        content = [{"type": "text", "text": item["text"]}]
        if item["role"] == "assistant":
            message = {"id": f"a{seq}", "role": "assistant", "content": content, "source": {"kind": "model"}}
            data: dict[str, Any] = {"turn": 1, "step": 1, "message": message}
            kind = "assistant/message"
        else:
            source = {"kind": "plugin", "plugin": "compact"} if item["checkpoint"] else {"kind": "user"}
            data = {"id": f"u{seq}", "role": "user", "content": content, "source": source}
            kind = "user/message"
        events.append({"type": kind, "seq": seq, "time": 0, "data": data, "surfaceOp": "append"})
    session: dict[str, Any] = {"version": given["sessionVersion"], "id": given["sessionId"], "createdAt": 0}
    if given["cwd"] is not None:
        session["cwd"] = given["cwd"]
    return {"session": session, "capturedThroughSeq": given["capturedThroughSeq"], "events": events}


@pytest.mark.parametrize(
    "case", [param for param in _cases("laterPrepareOne") if param.values[0]["in"]["inputIndex"] == 0]
)
async def test_later_prepare_one_through_the_service(case: dict[str, Any]) -> None:
    given, expected = case["in"], case["out"]
    store = _store(given["store"])
    sessions = FakeSessions(snapshots={given["sessionId"]: _as_surface(given)})
    config = {"maxReferenceBytes": given["maxBytes"]}
    service = SessionReferences(sessions, config, spill_store=store)
    reference = {"sessionId": given["sessionId"], "label": given["label"]}
    result = await service.prepare(Agent(given["targetId"]), [], [reference])
    assert result.additional_context is not None
    assert result.additional_context["content"] == [{"type": "text", "text": expected["prompt"]}]
    assert result.additional_context["source"] == expected["source"]
    assert sessions.reads == [given["sessionId"]]


@pytest.mark.parametrize("case", _cases("laterAutomaticBudget"))
async def test_later_automatic_budget_case(case: dict[str, Any]) -> None:
    given = case["in"]
    window, fraction = given["contextWindow"], given["referenceContextFraction"]
    assert automatic_reference_budget(window, fraction) == case["out"]
    service = SessionReferences(FakeSessions(), {"referenceContextFraction": fraction}, context_window=window)
    assert await service.resolve_budget() == case["out"]
