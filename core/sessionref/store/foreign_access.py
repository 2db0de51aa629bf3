"""What the store does with one foreign session: read it (as a log report or a surface), never write it.

A foreign session's log, as `read_log` shows it, is its surface: a DSH-shaped header and the
projectable events the reader built (`user/message`, `assistant/message`, checkpoints), each
`seq` the position of the record in the source. Its `capturedThroughSeq` is the reader's
highest position: it only grows while the tool appends. Lines the reader could not use are
reported by position; a last line still being written is not there yet (not reported).

Every write is refused with `STORE_READ_ONLY` and the next step: sessionref never writes into
another program's folders (the store's `write_foreign` switch is for DSH-layout logs only).
"""

from __future__ import annotations

from typing import Any, Final

from sessionref.sources import ForeignSession, ForeignSourceError, ForeignSourceErrorCode
from sessionref.sources.foreign import foreign_session_header
from sessionref.store.access import NEXT_STEP, SurfaceReport
from sessionref.store.errors import STORE_READ_ONLY, StoreError, shown_id
from sessionref.store.foreign_catalog import read_entry
from sessionref.store.foreign_state import ForeignEntry
from sessionref.store.logfile import LogReport

__all__ = [
    "foreign_header",
    "foreign_log_report",
    "foreign_refusal",
    "foreign_surface_report",
    "read_foreign",
]

NEVER_WRITTEN: Final = "sessionref only reads it and never writes into {name}'s folders"


def foreign_refusal(entry: ForeignEntry) -> StoreError:
    """`STORE_READ_ONLY` for any write into a foreign session, offering the next step."""
    name = entry.source.name
    return StoreError(
        STORE_READ_ONLY,
        f'session "{shown_id(entry.session_id)}" is a {name} session: '
        f"{NEVER_WRITTEN.format(name=name)}; {NEXT_STEP}",
    )


def foreign_header(entry: ForeignEntry) -> dict[str, object]:
    """The DSH-shaped header of a foreign session, from the index (the reader builds the same one)."""
    return dict(foreign_session_header(entry.session_id, entry.created_at, entry.cwd))


def read_foreign(entry: ForeignEntry) -> ForeignSession:
    """The session read in full through its reader; `ForeignSourceError` (coded) when it cannot be."""
    try:
        return read_entry(entry)
    except OSError as error:  # an I/O error while streaming a file the reader had opened
        reason = error.strerror or str(error)
        raise ForeignSourceError(
            ForeignSourceErrorCode.UNREADABLE, f'cannot read session "{shown_id(entry.session_id)}": {reason}'
        ) from error


def foreign_log_report(entry: ForeignEntry) -> LogReport:
    """The session as `read_log_report` shows it: its header and surface events, skipped positions.

    Like a log's, each answer carries the `turn` and `step` it was given in: turn `n` begins with
    the `n`-th message (prompt or checkpoint), and each answer after it is its next step. (A
    surface has no turns; a UI that tells answers apart by turn and step needs them.)
    """
    session = read_foreign(entry)
    snapshot = session.snapshot
    events: list[dict[str, Any]] = []
    turn = step = 0
    for event in snapshot["events"]:
        copied: dict[str, Any] = dict(event)
        if copied.get("type") == "user/message":
            turn, step = turn + 1, 0
        elif copied.get("type") == "assistant/message":
            step += 1
            copied["data"] = {"turn": max(turn, 1), "step": step, **copied["data"]}
        events.append(copied)
    return LogReport(dict(snapshot["session"]), events, session.skipped_at)


def foreign_surface_report(entry: ForeignEntry) -> SurfaceReport:
    """The session's surface (already folded by its reader) and the positions of skipped lines."""
    session = read_foreign(entry)
    return SurfaceReport(session.snapshot, session.skipped_at)
