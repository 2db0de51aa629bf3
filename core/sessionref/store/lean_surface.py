"""A folded surface that keeps a log's bytes and where its surface lines are, not parsed events.

Folding needs only each event's envelope, so a reader keeps a small stub per surface event (its
type, seq and surfaceOp, the seqs a replace names, a tool result's call id) and the place of its
line; log-only lines (chunks, requests) keep nothing but the last seq. The folded surface's events
are parsed again, one at a time, whenever they are read (`LazyEvents`). A read then holds the
log's bytes plus about a hundred bytes per surface event instead of every parsed event
(docs/reliability.md, "Memory"), and what it yields is the same as folding the parsed log.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any, cast, overload

from sessionref.contract.events import SessionHeader, SurfaceEvent, SurfaceSnapshot
from sessionref.store.fold import SURFACE_TYPES, fold_surface
from sessionref.store.logfile import parse_line

_CANONICAL = {kind: kind for kind in SURFACE_TYPES}
_APPEND = "append"
_LOG_ONLY = "log-only"


class LazyEvents(Sequence[SurfaceEvent]):
    """Surface events parsed from their lines of `data` each time they are read (never kept)."""

    def __init__(self, data: bytes, starts: array[int], ends: array[int]) -> None:
        self._data = data
        self._starts = starts
        self._ends = ends

    def __len__(self) -> int:
        return len(self._starts)

    def _event(self, index: int) -> SurfaceEvent:
        record = parse_line(self._data[self._starts[index] : self._ends[index]])
        assert record is not None  # the line parsed when it was folded, and the bytes are ours
        return cast(SurfaceEvent, record)

    @overload
    def __getitem__(self, index: int) -> SurfaceEvent: ...
    @overload
    def __getitem__(self, index: slice) -> list[SurfaceEvent]: ...
    def __getitem__(self, index: int | slice) -> SurfaceEvent | list[SurfaceEvent]:
        if isinstance(index, slice):
            return [self._event(position) for position in range(len(self))[index]]
        return self._event(range(len(self))[index])

    def __iter__(self) -> Iterator[SurfaceEvent]:
        for position in range(len(self)):
            yield self._event(position)

    def __reversed__(self) -> Iterator[SurfaceEvent]:
        for position in reversed(range(len(self))):
            yield self._event(position)


class SurfaceStubs:
    """The stubs of one log's readable lines, in order, for `fold`."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._stubs: list[dict[str, Any]] = []
        self._last_log_only: dict[str, Any] | None = None

    def add(self, start: int, end: int, event: dict[str, Any]) -> None:
        """Note one readable event (envelope checked) whose line is `data[start:end]`."""
        kind = event.get("type")
        if not isinstance(kind, str) or kind not in SURFACE_TYPES:
            self._last_log_only = {"type": _LOG_ONLY, "seq": event["seq"]}
            return
        op = event["surfaceOp"]
        stub: dict[str, Any] = {
            "type": _CANONICAL[kind],
            "seq": event["seq"],
            "surfaceOp": _APPEND if op == _APPEND else op,
            "at": start,
            "to": end,
        }
        if op != _APPEND and "sourceEventSeqs" in event:
            stub["sourceEventSeqs"] = event["sourceEventSeqs"]
        if kind == "tool/result":
            stub["data"] = _call_id_only(event.get("data"))
        self._stubs.append(stub)
        self._last_log_only = None

    def fold(self, header: dict[str, Any], *, lenient: bool, unfolded: list[int]) -> SurfaceSnapshot:
        """The folded surface (events read lazily); seqs the fold could not apply go to `unfolded`."""
        stubs = self._stubs if self._last_log_only is None else [*self._stubs, self._last_log_only]
        folded = fold_surface(header, stubs, lenient=lenient, skipped=unfolded)
        kept = cast(Sequence[dict[str, Any]], folded["events"])
        starts = array("q", (stub["at"] for stub in kept))
        ends = array("q", (stub["to"] for stub in kept))
        return {
            "session": cast(SessionHeader, header),
            "capturedThroughSeq": folded["capturedThroughSeq"],
            "events": LazyEvents(self._data, starts, ends),
        }


def _call_id_only(data: object) -> object:
    """What the fold reads of a tool result's data: `message.source.callId` (a non-object stays as is)."""
    if not isinstance(data, dict):
        return data
    message = data.get("message")
    source = message.get("source") if isinstance(message, dict) else None
    call_id = source.get("callId") if isinstance(source, dict) else None
    return {"message": {"source": {"callId": call_id}}}
