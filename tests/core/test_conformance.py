"""Byte-exact differential test against vectors produced by the upstream implementation.

Every line of every `*.jsonl` under `$SESSIONREF_VECTORS` (default: the vectors the
repository carries in `tests/conformance/vectors`) is run through the public API and
compared with its `out`. Errors compare `name`, `code`, `message` and only the
`name` of a `cause`. One test per file; mismatches are collected and the first
few reported readably.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sessionref.contract.errors import SessionReferenceError, js_error_name
from sessionref.contract.js_json import UNDEFINED, stringify_tag_safe_json
from sessionref.contract.projection import UnreachableSurfaceEventError
from sessionref.contract.reference_budget import retain_referenced_session
from sessionref.contract.text_retainer import TextRetainer, truncate_with_notice
from sessionref.contract.uri import (
    decode_session_reference_uri,
    encode_session_reference_uri,
    format_session_reference_mention,
    parse_session_reference_text,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_VECTOR_DIR = REPO_ROOT / "tests" / "conformance" / "vectors"
VECTOR_DIR = Path(os.environ.get("SESSIONREF_VECTORS", DEFAULT_VECTOR_DIR))
VECTOR_FILES = sorted(VECTOR_DIR.rglob("*.jsonl")) if VECTOR_DIR.is_dir() else []
SHOWN_MISMATCHES = 5


def error_shape(error: BaseException) -> dict[str, Any]:
    """The vector error object for an exception raised by the implementation."""
    if isinstance(error, SessionReferenceError):
        return error.to_json()
    return {"name": js_error_name(error), "code": getattr(error, "code", None), "message": str(error)}


def run_encode(request: dict[str, Any]) -> Any:
    return encode_session_reference_uri(request["id"])


def run_decode(request: dict[str, Any]) -> Any:
    return decode_session_reference_uri(request["uri"])


def run_format(request: dict[str, Any]) -> Any:
    return format_session_reference_mention(request["ref"])


def run_parse(request: dict[str, Any]) -> Any:
    parsed = parse_session_reference_text(request["text"])
    references = [{"sessionId": ref.session_id, "label": ref.label} for ref in parsed.references]
    return {"text": parsed.text, "references": references}


def run_stringify(request: dict[str, Any]) -> Any:
    return stringify_tag_safe_json(request.get("value", UNDEFINED))


def run_truncate(request: dict[str, Any]) -> Any:
    truncated = truncate_with_notice(request["text"], request["maxBytes"])
    return {"text": truncated.text, "omittedBytes": truncated.omitted_bytes}


def run_retainer(request: dict[str, Any]) -> Any:
    retainer = TextRetainer.from_strategy(request["strategy"])
    pushes = []
    for chunk in request["chunks"]:
        pushed = retainer.push(bytes(chunk["bytes"]) if isinstance(chunk, dict) else chunk)
        pushes.append({"kept": pushed.kept, "truncated": pushed.truncated})
    return {"pushes": pushes, "result": retainer.finish().to_json()}


def run_retain(request: dict[str, Any]) -> Any:
    retained = retain_referenced_session(request["snapshot"], request["label"], request["maxBytes"])
    if retained is None:
        return None
    return {"data": retained.data, "stats": retained.stats.to_json()}


@functools.cache
def load_prepare_runner() -> Callable[[dict[str, Any]], dict[str, Any]]:
    """`run_prepare_vector` from `conformance_prepare.py` beside this file (the service's own runner)."""
    path = Path(__file__).with_name("conformance_prepare.py")
    spec = importlib.util.spec_from_file_location("sessionref_conformance_prepare", path)
    if spec is None or spec.loader is None or not path.exists():
        raise RuntimeError(f"prepare vectors need {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run_prepare_vector


RUNNERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "encode": run_encode,
    "decode": run_decode,
    "format": run_format,
    "parse": run_parse,
    "stringify": run_stringify,
    "truncate": run_truncate,
    "retainer": run_retainer,
    "retain": run_retain,
}


def respond(request: dict[str, Any]) -> dict[str, Any]:
    """The response `{"ok": …}` or `{"error": …}` the implementation gives to one vector request."""
    op = request.get("op")
    if op == "prepare":
        return load_prepare_runner()(request)
    runner = RUNNERS.get(str(op))
    if runner is None:
        raise LookupError(f"unknown vector op {op!r}")
    try:
        return {"ok": runner(request)}
    except (SessionReferenceError, UnreachableSurfaceEventError, TypeError, ValueError) as error:
        return {"error": error_shape(error)}


def comparable(response: Any) -> Any:
    """`response` with error causes reduced to their name (V8 wording of causes is not compared)."""
    if isinstance(response, dict) and isinstance(response.get("error"), dict):
        error = dict(response["error"])
        cause = error.pop("cause", None)
        if cause is not None:
            error["causeName"] = cause.get("name") if isinstance(cause, dict) else None
        return {"error": error}
    return response


def clip(value: Any, limit: int = 400) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def mismatches_in(path: Path) -> tuple[int, list[str]]:
    """Run every line of `path`; return (lines run, readable mismatch reports)."""
    reports: list[str] = []
    count = 0
    with path.open(encoding="utf-8", newline="") as handle:
        lines = handle.read().split("\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        count += 1
        case = json.loads(line)
        request, expected = case["in"], case["out"]
        try:
            actual = respond(request)
        except Exception as error:  # a crash on one line is a mismatch, not the end of the file
            actual = {"crash": f"{type(error).__name__}: {error}"}
        if comparable(actual) != comparable(expected):
            reports.append(
                f"{path.name}:{number} op={request.get('op')!r}\n"
                f"    in:       {clip(request)}\n"
                f"    expected: {clip(expected)}\n"
                f"    actual:   {clip(actual)}"
            )
    return count, reports


@pytest.mark.conformance
@pytest.mark.parametrize("path", VECTOR_FILES or [None], ids=lambda path: path.name if path else "no-vectors")
def test_vector_file_matches_upstream(path: Path | None) -> None:
    assert path is not None, f"no *.jsonl conformance vectors under {VECTOR_DIR}"
    count, reports = mismatches_in(path)
    assert count > 0, f"{path} holds no vectors"
    shown = "\n".join(reports[:SHOWN_MISMATCHES])
    assert not reports, f"{len(reports)} of {count} vectors in {path.name} differ from upstream:\n{shown}"


def test_a_wrong_expectation_is_reported(tmp_path: Path) -> None:
    lines = [
        {"in": {"op": "encode", "id": "abc"}, "out": {"ok": "dsh-session:ImFiYyI"}},
        {"in": {"op": "encode", "id": "abc"}, "out": {"ok": "dsh-session:WRONG"}},
        {"in": {"op": "decode", "uri": "dsh-session:IiJ"}, "out": {"ok": ""}},
    ]
    vectors = tmp_path / "mixed.jsonl"
    vectors.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    count, reports = mismatches_in(vectors)
    assert count == 3
    assert [report.split()[0] for report in reports] == ["mixed.jsonl:2", "mixed.jsonl:3"]
    assert "SESSION_REFERENCE_INVALID_REFERENCE" in reports[1]


def test_an_unknown_op_is_a_mismatch(tmp_path: Path) -> None:
    vectors = tmp_path / "odd.jsonl"
    vectors.write_text(json.dumps({"in": {"op": "teleport"}, "out": {"ok": None}}) + "\n", encoding="utf-8")
    count, reports = mismatches_in(vectors)
    assert count == 1
    assert "unknown vector op 'teleport'" in reports[0]


def test_cause_is_compared_by_name_only() -> None:
    def failure(cause: dict[str, str] | None) -> dict[str, Any]:
        error: dict[str, Any] = {"name": "E", "code": None, "message": "m"}
        if cause is not None:
            error["cause"] = cause
        return {"error": error}

    expected = failure({"name": "SyntaxError", "message": "x"})
    assert comparable(failure({"name": "SyntaxError", "message": "y"})) == comparable(expected)
    assert comparable(failure({"name": "TypeError", "message": "x"})) != comparable(expected)
    assert comparable(failure(None)) != comparable(expected)


def test_lines_are_split_on_newline_only(tmp_path: Path) -> None:
    vectors = tmp_path / "separators.jsonl"
    text = "a\u2028b\x85c"
    case = {"in": {"op": "parse", "text": text}, "out": {"ok": {"text": text, "references": []}}}
    line = json.dumps(case, ensure_ascii=False)
    vectors.write_text(line + "\n", encoding="utf-8")
    assert mismatches_in(vectors) == (1, [])
