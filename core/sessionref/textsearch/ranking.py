"""Ordering matched sessions (pure): relevance, then same folder, then recent activity.

bm25 scores are real numbers that practically never tie, which would leave the folder and
recency tie-breaks without effect. So relevance is compared in bands: sessions whose best
message scores within `RELEVANCE_BAND` (a ratio) of each other, counted from the best score
down, count as equally relevant, and among them the current folder and then recent activity
decide. An unranked search (every word very common) puts all sessions in one band.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sessionref.textsearch.protocol import FactsProvider, SessionFacts

# Two sessions whose relevance differs by less than this ratio (per band) tie on relevance.
RELEVANCE_BAND = 0.15
_BAND_STEP = math.log1p(RELEVANCE_BAND)
# Facts are first asked for this many times `limit` sessions (the most relevant), then four
# times as many each time, until the first `limit` are decided (`rank_sessions_asking`).
FIRST_ASKED_PER_SHOWN = 2


@dataclass(frozen=True, slots=True)
class RankedSession:
    """A session's best message (`row_id`) with what ordered it."""

    session_id: str
    row_id: int
    relevance: float
    same_folder: bool
    last_activity: int


def best_per_session(candidates: Iterable[tuple[int, int, float]]) -> dict[int, tuple[int, float]]:
    """For `(row_id, session_key, relevance)` candidates: each session's best `(row_id, relevance)`.

    The best is the highest relevance; on a tie (or without relevance) the newest row (highest id).
    """
    best: dict[int, tuple[int, float]] = {}
    for row_id, session, relevance in candidates:
        kept = best.get(session)
        if kept is None or relevance > kept[1] or (relevance == kept[1] and row_id > kept[0]):
            best[session] = (row_id, relevance)
    return best


# Weights of a session's next-best messages added to its best one's score in a loose search.
FURTHER_MESSAGE_WEIGHTS = (0.5, 0.25)


def summed_per_session(candidates: Iterable[tuple[int, int, float]]) -> dict[int, tuple[int, float]]:
    """Like `best_per_session`, but a session's relevance also counts its next-best messages
    (`FURTHER_MESSAGE_WEIGHTS`): for loose text, where the question's words are often spread over
    a question and its answer."""
    scores: dict[int, list[tuple[float, int]]] = {}
    for row_id, session, relevance in candidates:
        scores.setdefault(session, []).append((relevance, row_id))
    summed: dict[int, tuple[int, float]] = {}
    for session, found in scores.items():
        found.sort(reverse=True)
        relevance = found[0][0] + sum(
            weight * score for weight, (score, _row) in zip(FURTHER_MESSAGE_WEIGHTS, found[1:], strict=False)
        )
        summed[session] = (found[0][1], relevance)
    return summed


def rank_sessions(
    best: Iterable[tuple[str, int, float]],
    facts: Mapping[str, SessionFacts],
    cwd: str | None,
    *,
    ranked: bool,
    limit: int | None = None,
) -> list[RankedSession]:
    """`(session_id, row_id, relevance)` per session, best first (the first `limit` of them).

    Sessions without facts are dropped. Only the chosen sessions become objects: a search
    ranks up to a thousand sessions per keystroke to show twenty.
    """
    entries: list[tuple[str, int, float, bool, int]] = []
    for session_id, row_id, relevance in best:
        fact = facts.get(session_id)
        if fact is not None:
            same = cwd is not None and fact.cwd == cwd
            entries.append((session_id, row_id, relevance if ranked else 0.0, same, fact.last_activity))
    top = max((entry[2] for entry in entries), default=0.0) if ranked else 0.0

    def key(entry: tuple[str, int, float, bool, int]) -> tuple[int, bool, int, int]:
        return (relevance_band(entry[2], top) if ranked else 0, not entry[3], -entry[4], -entry[1])

    chosen = heapq.nsmallest(limit, entries, key=key) if limit is not None else sorted(entries, key=key)
    return [RankedSession(*entry) for entry in chosen]


def relevance_band(relevance: float, top: float) -> int:
    """The relevance band of `relevance` below the best, `top`: 0 for the best, higher lower down."""
    if relevance >= top:
        return 0
    if relevance <= 0:
        return 1 << 30
    return int(math.log(top / relevance) / _BAND_STEP)


def rank_sessions_asking(
    best: Sequence[tuple[str, int, float]],
    facts: FactsProvider,
    cwd: str | None,
    *,
    ranked: bool,
    limit: int | None,
) -> tuple[list[RankedSession], dict[str, SessionFacts]]:
    """`rank_sessions` of `best`, with the facts asked of `facts`, and the facts it asked for.

    A ranked search asks only for the sessions that can reach the first `limit`, most relevant
    first: once `limit` sessions with facts lie in bands above the band of the last one asked
    for, no session left can come before them (a band is decided by relevance alone, and the
    ones left are no more relevant). An unranked one is one band, so it asks for all.
    """
    if not ranked or limit is None:
        known = dict(facts([entry[0] for entry in best]))
        return rank_sessions(best, known, cwd, ranked=ranked, limit=limit), known
    pending = sorted(best, key=lambda entry: entry[2], reverse=True)
    known = {}
    asked = 0
    size = max(1, FIRST_ASKED_PER_SHOWN * limit)
    while asked < len(pending):
        known.update(facts([entry[0] for entry in pending[asked : asked + size]]))
        asked, size = min(len(pending), asked + size), size * 4
        top = next((entry[2] for entry in pending[:asked] if entry[0] in known), None)
        if top is None or asked == len(pending):
            continue
        floor = relevance_band(pending[asked - 1][2], top)
        settled = sum(
            1 for entry in pending[:asked] if entry[0] in known and relevance_band(entry[2], top) < floor
        )
        if settled >= limit:
            break
    return rank_sessions(pending[:asked], known, cwd, ranked=True, limit=limit), known
