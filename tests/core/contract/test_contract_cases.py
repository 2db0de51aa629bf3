"""Named cases from the upstream test suite (`conformance/cases.json`) for the pure contract functions.

The service functions of the same file (`prepare`, `listCandidates`, …) are run
by the service's own tests.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sessionref.contract.errors import SessionReferenceError
from sessionref.contract.js_json import UNDEFINED, stringify_tag_safe_json, utf8_len
from sessionref.contract.projection import ProjectedItem
from sessionref.contract.reference_budget import retain_projected_items
from sessionref.contract.text_retainer import head_tail_retain, truncate_with_notice
from sessionref.contract.uri import (
    decode_session_reference_uri,
    encode_session_reference_uri,
    format_session_reference_mention,
    parse_session_reference_text,
)

CASES_FILE = Path(
    os.environ.get("SESSIONREF_CASES", Path(__file__).resolve().parents[2] / "conformance" / "cases.json")
)


def run_parse(text: str) -> dict[str, Any]:
    parsed = parse_session_reference_text(text)
    return {
        "text": parsed.text,
        "references": [{"sessionId": ref.session_id, "label": ref.label} for ref in parsed.references],
    }


def run_tag_safe_json(value: Any) -> str:
    return stringify_tag_safe_json(UNDEFINED if value == "__undefined__" else value)


def run_head_tail(request: dict[str, Any]) -> dict[str, Any]:
    retained = head_tail_retain(request["text"], request["headBytes"], request["tailBytes"])
    omitted = retained.omitted_bytes or 0
    return {"text": retained.text, "truncated": retained.truncated, "omittedBytes": omitted}


def run_truncate(request: dict[str, Any]) -> dict[str, Any]:
    truncated = truncate_with_notice(request["text"], request["maxOutputBytes"])
    return {"text": truncated.text, "omittedBytes": truncated.omitted_bytes}


def run_retain(request: dict[str, Any]) -> dict[str, Any] | None:
    items = [ProjectedItem(item["role"], item["text"], item["checkpoint"]) for item in request["projected"]]
    retained = retain_projected_items(
        items,
        session_id=request["sessionId"],
        label=request["label"],
        cwd=request["cwd"],
        captured_through_seq=request["capturedThroughSeq"],
        max_bytes=request["maxBytes"],
    )
    if retained is None:
        return None
    assert retained.data_bytes == utf8_len(stringify_tag_safe_json(retained.data))
    return {"data": retained.data, "stats": retained.stats.to_json(), "dataBytes": retained.data_bytes}


RUNNERS: dict[str, Callable[[Any], Any]] = {
    "encode": encode_session_reference_uri,
    "decode": decode_session_reference_uri,
    "format": format_session_reference_mention,
    "parse": run_parse,
    "tagSafeJson": run_tag_safe_json,
    "textRetainerHeadTail": run_head_tail,
    "truncateWithNotice": run_truncate,
    "retain": run_retain,
}


def load_cases() -> list[dict[str, Any]]:
    cases = json.loads(CASES_FILE.read_text(encoding="utf-8"))
    return [case for case in cases if case["fn"] in RUNNERS]


CASES = load_cases() if CASES_FILE.exists() else []


def case_id(case: dict[str, Any]) -> str:
    return f"{case['fn']}-{case.get('name') or CASES.index(case)}"


def test_cases_file_is_present() -> None:
    assert CASES, f"no pure-contract cases found in {CASES_FILE}"
    assert {case["fn"] for case in CASES} == set(RUNNERS)


@pytest.mark.conformance
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_upstream_case(case: dict[str, Any]) -> None:
    runner = RUNNERS[case["fn"]]
    if "error" not in case:
        assert runner(case["in"]) == case["out"]
        return
    if case["error"] == "TypeError":
        with pytest.raises(TypeError) as raised:
            runner(case["in"])
    else:
        with pytest.raises(SessionReferenceError) as raised:
            runner(case["in"])
        assert raised.value.code == case["error"]
    assert str(raised.value) == case["message"]
