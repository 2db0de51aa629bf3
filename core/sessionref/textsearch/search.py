"""One keystroke's search over the sharded FTS5 index.

What a keystroke needs is a first screen of sessions, not a ranking of every matching message:

1. Each word's document frequency is estimated from its newest matches in the newest two shards
   (cached per word: only the word being typed costs a probe).
2. A single word in at least `VERY_COMMON_SHARE` of all messages (`the`, `to`, `which`, in any
   language: found in the data, not a list) is not required next to rarer words: it filters
   almost nothing and makes every statement walk a huge posting list. Quoted phrases keep every
   word.
3. Shards are read newest first, with `ORDER BY rowid DESC LIMIT`, until `CANDIDATE_ROWS`
   matching messages (outside the excluded session) are found or the shards run out: a common
   query stops in the newest shard, a rare one reads every shard but each read is small. A
   phrase holding a very common word costs a position check per row of its rarest word, so its
   reach is bounded by `CANDIDATE_WORK_BUDGET` once a first screen is found.
4. bm25 is asked for only when the postings it would walk stay within `RANK_POSTINGS_BUDGET`
   (FTS5's bm25 counts every match of every phrase, per shard read, for its idf); otherwise the
   sessions are ordered by folder and recency alone (`ranked=False`) — relevance among
   messages that all hold only very common words says little anyway.
5. A keystroke that only narrows a query known to match nothing (typing on after a word that
   is not there) is answered without reading the index.

An `any_word` plan (a question, `question.py`) skips 3-5: each shard gives its
`ANY_WORD_ROWS_PER_SHARD` best messages by bm25 (a message holding more, rarer words, or a whole
phrase, scores higher), and every shard is read.
"""

from __future__ import annotations

import math
import sqlite3
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from sessionref.service.candidates import label_from_title
from sessionref.service.protocols import (
    ConversationMatch,
    ConversationRequest,
    ConversationSearchResult,
    Role,
)
from sessionref.textsearch.protocol import FactsProvider, SearchCancellation, SessionFacts
from sessionref.textsearch.query import Phrase, QueryPlan, plan_narrows
from sessionref.textsearch.question import stem
from sessionref.textsearch.ranking import (
    RankedSession,
    best_per_session,
    rank_sessions_asking,
    summed_per_session,
)
from sessionref.textsearch.schema import (
    KIND_ASSISTANT,
    KIND_CHECKPOINT,
    SQL_VARIABLES,
    list_shards,
    shard_range,
    shard_table,
)
from sessionref.textsearch.snippet import make_snippet, match_pattern
from sessionref.textsearch.vocabulary import Vocabulary
from sessionref.textsearch.writer import loaded_text

# Matching messages examined per search at most (newest first); fewer means `complete`.
CANDIDATE_ROWS = 1000
# A word in at least this share of all messages is not required when rarer words are given (the
# stop words of any language, found in the data: "the", "to", "which", ...).
VERY_COMMON_SHARE = 0.05
# bm25 is computed when it would read at most this many postings (≈ 75 ns each here: ≈ 7.5 ms).
RANK_POSTINGS_BUDGET = 100_000
# Shards read for phrases of common words stop at this much estimated work (same unit) once a
# first screen is found, and at `REACH_OVERRUN` times that in any case.
CANDIDATE_WORK_BUDGET = 100_000
REACH_OVERRUN = 3
# Newest matches read to estimate a word's document frequency, from at most this many shards.
DENSITY_PROBE_ROWS = 64
PROBE_SHARDS = 2
# Checking a phrase's word positions in one row costs about as much as reading this many
# postings (≈1 µs against ≈40 ns, measured on `"the shei"*` at 2M messages).
PHRASE_CHECK_POSTINGS = 25
# An `any_word` plan leaves out its very common words only in an index of this many messages or
# more: in a small one, a few messages make any word "common".
ANY_WORD_COMMON_ROWS = 2000
# Best messages (by bm25) each shard gives an `any_word` plan.
ANY_WORD_ROWS_PER_SHARD = 200
# A loose word held by fewer messages than this (in the newest shards) gets second chances: the
# words one edit away, and the two words it may be joined from.
LITTLE_FOUND = 3
# Estimates are reused while the index grows by less than this share.
ESTIMATE_DRIFT = 0.1
_ESTIMATE_CACHE = 512
_EMPTY_CACHE = 16


class Searcher:
    """Runs searches on one read connection; the caller serialises calls and owns the transaction."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self._session_ids: dict[int, str] = {}  # keys are never reused, so this never goes stale
        self._estimates: OrderedDict[str, tuple[float, int]] = OrderedDict()
        self._empty: list[tuple[tuple[Phrase, ...], int]] = []
        self._shards: tuple[int, tuple[int, ...]] = (-1, ())
        self._vocabulary = Vocabulary(connection)

    # -- index facts -------------------------------------------------------------------------

    def _shard_list(self, version: int) -> tuple[int, ...]:
        """Existing shard numbers, newest first (re-read when another connection committed)."""
        if self._shards[0] != version:
            self._shards = (version, tuple(reversed(list_shards(self.connection))))
        return self._shards[1]

    def _estimate(self, token: str, prefix: bool, shards: Sequence[int], next_id: int, rows: int) -> float:
        """Estimated number of messages holding `token` (as a prefix when `prefix`).

        Read from its newest matches in the newest `PROBE_SHARDS` shards: from how far back the
        newest `DENSITY_PROBE_ROWS` reach, or from how many the probed shards hold; exact when
        every shard was probed. Cached per token while the index grows by less than
        `ESTIMATE_DRIFT`, so the words before the one being typed cost nothing.
        """
        key = f'"{token}"' + ("*" if prefix else "")
        cached = self._estimates.get(key)
        if cached is not None and abs(rows - cached[1]) <= ESTIMATE_DRIFT * max(cached[1], 1):
            self._estimates.move_to_end(key)
            return cached[0]
        found: list[int] = []
        covered = 0
        for shard in shards[:PROBE_SHARDS]:
            table = shard_table(shard)
            found += [
                row_id
                for (row_id,) in self.connection.execute(
                    f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT ?",
                    (key, DENSITY_PROBE_ROWS - len(found)),
                )
            ]
            if len(found) >= DENSITY_PROBE_ROWS:
                break
            low, high = shard_range(shard)
            covered += min(high, next_id - 1) - low + 1
        if len(found) >= DENSITY_PROBE_ROWS:
            estimate = DENSITY_PROBE_ROWS * next_id / max(1, next_id - found[-1])
        elif len(shards) <= PROBE_SHARDS:
            estimate = float(len(found))
        else:
            estimate = len(found) * next_id / max(1, covered)
        estimate = min(float(rows), estimate)
        self._estimates[key] = (estimate, rows)
        if len(self._estimates) > _ESTIMATE_CACHE:
            self._estimates.popitem(last=False)
        return estimate

    def _phrase_estimates(
        self, phrase: Phrase, shards: Sequence[int], next_id: int, rows: int
    ) -> tuple[float, float]:
        """(messages that may match `phrase`, postings' worth of work to evaluate it once).

        A phrase matches at most where its rarest word is; evaluating it walks that word's
        matches and checks positions against the others (`PHRASE_CHECK_POSTINGS` per row).
        """
        last = len(phrase.tokens) - 1
        estimates = [
            self._estimate(token, phrase.prefix and index == last, shards, next_id, rows)
            for index, token in enumerate(phrase.tokens)
        ]
        rarest = min(estimates)
        return rarest, rarest if len(estimates) == 1 else rarest * PHRASE_CHECK_POSTINGS

    def _known_empty(self, phrases: tuple[Phrase, ...], version: int) -> bool:
        return any(seen == version and plan_narrows(phrases, wider) for wider, seen in self._empty)

    def _remember_empty(self, phrases: tuple[Phrase, ...], version: int) -> None:
        self._empty = [*self._empty[-(_EMPTY_CACHE - 1) :], (phrases, version)]

    def warm(self) -> None:
        """Load every session key's id at once (about 50 ms for 100,000 sessions), off the keystroke path."""
        self._session_ids.update(self.connection.execute("SELECT key, session_id FROM sessions"))

    def _ids(self, keys: Iterable[int]) -> dict[int, str]:
        missing = [key for key in keys if key not in self._session_ids]
        for start in range(0, len(missing), SQL_VARIABLES):
            chunk = missing[start : start + SQL_VARIABLES]
            marks = ",".join("?" * len(chunk))
            self._session_ids.update(
                self.connection.execute(f"SELECT key, session_id FROM sessions WHERE key IN ({marks})", chunk)
            )
        return self._session_ids

    # -- the search --------------------------------------------------------------------------

    def search(
        self,
        plan: QueryPlan,
        request: ConversationRequest,
        *,
        facts: FactsProvider,
        cancel: SearchCancellation,
    ) -> ConversationSearchResult:
        """The labelled results of `plan` (parsed from `request.text`; status "ok"); see the module
        docstring for the steps."""
        limit, exclude_session_id = request.limit, request.exclude_session_id
        meta = dict(self.connection.execute("SELECT key, value FROM meta WHERE key IN ('next_id', 'rows')"))
        next_id, rows = int(meta["next_id"]), int(meta["rows"])
        if rows == 0:
            return ConversationSearchResult(pending=plan.pending)
        version = int(self.connection.execute("PRAGMA data_version").fetchone()[0])
        shards = self._shard_list(version)
        matches: dict[Phrase, float] = {}
        work: dict[Phrase, float] = {}
        for phrase in plan.phrases:
            cancel.raise_if_cancelled()
            matches[phrase], work[phrase] = self._phrase_estimates(phrase, shards, next_id, rows)
        common = {
            phrase
            for phrase in plan.phrases
            if not phrase.quoted and len(phrase.tokens) == 1 and matches[phrase] >= VERY_COMMON_SHARE * rows
        }
        executed = tuple(p for p in plan.phrases if p not in common) or plan.phrases
        if plan.any_word:
            if rows < ANY_WORD_COMMON_ROWS:  # a small index: no word is common enough to leave out
                executed = plan.phrases
            chances = self._second_chances(plan, shards)
            plan = replace(plan, phrases=plan.phrases + chances)
            return self._any_word(plan, executed + chances, shards, request, facts, cancel)
        if self._known_empty(executed, version):
            return ConversationSearchResult(pending=plan.pending)
        # Phrases of common words cost a position check per row of their rarest word: how many
        # shards that work allows decides both the reach of the search and whether to rank.
        per_shard = sum(work[p] for p in executed if len(p.tokens) > 1) / max(1, len(shards))
        reach = len(shards) if per_shard == 0 else max(1, int(CANDIDATE_WORK_BUDGET / per_shard))
        ranked = self._worth_ranking(
            [matches[p] for p in executed], [work[p] for p in executed], len(shards), min(reach, len(shards))
        )
        exclude_key = self._exclude_key(exclude_session_id)
        candidates, complete = self._candidates(
            plan.expression(executed), shards, reach, limit, exclude_key, ranked, cancel
        )
        if not candidates and complete:
            self._remember_empty(executed, version)
            return ConversationSearchResult(ranked=ranked, pending=plan.pending)
        return self._ranked_results(plan, candidates, request, facts, ranked, complete, cancel)

    def _exclude_key(self, exclude_session_id: str | None) -> int:
        """The key of the session to leave out, or -1 (no session has it)."""
        if exclude_session_id is None:
            return -1
        found = self.connection.execute(
            "SELECT key FROM sessions WHERE session_id = ?", (exclude_session_id,)
        ).fetchone()
        return int(found[0]) if found else -1

    def _second_chances(self, plan: QueryPlan, shards: Sequence[int]) -> tuple[Phrase, ...]:
        """Phrases for the loose words the index holds little of: the words one edit away (each as
        its stem's prefix, like the word) and the two words a joined word is made of."""
        found: list[Phrase] = []
        for word in plan.loose_words:
            held = self._vocabulary.documents(word, shards)
            if held >= LITTLE_FOUND:
                continue
            for near in self._vocabulary.near(word, shards):
                if self._vocabulary.documents(near, shards) > held:
                    base = stem(near)
                    found.append(Phrase((base,), True, False, (base,)))
            found += [Phrase(pair, False, False, pair) for pair in self._vocabulary.splits(word, shards)]
        return tuple(
            phrase for index, phrase in enumerate(found) if phrase not in found[:index] + list(plan.phrases)
        )

    def _any_word(
        self,
        plan: QueryPlan,
        executed: tuple[Phrase, ...],
        shards: Sequence[int],
        request: ConversationRequest,
        facts: FactsProvider,
        cancel: SearchCancellation,
    ) -> ConversationSearchResult:
        """The results of an `any_word` plan: every shard's best messages by bm25, ranked."""
        exclude_key = self._exclude_key(request.exclude_session_id)
        expression = plan.expression(executed)
        found: list[tuple[int, int, float]] = []
        for shard in shards:
            cancel.raise_if_cancelled()
            table = shard_table(shard)
            found += self.connection.execute(
                f"SELECT {table}.rowid, m.session, -bm25({table}) AS score FROM {table} JOIN messages AS m "
                f"ON m.id = {table}.rowid WHERE {table} MATCH ? AND m.session != ? "
                "ORDER BY score DESC LIMIT ?",
                (expression, exclude_key, ANY_WORD_ROWS_PER_SHARD),
            ).fetchall()
        return self._ranked_results(plan, found, request, facts, True, True, cancel)

    def _ranked_results(
        self,
        plan: QueryPlan,
        candidates: list[tuple[int, int, float]],
        request: ConversationRequest,
        facts: FactsProvider,
        ranked: bool,
        complete: bool,
        cancel: SearchCancellation,
    ) -> ConversationSearchResult:
        """Each candidate session's best message, the sessions ranked, the first `limit` as matches."""
        limit, cwd = request.limit, request.cwd
        best = summed_per_session(candidates) if plan.any_word else best_per_session(candidates)
        ids = self._ids(best)
        order, known = rank_sessions_asking(
            [(ids[key], row_id, relevance) for key, (row_id, relevance) in best.items() if key in ids],
            facts,
            cwd,
            ranked=ranked,
            limit=limit,
        )
        found = self._matches(order, known, plan.phrases, cancel)
        return ConversationSearchResult(tuple(found), "ok", plan.pending, complete, ranked=ranked)

    @staticmethod
    def _worth_ranking(matches: Sequence[float], work: Sequence[float], shard_count: int, reach: int) -> bool:
        """Whether bm25 stays within `RANK_POSTINGS_BUDGET` for phrases of these estimates.

        bm25 evaluates every phrase once more in each shard the search reads; a query whose
        matches are dense stops in the newest shard, a sparse one reads all it may (`reach`).
        """
        if shard_count == 0:
            return True
        per_shard = min(matches) / shard_count
        visited = reach if per_shard < 1 else min(reach, math.ceil(CANDIDATE_ROWS / per_shard))
        return sum(work) * visited / shard_count <= RANK_POSTINGS_BUDGET

    def _candidates(
        self,
        expression: str,
        shards: Sequence[int],
        reach: int,
        limit: int,
        exclude_key: int,
        ranked: bool,
        cancel: SearchCancellation,
    ) -> tuple[list[tuple[int, int, float]], bool]:
        """(row id, session key, relevance) of the newest matching messages, and whether that is all.

        Shards are read newest first until `CANDIDATE_ROWS` matches. Past `reach` shards (the
        work budget) the search stops as soon as it has `limit` rows to show, and in any case
        after `REACH_OVERRUN` times its reach: a first screen now rather than everything later.
        """
        found: list[tuple[int, int, float]] = []
        for count, shard in enumerate(shards):
            if count >= reach and (len(found) >= limit or count >= reach * REACH_OVERRUN):
                return found, False
            cancel.raise_if_cancelled()
            table = shard_table(shard)
            score = f"-bm25({table})" if ranked else "0.0"
            found += self.connection.execute(
                f"SELECT {table}.rowid, m.session, {score} FROM {table} JOIN messages AS m "
                f"ON m.id = {table}.rowid WHERE {table} MATCH ? AND m.session != ? "
                f"ORDER BY {table}.rowid DESC LIMIT ?",
                (expression, exclude_key, CANDIDATE_ROWS - len(found)),
            ).fetchall()
            if len(found) >= CANDIDATE_ROWS:
                return found, False
        return found, True

    def _matches(
        self,
        order: Sequence[RankedSession],
        known: Mapping[str, SessionFacts],
        phrases: Sequence[Phrase],
        cancel: SearchCancellation,
    ) -> list[ConversationMatch]:
        if not order:
            return []
        cancel.raise_if_cancelled()
        marks = ",".join("?" * len(order))
        details = {
            row_id: (seq, kind, time, text)
            for row_id, seq, kind, time, text in self.connection.execute(
                "SELECT m.id, m.seq, m.kind, m.time, t.text FROM messages AS m JOIN message_texts AS t "
                f"ON t.id = m.id WHERE m.id IN ({marks})",
                [session.row_id for session in order],
            )
        }
        pattern = match_pattern(phrases)
        matches: list[ConversationMatch] = []
        for session in order:
            detail = details.get(session.row_id)
            if detail is None:
                continue
            seq, kind, time, text = detail
            role: Role = "assistant" if kind == KIND_ASSISTANT else "user"
            snippet = make_snippet(loaded_text(text), phrases, pattern=pattern)
            title = known[session.session_id].title
            matches.append(
                ConversationMatch(
                    session.session_id,
                    label_from_title(session.session_id, title),
                    seq,
                    role,
                    kind == KIND_CHECKPOINT,
                    time,
                    snippet.text,
                    snippet.spans,
                    session.same_folder,
                    session.last_activity,
                    session.relevance,
                )
            )
        return matches
