"""Folding a log into its current surface (contract.md §3.2).

Surface events (`user/message`, `assistant/message`, `tool/result`, `system/message`) carry a
`surfaceOp`: `"append"` adds the event at the tail, `{"op": "replace", "start", "end"}` (or
`startSeq`/`endSeq`) swaps an inclusive range of the current surface for the event, whose
`sourceEventSeqs` must name every shadowed seq. Everything else is log-only.

A log read with unreadable lines skipped (`LogReport.skipped_lines`) may miss events a later
replace names. Folded with `lenient=True`, such a replace shadows the surface events it names
that are still there (its range ends and `sourceEventSeqs`) and takes the place of the first
one, or is appended when none is left; every other rule is kept.

`system/message` is a surface type (the later contract's): it folds like the others and the
projection leaves it out of a referenced conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeGuard, cast

from sessionref.contract.events import SessionHeader, SurfaceEvent
from sessionref.service.protocols import SurfaceSnapshot
from sessionref.store.errors import STORE_INVALID_LOG, StoreError

_EXCERPT_CHARS = 80
SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result", "system/message"})


def _invalid(message: str) -> StoreError:
    return StoreError(STORE_INVALID_LOG, message)


def _shown(value: object) -> str:
    """`repr(value)` cut to a short excerpt, for messages about data read from a log."""
    text = repr(value)
    return text if len(text) <= _EXCERPT_CHARS else text[: _EXCERPT_CHARS - 3] + "..."


def _is_int(value: object) -> TypeGuard[int]:
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
    raise _invalid(f"unknown surfaceOp {_shown(op)}")


def _tool_call_id(event: dict[str, Any], seq: int) -> object:
    data = event.get("data")
    if not isinstance(data, dict):
        raise _invalid(f"tool/result at seq {seq} has data that is not an object")
    message = data.get("message")
    source = message.get("source") if isinstance(message, dict) else None
    return source.get("callId") if isinstance(source, dict) else None


def _check_header(header: object) -> dict[str, Any]:
    if not isinstance(header, dict) or header.get("type") != "session":
        raise _invalid("the log does not start with a session header")
    if not isinstance(header.get("id"), str) or header["id"] == "":
        raise _invalid("the session header has no id")
    return header


def fold_surface(
    header: dict[str, Any],
    events: Sequence[dict[str, Any]],
    *,
    lenient: bool = False,
    skipped: list[int] | None = None,
) -> SurfaceSnapshot:
    """The current surface of a log: surface events in fold order plus the last raw seq.

    Seqs must increase strictly (real DSH logs have gaps where chunk rows were elided). Any
    violation raises `StoreError(STORE_INVALID_LOG)` naming the offending seq, unless `skipped`
    is given: then an event the fold cannot apply is left out and its seq appended to `skipped`
    (one bad line costs that line), and the rest is folded leniently. `lenient` is for logs read
    with skipped lines: a replace naming seqs that are gone still applies (see above).
    """
    _check_header(header)
    by_seq: dict[int, dict[str, Any]] = {}
    surface: list[int] = []
    previous: int | None = None
    for event in events:
        seq = event.get("seq")
        if not _is_int(seq) or (previous is not None and seq <= previous):
            raise _invalid(f"event seq {_shown(seq)} does not follow seq {previous!r}")
        previous = seq
        try:
            _fold_event(surface, by_seq, event, seq, lenient=lenient)
        except StoreError:
            if skipped is None:
                raise
            by_seq.pop(seq, None)
            skipped.append(seq)
            lenient = True
    # Both shapes were checked above: the header by the caller's parse, each event here.
    return {
        "session": cast(SessionHeader, header),
        "capturedThroughSeq": previous,
        "events": [cast(SurfaceEvent, by_seq[seq]) for seq in surface],
    }


def _fold_event(
    surface: list[int], by_seq: dict[int, dict[str, Any]], event: dict[str, Any], seq: int, *, lenient: bool
) -> None:
    """Apply one event to `surface` (seqs) and `by_seq`; raises before changing `surface` when it cannot."""
    kind = event.get("type")
    if not isinstance(kind, str) or kind not in SURFACE_TYPES:
        if "surfaceOp" in event:
            raise _invalid(f"log-only event {_shown(kind)} at seq {seq} carries a surfaceOp")
        return
    if "surfaceOp" not in event:
        raise _invalid(f"surface event {_shown(kind)} at seq {seq} has no surfaceOp")
    span = replace_range(event["surfaceOp"])
    by_seq[seq] = event
    if span is None:
        surface.append(seq)
        return
    _apply_replace(surface, by_seq, event, seq, span, lenient=lenient)


def _apply_replace(
    surface: list[int],
    by_seq: dict[int, dict[str, Any]],
    event: dict[str, Any],
    seq: int,
    span: tuple[int, int],
    *,
    lenient: bool = False,
) -> None:
    start, end = span
    if lenient and (start not in surface or end not in surface):
        _apply_partial_replace(surface, event, seq, span)
        return
    try:
        first = surface.index(start)
        last = surface.index(end)
    except ValueError:
        raise _invalid(f"replace at seq {seq} names seqs {start}..{end} not on the surface") from None
    if first > last:
        raise _invalid(f"replace at seq {seq} has its start after its end")
    shadowed = surface[first : last + 1]
    sources = event.get("sourceEventSeqs")
    if not isinstance(sources, list) or not set(shadowed) <= {s for s in sources if _is_int(s)}:
        raise _invalid(f"replace at seq {seq} does not list every shadowed seq in sourceEventSeqs")
    if event.get("type") == "tool/result":
        replaced = [by_seq[s] for s in shadowed]
        if (
            len(replaced) != 1
            or replaced[0].get("type") != "tool/result"
            or (_tool_call_id(replaced[0], shadowed[0]) != _tool_call_id(event, seq))
        ):
            raise _invalid(f"tool/result replace at seq {seq} may only change one tool result's content")
    surface[first : last + 1] = [seq]


def _apply_partial_replace(
    surface: list[int], event: dict[str, Any], seq: int, span: tuple[int, int]
) -> None:
    """A replace whose range lost an end to a skipped line: shadow what it names that is still there."""
    sources = event.get("sourceEventSeqs")
    named = {*span, *(s for s in sources if _is_int(s))} if isinstance(sources, list) else set(span)
    positions = [index for index, item in enumerate(surface) if item in named]
    if not positions:
        surface.append(seq)
        return
    surface[positions[0]] = seq
    for index in reversed(positions[1:]):
        del surface[index]
