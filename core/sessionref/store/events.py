"""Validation and envelope of events appended by the store (contract.md §3.1 key order)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from sessionref.contract.log_values import is_epoch_ms
from sessionref.store.errors import STORE_INVALID_EVENT, STORE_INVALID_ID, StoreError
from sessionref.store.fold import SURFACE_TYPES, replace_range
from sessionref.store.logfile import PACKED_CHUNK_TYPES
from sessionref.store.nesting import MAX_NESTING_DEPTH, nesting_exceeds

SESSION_FORMAT_VERSION = 0
_EXCERPT_CHARS = 80
_ALLOWED_KEYS = frozenset({"type", "data", "surfaceOp", "sourceEventSeqs"})


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _EXCERPT_CHARS else text[: _EXCERPT_CHARS - 3] + "..."


def _invalid(index: int, message: str) -> StoreError:
    return StoreError(STORE_INVALID_EVENT, f"event {index}: {message}")


def _checked(index: int, event: object) -> dict[str, Any]:
    if not isinstance(event, dict):
        raise _invalid(index, "an event must be a dict")
    extra = [key for key in event if key not in _ALLOWED_KEYS]
    if extra:
        raise _invalid(index, f"unexpected keys {_shown(sorted(map(repr, extra)))}")
    kind = event.get("type")
    if not isinstance(kind, str) or not kind or kind == "session" or kind in PACKED_CHUNK_TYPES:
        raise _invalid(index, f"invalid event type {_shown(kind)}")
    if not isinstance(event.get("data"), dict):
        raise _invalid(index, "data must be a dict")
    if kind in SURFACE_TYPES:
        if "surfaceOp" not in event:
            raise _invalid(index, f"{kind} needs a surfaceOp")
        try:
            replace_range(event["surfaceOp"])
        except Exception:
            raise _invalid(index, "surfaceOp must be 'append' or a replace range") from None
    elif "surfaceOp" in event or "sourceEventSeqs" in event:
        raise _invalid(index, f"{_shown(kind)} is log-only and cannot carry surfaceOp/sourceEventSeqs")
    seqs = event.get("sourceEventSeqs")
    if seqs is not None and (
        not isinstance(seqs, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in seqs)
    ):
        raise _invalid(index, "sourceEventSeqs must be a list of integers")
    if nesting_exceeds(event, MAX_NESTING_DEPTH):
        raise _invalid(index, f"the event nests deeper than {MAX_NESTING_DEPTH} levels")
    try:
        json.dumps(event["data"], allow_nan=False)
    except (TypeError, ValueError) as error:
        raise _invalid(index, f"data is not JSON: {_shown(str(error))}") from None
    return event


def checked_time(value: object, what: str) -> int:
    """`value` when it is epoch milliseconds of the years 1970–9999, else `STORE_INVALID_EVENT`."""
    if not is_epoch_ms(value):
        raise StoreError(STORE_INVALID_EVENT, f"{what} must be epoch milliseconds of the years 1970 to 9999")
    return value


def session_header(session_id: object, cwd: object, created_at: object) -> dict[str, Any]:
    """The header line of a new session in DSH's key order, or `STORE_INVALID_ID`/`STORE_INVALID_EVENT`."""
    if not isinstance(session_id, str) or not session_id:
        raise StoreError(STORE_INVALID_ID, "a session id must be a non-empty string")
    if cwd is not None and not isinstance(cwd, str):
        raise StoreError(STORE_INVALID_EVENT, "cwd must be a string or None")
    try:
        session_id.encode("utf-8")
        if cwd is not None:
            cwd.encode("utf-8")
    except UnicodeEncodeError:
        raise StoreError(STORE_INVALID_ID, "the session id and cwd must be valid Unicode text") from None
    header: dict[str, Any] = {
        "type": "session",
        "version": SESSION_FORMAT_VERSION,
        "id": session_id,
        "createdAt": checked_time(created_at, "createdAt"),
    }
    if cwd is not None:
        header["cwd"] = cwd
    header["delegationDepth"] = 0
    return header


def compaction_checkpoint(seqs: Sequence[int], summary: str, compaction_id: str) -> dict[str, Any]:
    """The checkpoint `user/message` replacing surface events `seqs` (in fold order) with `summary`."""
    message = {
        "source": {"kind": "plugin", "plugin": "compact", "compactionId": compaction_id},
        "content": [{"type": "text", "text": summary}],
        "role": "user",
        "id": str(uuid.uuid4()),
    }
    return {
        "type": "user/message",
        "data": message,
        "sourceEventSeqs": list(seqs),
        "surfaceOp": {"op": "replace", "start": seqs[0], "end": seqs[-1]},
    }


def build_events(events: Sequence[dict[str, Any]], *, first_seq: int, time_ms: int) -> list[dict[str, Any]]:
    """Full log events in envelope key order, seqs from `first_seq`; validates all before returning any."""
    checked = [_checked(index, event) for index, event in enumerate(events)]
    built: list[dict[str, Any]] = []
    for offset, event in enumerate(checked):
        full: dict[str, Any] = {
            "type": event["type"],
            "seq": first_seq + offset,
            "time": time_ms,
            "data": json.loads(json.dumps(event["data"])),
        }
        if "sourceEventSeqs" in event:
            full["sourceEventSeqs"] = list(event["sourceEventSeqs"])
        if "surfaceOp" in event:
            op = event["surfaceOp"]
            full["surfaceOp"] = op if isinstance(op, str) else dict(op)
        built.append(full)
    return built
