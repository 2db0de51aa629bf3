"""Which sessions a person mentions often and lately (frecency), for the empty and short `@` query.

A mention sent (`Workspace.submit`) adds one to each referenced session's count and stamps it.
A session's frecency is its count weighed by how long ago it was last mentioned, in the manner of
zoxide: within the hour ×4, the day ×2, the week ×½, older ×¼. `order` puts the frecent sessions
right after the same folder's, for a query of at most `SHORT_QUERY_CHARS` characters (a longer
query says what it wants: the ranking is the contract's).

Kept in `FRECENCY_FILE_NAME` under the store root, a JSON object `{session id: [count, last ms]}`
of at most `MAX_ENTRIES` sessions (the least frecent are dropped). A write re-reads the file under
the lock `FRECENCY_LOCK_NAME` (several UIs on one store), merges and replaces it whole; a missing,
unreadable or garbled file is an empty one, and a file that cannot be written is skipped: frecency
is a convenience, never a failure. A `Frecency` is read once when the workspace opens and changes
only when this process records a mention, so a list on screen is never reordered under the cursor.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final

from sessionref.service.candidates import Candidate
from sessionref.store.errors import StoreError
from sessionref.store.locking import SessionLock
from sessionref.store.paths import Folder

log = logging.getLogger("sessionref.host")

FRECENCY_FILE_NAME: Final = ".sessionref-frecency.json"
FRECENCY_LOCK_NAME: Final = ".sessionref-frecency.lock"
MAX_ENTRIES: Final = 500
SHORT_QUERY_CHARS: Final = 2
"""Queries up to this long (after trimming) are ordered by frecency after the same folder."""
MAX_FILE_BYTES: Final = 1 << 20
_HOUR_MS: Final = 3_600_000
_WEIGHTS: Final = ((_HOUR_MS, 4.0), (24 * _HOUR_MS, 2.0), (7 * 24 * _HOUR_MS, 0.5))
_OLD_WEIGHT: Final = 0.25


def frecency_score(count: float, last_ms: int, now_ms: int) -> float:
    """`count` weighed by the age of the last mention (see the module docstring)."""
    age = max(0, now_ms - last_ms)
    weight = next((factor for limit, factor in _WEIGHTS if age < limit), _OLD_WEIGHT)
    return count * weight


def _parsed(raw: bytes) -> dict[str, tuple[float, int]]:
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    entries: dict[str, tuple[float, int]] = {}
    for session_id, value in data.items():
        if (
            isinstance(session_id, str)
            and isinstance(value, list)
            and len(value) == 2
            and all(isinstance(part, int | float) and not isinstance(part, bool) for part in value)
        ):
            entries[session_id] = (float(value[0]), int(value[1]))
    return entries


class Frecency:
    """The mention counts of one store, as read when it was loaded plus what this process recorded."""

    def __init__(self, root: Path, entries: Mapping[str, tuple[float, int]] | None = None) -> None:
        self._root = root
        self._entries: dict[str, tuple[float, int]] = dict(entries or {})

    @classmethod
    def load(cls, root: Path) -> Frecency:
        """The counts in `root`'s file (none when it is missing or unreadable)."""
        return cls(root, _read(root))

    def score(self, session_id: str, now_ms: int) -> float:
        """`session_id`'s frecency now (0 when never mentioned)."""
        entry = self._entries.get(session_id)
        return 0.0 if entry is None else frecency_score(entry[0], entry[1], now_ms)

    def record(self, session_ids: Iterable[str], now_ms: int) -> None:
        """Count one mention of each of `session_ids` at `now_ms`, here and in the file."""
        mentioned = list(dict.fromkeys(session_ids))
        if not mentioned:
            return
        try:
            with (
                Folder(str(self._root), []) as folder,
                SessionLock(folder, FRECENCY_LOCK_NAME, must_exist=False, timeout=1.0),
            ):
                merged = _read(self._root)
                for session_id in mentioned:
                    count, _last = merged.get(session_id, (0.0, now_ms))
                    merged[session_id] = (count + 1, now_ms)
                ranked = sorted(
                    merged.items(), key=lambda item: -frecency_score(item[1][0], item[1][1], now_ms)
                )
                self._entries = dict(ranked[:MAX_ENTRIES])
                _write(self._root, self._entries)
        except (OSError, StoreError) as error:  # a convenience: never a failure to send
            log.info("frecency not recorded: %s", error)
            for session_id in mentioned:
                count, _last = self._entries.get(session_id, (0.0, now_ms))
                self._entries[session_id] = (count + 1, now_ms)

    def order(self, candidates: Sequence[Candidate], query: str, now_ms: int) -> list[Candidate]:
        """`candidates` with the frecent ones right after the same folder's, most frecent first, for
        a short `query`; otherwise (or with nothing recorded) as they are."""
        if len(query.strip()) > SHORT_QUERY_CHARS or not self._entries:
            return list(candidates)

        def key(candidate: Candidate) -> tuple[int, float]:
            if candidate.same_workspace:
                return (0, 0.0)
            score = self.score(candidate.session_id, now_ms)
            return (1, -score) if score > 0 else (2, 0.0)

        return sorted(candidates, key=key)

    @property
    def known(self) -> int:
        """How many sessions have a count."""
        return len(self._entries)


def _read(root: Path) -> dict[str, tuple[float, int]]:
    try:
        with Folder(str(root), []) as folder:
            fd = folder.open(FRECENCY_FILE_NAME, os.O_RDONLY, 0)
    except (OSError, StoreError):
        return {}
    with os.fdopen(fd, "rb") as file:
        raw = file.read(MAX_FILE_BYTES + 1)
    return _parsed(raw) if len(raw) <= MAX_FILE_BYTES else {}


def _write(root: Path, entries: Mapping[str, tuple[float, int]]) -> None:
    temporary = root / f"{FRECENCY_FILE_NAME}.{os.getpid()}.tmp"
    payload = json.dumps({session_id: [count, last] for session_id, (count, last) in entries.items()})
    with Folder(str(root), []) as folder:
        fd = folder.open(temporary.name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(payload)
    os.replace(temporary, root / FRECENCY_FILE_NAME)
