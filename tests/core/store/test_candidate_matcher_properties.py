"""The store's candidate fast path (`CandidateIndex`) is held to the one definition of a match.

What matches and in which order is the service's generic `find_candidates` over `list_sessions`
and `read_titles` (`matches_needle`, `workspace_rank`, the backend's recency order). These
properties build random sessions, change them through the index's overlay (relabel, add, move,
remove), search twice (the second search may be narrowed from the first) and compare every answer
with the generic algorithm over the same sessions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st
from sessionref.service.candidates import find_candidates, label_from_title
from sessionref.service.protocols import CandidateSearch, SessionRecord, SurfaceSnapshot
from sessionref.store.search import CandidateIndex, sort_key

CWDS = ["/w/app", "/w/App", "/w/other", "/srv/Σίσυφος", None]
ALPHABET = "aAbpP/-ΣσİißẞΩ日\x00 "

texts = st.text(alphabet=ALPHABET, max_size=6)
cwds = st.sampled_from(CWDS)


@dataclass
class Sessions:
    """A plain `SessionQuery` (no fast path): what the generic algorithm runs over."""

    records: dict[str, SessionRecord] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)

    async def list_sessions(self) -> Sequence[SessionRecord]:
        return sorted(self.records.values(), key=sort_key)

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        raise AssertionError("discovery never reads a log")

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        return {session_id: self.titles.get(session_id) for session_id in session_ids}

    def entries(self) -> list[tuple[SessionRecord, str]]:
        return [
            (record, label_from_title(record.id, self.titles.get(record.id)))
            for record in sorted(self.records.values(), key=sort_key)
        ]


@st.composite
def sessions(draw: st.DrawFn) -> Sessions:
    ids = draw(st.lists(st.text(alphabet="abAB-Ωİ0", min_size=1, max_size=4), max_size=12, unique=True))
    made = Sessions()
    for session_id in ids:
        created = draw(st.integers(0, 5))
        updated = draw(st.one_of(st.none(), st.integers(0, 9)))
        made.records[session_id] = SessionRecord(session_id, created, draw(cwds), updated)
        made.titles[session_id] = draw(texts)
    return made


@st.composite
def changes(draw: st.DrawFn, ids: list[str]) -> list[tuple[str, str, object]]:
    """Overlay operations: ("relabel", id, title), ("add", id, record), ("remove", id, None)."""
    known = [*ids, "new-1", "new-2"]
    made: list[tuple[str, str, object]] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["relabel", "add", "remove"]))
        session_id = draw(st.sampled_from(known))
        if kind == "relabel":
            made.append((kind, session_id, draw(texts)))
        elif kind == "add":
            record = SessionRecord(session_id, draw(st.integers(0, 5)), draw(cwds), draw(st.integers(0, 9)))
            made.append((kind, session_id, record))
        else:
            made.append((kind, session_id, None))
    return made


def apply(index: CandidateIndex, plain: Sessions, change: tuple[str, str, object]) -> None:
    """One overlay change to both the index and the plain sessions, as the catalogue makes it."""
    kind, session_id, value = change
    if kind == "relabel" and isinstance(value, str):
        if session_id in plain.records:
            plain.titles[session_id] = value
            index.relabel(session_id, label_from_title(session_id, value))
    elif kind == "add" and isinstance(value, SessionRecord):
        plain.records[session_id] = value
        index.add((value, label_from_title(session_id, plain.titles.get(session_id))))
    elif kind == "remove":
        plain.records.pop(session_id, None)
        index.remove(session_id)


def generic(
    plain: Sessions, exclude_id: str, target_cwd: str | None, needle: str, limit: int
) -> list[tuple[str, str]]:
    assert not isinstance(plain, CandidateSearch)  # the generic path, not a fast one
    found = asyncio.run(
        find_candidates(plain, agent_id=exclude_id, agent_cwd=target_cwd, text=needle, limit=limit)
    )
    return [(candidate.session_id, candidate.label) for candidate in found]


def fast(
    index: CandidateIndex, exclude_id: str, target_cwd: str | None, needle: str, limit: int
) -> list[tuple[str, str]]:
    found = index.search(exclude_id=exclude_id, target_cwd=target_cwd, needle=needle.lower(), limit=limit)
    return [(record.id, label) for record, label in found]


@settings(max_examples=300, deadline=None)
@given(
    plain=sessions(),
    data=st.data(),
    target_cwd=st.sampled_from([*CWDS, "/nowhere"]),
    needle=texts,
    more=st.text(alphabet=ALPHABET, max_size=2),
    limit=st.integers(1, 15),
)
def test_the_index_answers_what_the_generic_algorithm_answers(
    plain: Sessions, data: st.DataObject, target_cwd: str | None, needle: str, more: str, limit: int
) -> None:
    index = CandidateIndex(plain.entries())
    for change in data.draw(changes(list(plain.records))):
        apply(index, plain, change)
    exclude_id = data.draw(st.sampled_from([*plain.records, "none"]))
    for typed in (needle, needle + more):  # the second may be narrowed from the first's full answer
        assert fast(index, exclude_id, target_cwd, typed, limit) == generic(
            plain, exclude_id, target_cwd, typed, limit
        ), (typed, exclude_id, target_cwd, limit)


@settings(max_examples=100, deadline=None)
@given(plain=sessions(), target_cwd=st.sampled_from([*CWDS, "/nowhere"]), needle=texts)
def test_a_fresh_build_and_a_rebuild_after_changes_agree(
    plain: Sessions, target_cwd: str | None, needle: str
) -> None:
    built = CandidateIndex(plain.entries())
    columns = list(
        zip(*[(r.id, r.created_at, r.cwd, label, r.updated_at) for r, label in plain.entries()], strict=True)
    )
    from_columns = (
        CandidateIndex.from_columns(*(list(column) for column in columns)) if columns else CandidateIndex([])
    )
    for index in (built, from_columns):
        assert fast(index, "", target_cwd, needle, 50) == generic(plain, "", target_cwd, needle, 50)
