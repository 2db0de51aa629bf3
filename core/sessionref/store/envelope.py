"""Which log records a reader takes: the envelope of every line is range-checked where it enters.

A record is readable when its `type` is a non-empty string, its `seq` a seq (`is_seq`), its
`time` (when present) epoch milliseconds of the years 1970–9999, and — for a surface event — its
`data` an object, its `surfaceOp` `"append"` or a replace range of seqs and its `sourceEventSeqs`
(when present) a list of seqs; a log-only event carries neither. Any other line is skipped and
counted like an unreadable one (docs/reliability.md), so no value beyond what SQLite, the clock
or the fold can take goes further than this.
"""

from __future__ import annotations

from typing import Any

from sessionref.contract.log_values import is_epoch_ms, is_seq
from sessionref.store.errors import StoreError
from sessionref.store.fold import SURFACE_TYPES, replace_range


def _surface_op_is_readable(op: object) -> bool:
    try:
        span = replace_range(op)
    except StoreError:
        return False
    return span is None or (is_seq(span[0]) and is_seq(span[1]))


def is_readable_event(record: dict[str, Any]) -> bool:
    """True when the envelope of a (non-packed) log record is one a reader takes (see above)."""
    kind = record.get("type")
    if not isinstance(kind, str) or not kind or not is_seq(record.get("seq")):
        return False
    if "time" in record and not is_epoch_ms(record["time"]):
        return False
    if kind not in SURFACE_TYPES:
        return "surfaceOp" not in record
    if not isinstance(record.get("data"), dict) or not _surface_op_is_readable(record.get("surfaceOp")):
        return False
    sources = record.get("sourceEventSeqs")
    return sources is None or (isinstance(sources, list) and all(is_seq(seq) for seq in sources))


def readable_header(header: dict[str, Any]) -> dict[str, Any]:
    """`header` with a `createdAt` that is not epoch ms of 1970–9999 read as 0 (as the index reads it)."""
    if is_epoch_ms(header.get("createdAt")):
        return header
    return {**header, "createdAt": 0}
