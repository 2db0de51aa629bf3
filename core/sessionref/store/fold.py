"""Folding a log into its current surface (contract.md §3.2).

Surface events (`user/message`, `assistant/message`, `tool/result`, `system/message`) carry a
`surfaceOp`: `"append"` adds the event at the tail, `{"op": "replace", "start", "end"}` (or
`startSeq`/`endSeq`) swaps an inclusive range of the current surface for the event, whose
`sourceEventSeqs` must name every shadowed seq. Everything else is log-only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sessionref.query import SurfaceSnapshot
from sessionref.store.errors import STORE_INVALID_LOG, StoreError

SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result", "system/message"})


def _invalid(message: str) -> StoreError:
    return StoreError(STORE_INVALID_LOG, message)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def replace_range(op: object) -> tuple[int, int] | None:
    """(start, end) of a replace surface op (either spelling), None for `"append"`; raises otherwise."""
    if op == "append":
        return None
    if isinstance(op, dict) and op.get("op") == "replace":
        start = op.get("start", op.get("startSeq"))
        end = op.get("end", op.get("endSeq"))
        if _is_int(start) and _is_int(end):
            return start, end
    raise _invalid(f"unknown surfaceOp {op!r}")


def _tool_call_id(event: dict[str, Any]) -> object:
    message = (event.get("data") or {}).get("message") or {}
    source = message.get("source") if isinstance(message, dict) else None
    return source.get("callId") if isinstance(source, dict) else None


def _check_header(header: object) -> dict[str, Any]:
    if not isinstance(header, dict) or header.get("type") != "session":
        raise _invalid("the log does not start with a session header")
    if not isinstance(header.get("id"), str) or header["id"] == "":
        raise _invalid("the session header has no id")
    return header


def fold_surface(header: dict[str, Any], events: Sequence[dict[str, Any]]) -> SurfaceSnapshot:
    """The current surface of a log: surface events in fold order plus the last raw seq.

    Seqs must increase strictly (real DSH logs have gaps where chunk rows were elided). Any
    violation raises `StoreError(STORE_INVALID_LOG)` naming the offending seq.
    """
    _check_header(header)
    by_seq: dict[int, dict[str, Any]] = {}
    surface: list[int] = []
    previous: int | None = None
    for event in events:
        seq = event.get("seq")
        if not _is_int(seq) or (previous is not None and seq <= previous):
            raise _invalid(f"event seq {seq!r} does not follow seq {previous!r}")
        previous = seq
        kind = event.get("type")
        if kind not in SURFACE_TYPES:
            if "surfaceOp" in event:
                raise _invalid(f"log-only event {kind!r} at seq {seq} carries a surfaceOp")
            continue
        if "surfaceOp" not in event:
            raise _invalid(f"surface event {kind!r} at seq {seq} has no surfaceOp")
        span = replace_range(event["surfaceOp"])
        by_seq[seq] = event
        if span is None:
            surface.append(seq)
            continue
        _apply_replace(surface, by_seq, event, seq, span)
    return {
        "session": header,
        "capturedThroughSeq": previous,
        "events": [by_seq[seq] for seq in surface],
    }


def _apply_replace(
    surface: list[int],
    by_seq: dict[int, dict[str, Any]],
    event: dict[str, Any],
    seq: int,
    span: tuple[int, int],
) -> None:
    start, end = span
    try:
        first = surface.index(start)
        last = surface.index(end)
    except ValueError:
        raise _invalid(f"replace at seq {seq} names seqs {start}..{end} not on the surface") from None
    if first > last:
        raise _invalid(f"replace at seq {seq} has its start after its end")
    shadowed = surface[first : last + 1]
    sources = event.get("sourceEventSeqs")
    if not isinstance(sources, list) or not set(shadowed) <= set(sources):
        raise _invalid(f"replace at seq {seq} does not list every shadowed seq in sourceEventSeqs")
    if event.get("type") == "tool/result":
        replaced = [by_seq[s] for s in shadowed]
        if (
            len(replaced) != 1
            or replaced[0].get("type") != "tool/result"
            or (_tool_call_id(replaced[0]) != _tool_call_id(event))
        ):
            raise _invalid(f"tool/result replace at seq {seq} may only change one tool result's content")
    surface[first : last + 1] = [seq]
