"""The ranges a value read from a log, a history or a config must fall in (docs/reliability.md).

A log is written by other programs too, so any integer may arrive: one beyond what SQLite
(int64), JavaScript (safe integers) or the clock (years 1970–9999) can hold must be stopped where
it enters, not where it is finally used. Every reader checks its values with these predicates
and skips (and counts) a line that fails them, like any other unreadable line.
"""

from __future__ import annotations

from typing import Final, TypeGuard

from sessionref.contract.options import MAX_SAFE_INTEGER

MAX_SEQ: Final = MAX_SAFE_INTEGER
"""The largest seq a reader accepts: a JavaScript safe integer (DSH's own bound), within SQLite's int64."""

MAX_EPOCH_MS: Final = 253_402_300_799_999
"""The last millisecond of the year 9999 (UTC): the latest time `datetime` and the clock can show."""


def is_int(value: object) -> TypeGuard[int]:
    """True for an `int` that is not a `bool`."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_seq(value: object) -> TypeGuard[int]:
    """True for a seq a reader accepts: an integer from 0 to `MAX_SEQ`."""
    return is_int(value) and 0 <= value <= MAX_SEQ


def is_epoch_ms(value: object) -> TypeGuard[int]:
    """True for epoch milliseconds from 1970 up to the end of the year 9999 (`MAX_EPOCH_MS`)."""
    return is_int(value) and 0 <= value <= MAX_EPOCH_MS
