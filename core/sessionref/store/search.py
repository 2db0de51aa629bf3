"""In-memory candidate search over the discovery index (contract.md §6.1 semantics, at C speed).

Entries are kept in `list_sessions` order. Each group (sessions in one cwd, sessions without a
cwd, all sessions with a cwd) has one lower-cased haystack string, `id NUL label` per entry,
entries joined by NUL, scanned with `str.find`. A cwd matches once per distinct cwd. Results
are produced in (rank, list position) order and scanning stops as soon as `limit` are found.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from sessionref.query import SessionRecord

SEPARATOR = "\x00"


@dataclass(slots=True)
class _Group:
    """Entries (list positions, ascending) searched together through one haystack."""

    positions: list[int]
    haystack: str = ""
    starts: list[int] = field(default_factory=list)
    chars: frozenset[str] = frozenset()

    @classmethod
    def build(cls, positions: list[int], keys: Sequence[str]) -> _Group:
        starts: list[int] = []
        offset = 0
        for position in positions:
            starts.append(offset)
            offset += len(keys[position]) + 1
        haystack = SEPARATOR.join(keys[position] for position in positions)
        return cls(positions, haystack, starts, frozenset(haystack))

    def matches(self, needle: str) -> Iterator[int]:
        """List positions whose id or label contains `needle`, in ascending order."""
        if not set(needle) <= self.chars:
            return
        haystack, starts, positions = self.haystack, self.starts, self.positions
        find = haystack.find
        start = 0
        while True:
            hit = find(needle, start)
            if hit < 0:
                return
            slot = bisect_right(starts, hit) - 1
            yield positions[slot]
            if slot + 1 >= len(starts):
                return
            start = starts[slot + 1]


class CandidateIndex:
    """Ranked substring search over (record, label) entries given in `list_sessions` order."""

    def __init__(self, entries: Sequence[tuple[SessionRecord, str]]) -> None:
        self._entries = list(entries)
        self._keys = [f"{record.id.lower()}{SEPARATOR}{label.lower()}" for record, label in self._entries]
        by_cwd: dict[str, list[int]] = {}
        no_cwd: list[int] = []
        with_cwd: list[int] = []
        for position, (record, _label) in enumerate(self._entries):
            if record.cwd is None:
                no_cwd.append(position)
            else:
                with_cwd.append(position)
                by_cwd.setdefault(record.cwd, []).append(position)
        self._by_cwd = by_cwd
        self._cwd_lower = {cwd: cwd.lower() for cwd in by_cwd}
        self._no_cwd = _Group.build(no_cwd, self._keys)
        self._with_cwd = _Group.build(with_cwd, self._keys)
        self._cwd_groups: dict[str, _Group] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def _cwd_group(self, cwd: str) -> _Group:
        group = self._cwd_groups.get(cwd)
        if group is None:
            if len(self._cwd_groups) >= 16:
                self._cwd_groups.pop(next(iter(self._cwd_groups)))
            group = _Group.build(self._by_cwd.get(cwd, []), self._keys)
            self._cwd_groups[cwd] = group
        return group

    def _ranked_positions(self, target_cwd: str | None, needle: str) -> Iterator[int]:
        if needle == "":
            if target_cwd is not None:
                yield from self._by_cwd.get(target_cwd, [])
            yield from self._no_cwd.positions
            yield from (p for p in self._with_cwd.positions if self._entries[p][0].cwd != target_cwd)
            return
        if target_cwd is not None and target_cwd in self._by_cwd:
            if needle in self._cwd_lower[target_cwd]:
                yield from self._by_cwd[target_cwd]
            else:
                yield from self._cwd_group(target_cwd).matches(needle)
        yield from self._no_cwd.matches(needle)
        cwd_hits = [
            self._by_cwd[cwd]
            for cwd, lowered in self._cwd_lower.items()
            if cwd != target_cwd and needle in lowered
        ]
        previous = -1
        for position in heapq.merge(self._with_cwd.matches(needle), *cwd_hits):
            if position == previous:
                continue
            previous = position
            if self._entries[position][0].cwd != target_cwd:
                yield position

    def _plain_scan(self, target_cwd: str | None, needle: str) -> Iterator[int]:
        def matches(position: int) -> bool:
            record, label = self._entries[position]
            return (
                needle in record.id.lower()
                or needle in label.lower()
                or (record.cwd is not None and needle in self._cwd_lower[record.cwd])
            )

        def rank(position: int) -> tuple[int, int]:
            cwd = self._entries[position][0].cwd
            return (1 if cwd is None else 0 if cwd == target_cwd else 2), position

        return iter(sorted(filter(matches, range(len(self._entries))), key=rank))

    def search(
        self, *, exclude_id: str, target_cwd: str | None, needle: str, limit: int
    ) -> list[tuple[SessionRecord, str]]:
        """Up to `limit` (record, label) pairs whose lower-cased id, cwd or label contains `needle`.

        Ordered by rank (same cwd 0, no cwd 1, other cwd 2) then list position; `exclude_id` is skipped.
        """
        positions = (
            self._plain_scan(target_cwd, needle)
            if SEPARATOR in needle
            else self._ranked_positions(target_cwd, needle)
        )
        found: list[tuple[SessionRecord, str]] = []
        if limit <= 0:
            return found
        for position in positions:
            entry = self._entries[position]
            if entry[0].id == exclude_id:
                continue
            found.append(entry)
            if len(found) >= limit:
                break
        return found
