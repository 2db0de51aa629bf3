"""The first screen a ranking of every match would show, by brute force (for the benchmarks).

A keystroke's search reads only what its first screen needs (`sessionref.textsearch.search`).
Whether that screen is the one a complete ranking shows is measured here against the slow way:
every message matching the keystroke's expression (`Searcher.scoring`: the same words, the same
very common words left out) is read from every shard with its score (bm25 when the keystroke
ranks, else none), joined to `messages` for its session (not through the searcher's run map, so
that is checked too), each session's best message kept, and every session ranked with the same
`rank_sessions` (relevance bands, folder, recency). Only `any_word` plans (questions) are not
covered: they are a bounded ranking by design (`ANY_WORD_ROWS_PER_SHARD`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from sessionref.service.protocols import ConversationSearchResult
from sessionref.textsearch import TextIndex
from sessionref.textsearch.protocol import FactsProvider
from sessionref.textsearch.query import parse_query
from sessionref.textsearch.ranking import best_per_session, rank_sessions
from sessionref.textsearch.schema import list_shards, shard_table


def full_first_screen(index: TextIndex, text: str, facts: FactsProvider, limit: int) -> list[str] | None:
    """The session ids a ranking of every match of `text` shows first (None: it does not search)."""
    plan = parse_query(text)
    if plan.status != "ok":
        return None

    def work(connection: sqlite3.Connection) -> list[str]:
        expression, ranked = index.file.searcher.scoring(plan)
        candidates: list[tuple[int, int, float]] = []
        for shard in list_shards(connection):
            table = shard_table(shard)
            score = f"-bm25({table})" if ranked else "0.0"
            candidates += connection.execute(
                f"SELECT {table}.rowid, m.session, {score} FROM {table} JOIN messages AS m "
                f"ON m.id = {table}.rowid WHERE {table} MATCH ?",
                (expression,),
            ).fetchall()
        best = best_per_session(candidates)
        names = dict(connection.execute("SELECT key, session_id FROM sessions"))
        entries = [(names[key], row_id, relevance) for key, (row_id, relevance) in best.items()]
        known = facts([entry[0] for entry in entries])
        return [
            session.session_id for session in rank_sessions(entries, known, None, ranked=ranked, limit=limit)
        ]

    return index.file.read(work)


@dataclass
class Completeness:
    """How the first screens of searches compare with those of complete rankings."""

    compared: int = 0
    equal: int = 0
    nearly: int = 0  # at least `NEARLY_SHARED` of `shown` sessions shared (same sessions, any order)
    same_top: int = 0  # the same first `TOP` sessions, in order
    unranked: int = 0  # of those compared, ranked by folder and recency (the word being typed only)

    def add(self, ours: Sequence[str], full: Sequence[str], shown: int, ranked: bool) -> None:
        """Count one keystroke: our first screen `ours` against the complete ranking's `full`."""
        self.compared += 1
        self.equal += list(ours) == list(full)
        self.nearly += len(set(ours) & set(full)) >= min(len(full), NEARLY_SHARED * shown // 20)
        self.same_top += list(ours[:TOP]) == list(full[:TOP])
        self.unranked += not ranked

    def row(self) -> dict[str, str]:
        """The counts as a markdown table row."""
        share = max(1, self.compared)
        return {
            "keystrokes compared": f"{self.compared:,}",
            "first screen equal": f"{self.equal / share:.1%}",
            f"≥ {NEARLY_SHARED} of 20 sessions shared": f"{self.nearly / share:.1%}",
            f"same top {TOP}": f"{self.same_top / share:.1%}",
            "by folder and recency": f"{self.unranked / share:.1%}",
        }


NEARLY_SHARED = 18
TOP = 5


def compare(
    index: TextIndex,
    answers: Sequence[tuple[str, ConversationSearchResult]],
    facts: FactsProvider,
    shown: int,
) -> tuple[Completeness, list[str]]:
    """`Completeness` of `(text, our answer)` pairs (each text once), and the texts that differed."""
    measured = Completeness()
    differed: list[str] = []
    seen: set[str] = set()
    for text, answer in answers:
        if text in seen or answer.status != "ok":
            continue
        seen.add(text)
        full = full_first_screen(index, text, facts, shown)
        if full is None:
            continue
        ours = [match.session_id for match in answer.matches]
        measured.add(ours, full, shown, answer.ranked)
        if ours != full:
            differed.append(text)
    return measured, differed
