"""One keystroke's search over the sharded FTS5 index.

What a keystroke needs is a first screen of sessions, the one a ranking of every matching
message would show first:

1. Each word's document frequency is estimated from its newest matches in the newest two shards
   (cached per word: only the word being typed costs a probe).
2. A single word in at least `VERY_COMMON_SHARE` of all messages (`the`, `to`, `which`, in any
   language: found in the data, not a list) is not required next to rarer words: it filters
   almost nothing and makes every statement walk a huge posting list. Quoted phrases keep every
   word.
3. What ranks (docs/search.md, "Ranking a keystroke"): the word still being typed is a filter,
   as in an engine's prefix query (constant score). A keystroke with a finished word or phrase
   (followed by a space or a closing quote, a CJK pair, a quoted phrase) is ranked by bm25 of
   its words; one with only the word being typed by folder and recency (`ranked=False`).
4. A ranked keystroke is ranked over every match when that stays within `FULL_RANK_BUDGET`
   (`_exact`): each shard gives its best messages by bm25, and more of them only when the first
   screen is not yet settled by them (threshold: no message left unread in any shard can reach
   the bands shown). Past the budget, a single finished word is ranked from its lists in the
   sealed shards (`word_lists`: its best messages there, computed once the shard sealed) with the
   other shards scored live, when those fit the budget (`_listed_shards`). Else it falls back to
   the newest `CANDIDATE_ROWS` matching messages (`complete=False`), bm25 asked for only while
   `RANK_POSTINGS_BUDGET` allows.
5. An unranked keystroke reads the newest matches, shard by shard, until it has
   `RECENT_SESSIONS_PER_SHOWN` times the sessions to show (`_newest`): rows are numbered in
   insertion order, so the newest matches belong to the most recently active sessions. A phrase
   holding a very common word costs a position check per row of its rarest word, so its reach is
   bounded by `CANDIDATE_WORK_BUDGET` once a first screen is found.
6. A keystroke that only narrows a query known to match nothing (typing on after a word that
   is not there) is answered without reading the index, and one that only adds a 1-2 letter
   fragment to the words of the previous one (`flaky t` after `flaky `) with its answer.

A row's session comes from `row_sessions.RowSessions` (no join to `messages`). An `any_word`
plan (a question, `question.py`) skips 3-6: each shard gives its `ANY_WORD_ROWS_PER_SHARD` best
messages by bm25 (a message holding more, rarer words, or a whole phrase, scores higher), and
every shard is read.
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
    relevance_band,
    summed_per_session,
)
from sessionref.textsearch.row_sessions import RowSessions
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
from sessionref.textsearch.word_lists import WordList, usable, word_lists
from sessionref.textsearch.writer import loaded_text

# Matching messages examined per search at most (newest first) when not every match is ranked.
CANDIDATE_ROWS = 1000
# A ranking of every match is computed when its estimated cost is at most this many postings'
# worth (bm25 costs about `SCORE_ROW_POSTINGS` per matching message: ≈ 1.6 µs at 100,000
# sessions, most of it FTS5 reading the message's length; plus one walk of each phrase's matches
# per shard for its idf): ≈ 9,000 matching messages, ≈ 15 ms with the other core idle, under
# 50 ms with it busy.
FULL_RANK_BUDGET = 180_000
SCORE_ROW_POSTINGS = 20
# Matches of several phrases, or of a phrase of several words, are counted exactly (cheaper than
# scoring them) when evaluating the cheapest phrase costs at most this much (≈ 5 ms: a prefix of
# five letters or more merges every word it starts).
COUNT_WORK_UP_TO = 50_000
# Best messages each shard gives a full ranking at first, per session shown; four times as many
# when those leave the first screen unsettled, up to `TOP_ROWS_DEEPEST` per session shown.
TOP_ROWS_PER_SHOWN = 8
TOP_ROWS_DEEPEST = 128
# An unranked search reads newest matches until it holds this many times the sessions to show
# (ranked by folder and recency among them), in steps of `RECENT_ROWS_PER_SHOWN` rows per session shown.
RECENT_SESSIONS_PER_SHOWN = 2
RECENT_ROWS_PER_SHOWN = 8
# Of a session's matches, unranked, the newest this many are looked at for the shortest to show
# (a question is often followed by several replies repeating its words).
SHOWN_ALTERNATIVES = 8
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
        self._rows = RowSessions()
        self._rows_version = -1
        # The last answer, by what it was asked (the same words: typing a 1-2 letter fragment after
        # them changes only `pending`) and its text (the same text asked again is searched again).
        self._last: tuple[tuple[object, ...], object, ConversationSearchResult] | None = None

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
        """Load every session key's id and the row runs at once (about 100 ms for 100,000
        sessions), off the keystroke path."""
        self._session_ids.update(self.connection.execute("SELECT key, session_id FROM sessions"))
        self._rows.refresh(self.connection)
        self._rows_version = int(self.connection.execute("PRAGMA data_version").fetchone()[0])

    def _ids(self, keys: Iterable[int]) -> dict[int, str]:
        missing = [key for key in keys if key not in self._session_ids]
        for start in range(0, len(missing), SQL_VARIABLES):
            chunk = missing[start : start + SQL_VARIABLES]
            marks = ",".join("?" * len(chunk))
            self._session_ids.update(
                self.connection.execute(f"SELECT key, session_id FROM sessions WHERE key IN ({marks})", chunk)
            )
        return self._session_ids

    def _executed(
        self, plan: QueryPlan, shards: Sequence[int], next_id: int, rows: int, cancel: SearchCancellation
    ) -> tuple[tuple[Phrase, ...], bool, dict[Phrase, float], dict[Phrase, float]]:
        """The phrases searched, whether they rank by bm25 (`scored`), and each phrase's estimated
        matches and work (`_phrase_estimates`).

        A very common single word (`VERY_COMMON_SHARE`: a stop word of any language) is left out
        next to rarer ones unless quoted; given alone, or quoted, it is searched but, in an index of
        `ANY_WORD_COMMON_ROWS` messages or more, does not score: its bm25 would order the messages
        by their length alone. The word being typed never scores (a filter). So a keystroke ranks
        by bm25 when it holds a finished word or phrase that carries relevance, else by folder and
        recency.
        """
        matches: dict[Phrase, float] = {}
        work: dict[Phrase, float] = {}
        for phrase in plan.phrases:
            cancel.raise_if_cancelled()
            if len(plan.phrases) == 1 and phrase.prefix and len(phrase.tokens) == 1 and not plan.any_word:
                matches[phrase] = work[phrase] = 0.0  # alone and unranked: its count is never used
            else:
                matches[phrase], work[phrase] = self._phrase_estimates(phrase, shards, next_id, rows)
        very_common = {
            phrase
            for phrase in plan.phrases
            if len(phrase.tokens) == 1 and matches[phrase] >= VERY_COMMON_SHARE * rows
        }
        common = {phrase for phrase in very_common if not phrase.quoted}  # a quoted word is required
        executed = tuple(p for p in plan.phrases if p not in common) or plan.phrases
        weightless = very_common if rows >= ANY_WORD_COMMON_ROWS else set()
        scored = any(not phrase.prefix and phrase not in weightless for phrase in executed)
        return executed, scored, matches, work

    def _index_state(self) -> tuple[int, int, int, tuple[int, ...]]:
        """(next row id, rows, `PRAGMA data_version`, shards newest first) as this read sees them."""
        meta = dict(self.connection.execute("SELECT key, value FROM meta WHERE key IN ('next_id', 'rows')"))
        version = int(self.connection.execute("PRAGMA data_version").fetchone()[0])
        return int(meta["next_id"]), int(meta["rows"]), version, self._shard_list(version)

    def scoring(self, plan: QueryPlan) -> tuple[str, bool]:
        """The FTS5 expression a keystroke's `plan` (not `any_word`) matches messages with, and
        whether they rank by bm25 (else by folder and recency): what a ranking of every match
        would score, for measuring how complete a search's first screen is."""
        next_id, rows, _version, shards = self._index_state()
        executed, scored, _, _ = self._executed(plan, shards, next_id, rows, SearchCancellation())
        return plan.expression(executed), scored

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
        next_id, rows, version, shards = self._index_state()
        if rows == 0:
            return ConversationSearchResult(pending=plan.pending)
        if self._rows_version != version:
            self._rows.refresh(self.connection)
            self._rows_version = version
        asked = (
            plan.phrases,
            plan.any_word,
            request.limit,
            request.cwd,
            request.exclude_session_id,
            version,
            facts,
        )
        last = self._last
        if last is not None and last[0] == asked and last[1] != request.text:
            return replace(last[2], pending=plan.pending)  # only the fragment being typed changed
        result = self._search(plan, request, shards, next_id, rows, version, facts, cancel)
        self._last = (asked, request.text, result)
        return result

    def _search(
        self,
        plan: QueryPlan,
        request: ConversationRequest,
        shards: Sequence[int],
        next_id: int,
        rows: int,
        version: int,
        facts: FactsProvider,
        cancel: SearchCancellation,
    ) -> ConversationSearchResult:
        executed, scored, matches, work = self._executed(plan, shards, next_id, rows, cancel)
        if plan.any_word:
            if rows < ANY_WORD_COMMON_ROWS:  # a small index: no word is common enough to leave out
                executed = plan.phrases
            chances = self._second_chances(plan, shards)
            plan = replace(plan, phrases=plan.phrases + chances)
            return self._any_word(plan, executed + chances, shards, request, facts, cancel)
        if self._known_empty(executed, version):
            return ConversationSearchResult(pending=plan.pending)
        exclude_key = self._exclude_key(request.exclude_session_id)
        expression = plan.expression(executed)
        # Phrases of common words cost a position check per row of their rarest word: how many
        # shards that work allows decides the reach of the search and whether to rank.
        per_shard = sum(work[p] for p in executed if len(p.tokens) > 1) / max(1, len(shards))
        reach = len(shards) if per_shard == 0 else max(1, int(CANDIDATE_WORK_BUDGET / per_shard))
        if scored:
            within = self._full_rank_shards(expression, executed, matches, work, shards, cancel)
            listed: dict[int, WordList] = {}
            if within is None:
                within, listed = self._listed_shards(expression, executed, shards, cancel)
            if within is not None:
                result, matched = self._exact(
                    plan, expression, within, request, exclude_key, facts, cancel, listed
                )
                if not matched:
                    self._remember_empty(executed, version)
                return result
            ranked = self._worth_ranking(
                [matches[p] for p in executed],
                [work[p] for p in executed],
                len(shards),
                min(reach, len(shards)),
            )
        else:
            ranked = False
        candidates, complete = self._newest(
            expression, shards, reach, request.limit, exclude_key, ranked, cancel
        )
        if complete and scored and not ranked:
            # Every match was read after all (the estimates were high): rank them all.
            return self._exact(plan, expression, shards, request, exclude_key, facts, cancel)[0]
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

    def _scores(self, shard: int, expression: str, limit: int) -> list[tuple[int, float]]:
        """`(row_id, relevance)` of a shard's `limit` best messages matching `expression`, best first."""
        table = shard_table(shard)
        return self.connection.execute(
            f"SELECT rowid, -bm25({table}) AS score FROM {table} WHERE {table} MATCH ? "
            "ORDER BY score DESC LIMIT ?",
            (expression, limit),
        ).fetchall()

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
            found += self._rows.keyed(self._scores(shard, expression, ANY_WORD_ROWS_PER_SHARD), exclude_key)
        return self._ranked_results(plan, found, request, facts, True, True, cancel)

    def _full_rank_shards(
        self,
        expression: str,
        executed: Sequence[Phrase],
        matches: Mapping[Phrase, float],
        work: Mapping[Phrase, float],
        shards: Sequence[int],
        cancel: SearchCancellation,
    ) -> list[int] | None:
        """The shards to read for a ranking of every match of `expression`, or None when it would
        cost more than `FULL_RANK_BUDGET`.

        bm25 walks each phrase's matches once per shard (its idf) and scores every matching
        message. The rarest phrase bounds the matches; when that bound is over budget and there
        are several phrases or words, the matches are counted per shard (the bound is often far
        above what all the words match together), which also leaves out the shards with none.
        """
        idf_work = sum(work[phrase] for phrase in executed)
        bound = min(matches[phrase] for phrase in executed)
        if bound * SCORE_ROW_POSTINGS + idf_work <= FULL_RANK_BUDGET:
            return list(shards)
        cheapest = min(work[phrase] for phrase in executed)
        if (len(executed) == 1 and len(executed[0].tokens) == 1) or cheapest > COUNT_WORK_UP_TO:
            return None
        counts: dict[int, int] = {}
        for shard in shards:
            cancel.raise_if_cancelled()
            counts[shard] = self._shard_matches(shard, expression)
        if sum(counts.values()) * SCORE_ROW_POSTINGS + idf_work > FULL_RANK_BUDGET:
            return None
        return [shard for shard in shards if counts[shard] > 0]

    def _shard_matches(self, shard: int, expression: str) -> int:
        """How many messages of `shard` match `expression`."""
        table = shard_table(shard)
        query = f"SELECT count(*) FROM {table} WHERE {table} MATCH ?"
        return int(self.connection.execute(query, (expression,)).fetchone()[0])

    def _listed_shards(
        self,
        expression: str,
        executed: Sequence[Phrase],
        shards: Sequence[int],
        cancel: SearchCancellation,
    ) -> tuple[list[int] | None, dict[int, WordList]]:
        """For a single finished word past `FULL_RANK_BUDGET`: the shards to read for a ranking of
        every match, its lists in the sealed shards (`word_lists`) standing for their messages, or
        None when the shards without a list would still cost more than the budget.

        The shards without a list are counted: a listed shard without the word's list holds it in
        fewer than `LIST_MIN_DOCUMENTS` messages, the newest (open) shard is never listed.
        """
        if len(executed) != 1 or executed[0].prefix or len(executed[0].tokens) != 1:
            return None, {}
        found = word_lists(self.connection, executed[0].tokens[0], shards)
        listed = usable(found)
        live = 0
        for shard in shards:
            if shard in listed:
                continue
            cancel.raise_if_cancelled()
            if shard in found:  # too common in this shard to list
                live += found[shard].documents
            else:
                live += self._shard_matches(shard, expression)
            if live * (SCORE_ROW_POSTINGS + 1) > FULL_RANK_BUDGET:  # scored, and walked once for the idf
                return None, {}
        return list(shards), listed

    def _exact(
        self,
        plan: QueryPlan,
        expression: str,
        shards: Sequence[int],
        request: ConversationRequest,
        exclude_key: int,
        facts: FactsProvider,
        cancel: SearchCancellation,
        listed: Mapping[int, WordList] | None = None,
    ) -> tuple[ConversationSearchResult, bool]:
        """The first screen of a ranking of every match of `expression` in `shards` (threshold),
        and whether any message matched at all.

        Each shard gives its `TOP_ROWS_PER_SHOWN` × limit best messages by bm25 (from the word's
        list for the shards in `listed`: the same rows and scores, computed once the shard
        sealed). A shard that had more leaves messages unread that score at most its last one
        read; the first screen is settled once every session shown lies in a relevance band above
        the best of those (no unread message can enter or reorder it). Until then the unsettled
        shards are read deeper (a list, as deep as it goes).
        """
        lists = listed or {}
        limit = request.limit
        depth = TOP_ROWS_PER_SHOWN * limit
        read: dict[int, list[tuple[int, float]]] = {}
        more: dict[int, bool] = {}  # per shard: whether it has messages left unread
        todo = list(shards)
        while True:
            for shard in todo:
                cancel.raise_if_cancelled()
                kept = lists.get(shard)
                if kept is None:
                    read[shard] = self._scores(shard, expression, depth)
                    more[shard] = len(read[shard]) == depth
                else:
                    read[shard] = list(kept.best[:depth])
                    more[shard] = kept.documents > len(read[shard])
            cut = [shard for shard in read if more[shard]]
            unread = max((read[shard][-1][1] for shard in cut), default=None)
            candidates = [row for shard in read for row in self._rows.keyed(read[shard], exclude_key)]
            order, known, top = self._order(candidates, request, facts, ranked=True, any_word=False)
            settled = unread is None or (
                len(order) == limit and relevance_band(order[-1].relevance, top) < relevance_band(unread, top)
            )
            if settled or depth >= TOP_ROWS_DEEPEST * limit:
                found = self._matches(order, known, plan.phrases, cancel)
                answer = ConversationSearchResult(tuple(found), "ok", plan.pending, settled, ranked=True)
                return answer, any(read.values())
            depth *= 4
            todo = cut

    def _order(
        self,
        candidates: list[tuple[int, int, float]],
        request: ConversationRequest,
        facts: FactsProvider,
        *,
        ranked: bool,
        any_word: bool,
    ) -> tuple[list[RankedSession], dict[str, SessionFacts], float]:
        """Each candidate session's best message, the first `limit` sessions ranked, the facts
        asked for, and the best relevance among the sessions with facts."""
        best = summed_per_session(candidates) if any_word else best_per_session(candidates)
        ids = self._ids(best)
        entries = [(ids[key], row_id, relevance) for key, (row_id, relevance) in best.items() if key in ids]
        order, known = rank_sessions_asking(entries, facts, request.cwd, ranked=ranked, limit=request.limit)
        top = max((entry[2] for entry in entries if entry[0] in known), default=0.0)
        return order, known, top

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
        order, known, _top = self._order(candidates, request, facts, ranked=ranked, any_word=plan.any_word)
        if not ranked:
            order = self._shortest_shown(order, candidates)
        found = self._matches(order, known, plan.phrases, cancel)
        return ConversationSearchResult(tuple(found), "ok", plan.pending, complete, ranked=ranked)

    def _shortest_shown(
        self, order: list[RankedSession], candidates: list[tuple[int, int, float]]
    ) -> list[RankedSession]:
        """`order` with each session showing the shortest of its `SHOWN_ALTERNATIVES` newest matching
        messages read (the newest of equals).

        Unranked, every match scores the same and a session's newest match would be shown; the
        shortest is the one most about the words, as bm25 would choose (an answer quoting the
        question is longer than the question), for one length lookup per row instead of a score.
        """
        ids = self._session_ids
        shown = {session.session_id for session in order}
        per_session: dict[str, int] = {}
        rows: list[int] = []
        for row_id, key, _ in candidates:  # newest first: each session's newest few
            session_id = ids.get(key, "")
            if session_id in shown and per_session.get(session_id, 0) < SHOWN_ALTERNATIVES:
                per_session[session_id] = per_session.get(session_id, 0) + 1
                rows.append(row_id)
        if len(rows) == len(order):
            return order
        lengths: dict[int, int] = {}
        for start in range(0, len(rows), SQL_VARIABLES):
            chunk = rows[start : start + SQL_VARIABLES]
            marks = ",".join("?" * len(chunk))
            lengths.update(
                self.connection.execute(
                    f"SELECT id, length(text) FROM message_texts WHERE id IN ({marks})", chunk
                )
            )
        best: dict[str, int] = {}
        for row_id, key, _ in candidates:
            if row_id in lengths:
                session_id = ids[key]
                kept = best.get(session_id)
                if kept is None or (lengths[row_id], -row_id) < (lengths[kept], -kept):
                    best[session_id] = row_id
        return [replace(session, row_id=best.get(session.session_id, session.row_id)) for session in order]

    @staticmethod
    def _worth_ranking(matches: Sequence[float], work: Sequence[float], shard_count: int, reach: int) -> bool:
        """Whether bm25 of the newest `CANDIDATE_ROWS` stays within `RANK_POSTINGS_BUDGET`.

        bm25 evaluates every phrase once more in each shard the search reads; a query whose
        matches are dense stops in the newest shard, a sparse one reads all it may (`reach`).
        """
        if shard_count == 0:
            return True
        per_shard = min(matches) / shard_count
        visited = reach if per_shard < 1 else min(reach, math.ceil(CANDIDATE_ROWS / per_shard))
        return sum(work) * visited / shard_count <= RANK_POSTINGS_BUDGET

    def _newest(
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

        Ranked, the newest `CANDIDATE_ROWS`; unranked, the newest until they hold
        `RECENT_SESSIONS_PER_SHOWN` × `limit` sessions. Past `reach` shards (the work budget) the
        search stops as soon as it has `limit` sessions, and in any case after `REACH_OVERRUN`
        times its reach: a first screen now rather than everything later.
        """
        found: list[tuple[int, int, float]] = []
        sessions: set[int] = set()
        wanted = CANDIDATE_ROWS if ranked else RECENT_SESSIONS_PER_SHOWN * limit
        step = CANDIDATE_ROWS if ranked else RECENT_ROWS_PER_SHOWN * limit
        for count, shard in enumerate(shards):
            if count >= reach and (len(sessions) >= limit or count >= reach * REACH_OVERRUN):
                return found, False
            table = shard_table(shard)
            score = f"-bm25({table})" if ranked else "0.0"
            below = shard_range(shard)[1] + 1
            while True:
                cancel.raise_if_cancelled()
                size = min(step, CANDIDATE_ROWS - len(found))
                rows = self.connection.execute(
                    f"SELECT rowid, {score} FROM {table} WHERE {table} MATCH ? AND rowid < ? "
                    "ORDER BY rowid DESC LIMIT ?",
                    (expression, below, size),
                ).fetchall()
                keyed = self._rows.keyed(rows, exclude_key)
                found += keyed
                sessions.update(key for _row, key, _score in keyed)
                if (len(sessions) if not ranked else len(found)) >= wanted or len(found) >= CANDIDATE_ROWS:
                    return found, False
                if len(rows) < size:
                    break
                below = rows[-1][0]
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
