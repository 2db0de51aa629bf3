"""In-memory candidate search over the discovery index (contract.md §6.1 semantics, at C speed).

Entries are kept in `list_sessions` order (most recent activity first). Each group of entries
(one cwd, no cwd, all with a cwd) keeps two lower-cased haystacks, ids and labels, entries
joined by NUL and scanned with `str.find`; a haystack whose characters cannot contain the needle
is skipped (ids are usually hex UUIDs, so a word skips them). A cwd is matched once per distinct
cwd. Results come in (rank, list position) order and scanning stops once `limit` are found.

Changes after a build go to a small overlay (relabelled, added and removed sessions) merged in
at query time; a session whose activity moved it (an append) is removed from its built place
and added again with its new record. The structure is rebuilt once the overlay grows. A needle
whose full match list is known (an earlier scan ran to the end) narrows typed extensions of it
without a scan. The first sessions by rank alone (an empty needle: the pool every keystroke's
close title matches are looked for in, `candidates.FUZZY_POOL`) are kept until the next change.

What matches and in which order is defined once, by the service (`matches_needle`,
`workspace_rank`, the `list_sessions` order); the haystack scans are a fast path held to that
definition by property tests (tests/core/store/test_candidate_matcher_properties.py).
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from sessionref.service.candidates import matches_needle, workspace_rank
from sessionref.service.protocols import SessionRecord

SEPARATOR = "\x00"
Entry = tuple[SessionRecord, str]
OVERLAY_LIMIT = 256
_CACHE_SIZE = 16


def sort_key(record: SessionRecord) -> tuple[int, str]:
    """The `list_sessions` order: last activity descending, then id ascending."""
    return (-record.last_activity, record.id)


def entry_matches(entry: Entry, needle: str) -> bool:
    """The one definition of a match, the service's `matches_needle`, for an entry."""
    record, label = entry
    return matches_needle(needle, record.id, record.cwd, label)


@dataclass(slots=True)
class _Haystack:
    text: str
    starts: list[int]
    chars: frozenset[str]

    @classmethod
    def build(cls, parts: list[str]) -> _Haystack:
        starts: list[int] = []
        offset = 0
        for part in parts:
            starts.append(offset)
            offset += len(part) + 1
        text = SEPARATOR.join(parts)
        return cls(text, starts, frozenset(text))

    def slots(self, needle: str) -> Iterator[int]:
        """Indexes of the parts containing `needle`, ascending."""
        if not set(needle) <= self.chars:
            return
        find, starts, last = self.text.find, self.starts, len(self.starts) - 1
        start = 0
        while True:
            hit = find(needle, start)
            if hit < 0:
                return
            slot = bisect_right(starts, hit) - 1
            yield slot
            if slot >= last:
                return
            start = starts[slot + 1]


@dataclass(slots=True)
class _Group:
    """Entries (list positions, ascending) searched together."""

    positions: list[int]
    ids: _Haystack
    labels: _Haystack

    @classmethod
    def build(cls, positions: list[int], ids: Sequence[str], labels: Sequence[str]) -> _Group:
        return cls(
            positions,
            _Haystack.build([ids[p] for p in positions]),
            _Haystack.build([labels[p] for p in positions]),
        )

    def matches(self, needle: str) -> Iterator[int]:
        """List positions whose id or (built) label contains `needle`, ascending, without repeats."""
        positions = self.positions
        previous = -1
        for slot in heapq.merge(self.ids.slots(needle), self.labels.slots(needle)):
            if slot != previous:
                previous = slot
                yield positions[slot]


class CandidateIndex:
    """Ranked substring search over (record, label) entries given in `list_sessions` order.

    Entries are kept as parallel columns (id, createdAt, cwd, label, updatedAt); a `SessionRecord`
    is only made for an entry a search returns.
    """

    _records: list[SessionRecord | None]

    def __init__(self, entries: Sequence[Entry]) -> None:
        self._build(
            [record.id for record, _ in entries],
            [record.created_at for record, _ in entries],
            [record.cwd for record, _ in entries],
            [label for _, label in entries],
            [record.updated_at for record, _ in entries],
        )
        self._records = list[SessionRecord | None](record for record, _ in entries)

    @classmethod
    def from_columns(
        cls,
        ids: list[str],
        created: list[int],
        cwds: list[str | None],
        labels: list[str],
        updated: list[int | None] | None = None,
    ) -> CandidateIndex:
        """The index over entries given column by column (equal lengths, `list_sessions` order)."""
        index = cls.__new__(cls)
        index._build(ids, created, cwds, labels, updated if updated is not None else [None] * len(ids))
        return index

    def _build(
        self,
        ids: list[str],
        created: list[int],
        cwds: list[str | None],
        labels: list[str],
        updated: list[int | None],
    ) -> None:
        self._id_column, self._created, self._cwds, self._label_column = ids, created, cwds, labels
        self._updated = updated
        self._records = [None] * len(ids)
        # Built now, in C (a few ms at 100k), not on the first change: that change is made by a
        # writer thread, and a long pure-Python build there holds the GIL the UI loop waits for.
        self._position_index: dict[str, int] = dict(zip(ids, range(len(ids)), strict=True))
        by_cwd: dict[str, list[int]] = {}
        no_cwd: list[int] = []
        with_cwd: list[int] = []
        for position, cwd in enumerate(cwds):
            if cwd is None:
                no_cwd.append(position)
            else:
                with_cwd.append(position)
                by_cwd.setdefault(cwd, []).append(position)
        self._ids = [session_id.lower() for session_id in ids]
        self._labels = [label.lower() for label in labels]
        ids, labels = self._ids, self._labels
        self._by_cwd = by_cwd
        self._cwd_lower = {cwd: cwd.lower() for cwd in by_cwd}
        self._cwd_list = list(by_cwd)
        self._cwd_haystack = _Haystack.build([self._cwd_lower[cwd] for cwd in self._cwd_list])
        self._no_cwd = _Group.build(no_cwd, ids, labels)
        self._with_cwd = _Group.build(with_cwd, ids, labels)
        self._cwd_groups: OrderedDict[str, _Group] = OrderedDict()
        self._relabelled: dict[int, str] = {}
        self._added: dict[str, Entry] = {}
        self._removed: set[str] = set()
        self._complete: OrderedDict[tuple[str | None, str], list[Entry]] = OrderedDict()
        self._leading: OrderedDict[tuple[str | None, str, int], list[Entry]] = OrderedDict()

    @property
    def _position_of(self) -> dict[str, int]:
        """List position by session id."""
        return self._position_index

    def _record(self, position: int) -> SessionRecord:
        record = self._records[position]
        if record is None:
            record = SessionRecord(
                self._id_column[position],
                self._created[position],
                self._cwds[position],
                self._updated[position],
            )
            self._records[position] = record
        return record

    # -- overlay -------------------------------------------------------------------------------

    @property
    def overlay_size(self) -> int:
        """How many changes are pending since the build (the owner rebuilds past `OVERLAY_LIMIT`)."""
        return len(self._relabelled) + len(self._added) + len(self._removed)

    def relabel(self, session_id: str, label: str) -> None:
        """Give a session a new label without a rebuild."""
        self._forget()
        if session_id in self._added:
            self._added[session_id] = (self._added[session_id][0], label)
            return
        position = self._position_of.get(session_id)
        if position is not None:
            self._relabelled[position] = label

    def add(self, entry: Entry) -> None:
        """Add a session, or put one whose record changed (it moved) at its new place, without a rebuild."""
        self._forget()
        session_id = entry[0].id
        position = self._position_of.get(session_id)
        if position is not None:
            # Its built place is hidden for good; a label given meanwhile travels with the entry.
            self._removed.add(session_id)
            self._relabelled.pop(position, None)
        self._added[session_id] = entry

    def remove(self, session_id: str) -> None:
        """Drop a session without a rebuild."""
        self._forget()
        self._added.pop(session_id, None)
        if session_id in self._position_of:
            self._removed.add(session_id)

    def _forget(self) -> None:
        """Drop what earlier searches found: the entries changed."""
        self._complete.clear()
        self._leading.clear()

    def _entry(self, position: int) -> Entry:
        label = self._relabelled.get(position)
        return (self._record(position), self._label_column[position] if label is None else label)

    # -- scanning ------------------------------------------------------------------------------

    def _cwd_group(self, cwd: str) -> _Group:
        group = self._cwd_groups.get(cwd)
        if group is None:
            if len(self._cwd_groups) >= 16:
                self._cwd_groups.popitem(last=False)
            group = _Group.build(self._by_cwd.get(cwd, []), self._ids, self._labels)
            self._cwd_groups[cwd] = group
        return group

    def _group_matches(self, group: _Group, needle: str) -> Iterator[int]:
        """Positions in `group` matching `needle`, with relabelled positions judged on their new label."""
        relabelled = self._relabelled
        if not relabelled:
            yield from group.matches(needle)
            return
        changed = sorted(
            p for p, label in relabelled.items() if needle in label.lower() and _in_group(group, p)
        )
        previous = -1
        for position in heapq.merge(group.matches(needle), changed):
            if position == previous:
                continue
            previous = position
            if position in relabelled and not (
                needle in relabelled[position].lower() or needle in self._ids[position]
            ):
                continue
            yield position

    def _base_by_rank(self, target_cwd: str | None, needle: str) -> list[Iterable[int]]:
        if needle == "":
            everyone_here = self._by_cwd.get(target_cwd, []) if target_cwd is not None else []
            cwds = self._cwds
            others = (p for p in self._with_cwd.positions if cwds[p] != target_cwd)
            return [everyone_here, self._no_cwd.positions, others]
        own: Iterable[int] = []
        if target_cwd is not None and target_cwd in self._by_cwd:
            own = (
                self._by_cwd[target_cwd]
                if needle in self._cwd_lower[target_cwd]
                else self._group_matches(self._cwd_group(target_cwd), needle)
            )
        return [own, self._group_matches(self._no_cwd, needle), self._other_cwds(target_cwd, needle)]

    def _other_cwds(self, target_cwd: str | None, needle: str) -> Iterator[int]:
        cwds = (self._cwd_list[slot] for slot in self._cwd_haystack.slots(needle))
        cwd_hits = [self._by_cwd[cwd] for cwd in cwds if cwd != target_cwd]
        previous = -1
        for position in heapq.merge(self._group_matches(self._with_cwd, needle), *cwd_hits):
            if position != previous:
                previous = position
                if self._cwds[position] != target_cwd:
                    yield position

    def _ranked(self, target_cwd: str | None, needle: str) -> Iterator[Entry]:
        added_by_rank: list[list[Entry]] = [[], [], []]
        for entry in self._added.values():
            if not needle or entry_matches(entry, needle):
                added_by_rank[workspace_rank(entry[0].cwd, target_cwd)].append(entry)
        removed, ids = self._removed, self._id_column
        for rank, positions in enumerate(self._base_by_rank(target_cwd, needle)):
            base = (self._entry(p) for p in positions if not removed or ids[p] not in removed)
            extra = sorted(added_by_rank[rank], key=lambda entry: sort_key(entry[0]))
            yield from heapq.merge(base, extra, key=lambda entry: sort_key(entry[0])) if extra else base

    def _plain(self, target_cwd: str | None, needle: str) -> Iterator[Entry]:
        ids, removed = self._id_column, self._removed
        entries = [self._entry(p) for p in range(len(ids)) if ids[p] not in removed]
        entries.extend(self._added.values())
        entries.sort(key=lambda entry: sort_key(entry[0]))
        matching = [entry for entry in entries if entry_matches(entry, needle)]
        return iter(sorted(matching, key=lambda entry: workspace_rank(entry[0].cwd, target_cwd)))

    def _narrowed(self, target_cwd: str | None, needle: str) -> list[Entry] | None:
        for (cwd, known), entries in reversed(self._complete.items()):
            if cwd == target_cwd and known in needle:
                return [entry for entry in entries if entry_matches(entry, needle)]
        return None

    def _remember(self, target_cwd: str | None, needle: str, entries: list[Entry]) -> None:
        self._complete[(target_cwd, needle)] = entries
        self._complete.move_to_end((target_cwd, needle))
        if len(self._complete) > _CACHE_SIZE:
            self._complete.popitem(last=False)

    def search(self, *, exclude_id: str, target_cwd: str | None, needle: str, limit: int) -> list[Entry]:
        """Up to `limit` (record, label) pairs whose lower-cased id, cwd or label contains `needle`.

        Ordered by rank (same cwd 0, no cwd 1, other cwd 2) then list position; `exclude_id` is skipped.
        """
        if limit <= 0:
            return []
        if not needle:
            leading = self._leading.get((target_cwd, exclude_id, limit))
            if leading is None:
                leading = self._leading[(target_cwd, exclude_id, limit)] = self._search(
                    exclude_id, target_cwd, needle, limit
                )
                if len(self._leading) > _CACHE_SIZE:
                    self._leading.popitem(last=False)
            return list(leading)
        return self._search(exclude_id, target_cwd, needle, limit)

    def _search(self, exclude_id: str, target_cwd: str | None, needle: str, limit: int) -> list[Entry]:
        if SEPARATOR in needle:
            stream: Iterator[Entry] = self._plain(target_cwd, needle)
        else:
            known = self._narrowed(target_cwd, needle) if needle else None
            stream = iter(known) if known is not None else self._ranked(target_cwd, needle)
        found: list[Entry] = []
        seen: list[Entry] = []
        for entry in stream:
            seen.append(entry)
            if entry[0].id == exclude_id:
                continue
            found.append(entry)
            if len(found) >= limit:
                return found
        if needle and SEPARATOR not in needle:
            self._remember(target_cwd, needle, seen)
        return found


def _in_group(group: _Group, position: int) -> bool:
    positions = group.positions
    slot = bisect_right(positions, position) - 1
    return slot >= 0 and positions[slot] == position
