"""Title, id and folder discovery in the catalog: the first screen of an `@` completion, fast.

A keystroke asks for the `limit` newest sessions whose id, title or cwd contains the needle, in
three ranks (docs/catalog.md, "Discovery"): sessions whose cwd has the searching folder's name,
then sessions without a cwd, then the rest. Every plan runs inside the catalog's search functions
(`schema._READ_NEWEST_V4`, reading covering indexes), and each rank is answered exactly:

* **Newest first, with early exit** (`find_recent`, one statement for all ranks). Read the `PROBE_ROWS`
  (no needle: `limit` + 1) most recent sessions of each rank (an index-only scan, newest first) and keep
  the matches. When a rank yields as many matches as are still needed, they are its answer:
  nothing older can outrank them; when the read covered every session of the rank, likewise. A
  common needle (a few letters match a large share of titles) and the small ranks end here.
* **Read on newest first** (`find_recent`) for a rank the probe left short: the short ranks'
  probes together measured the needle (`k` matches among the sessions they read), which says how
  far the needed matches lie. When that is within `READ_ON_ROWS` (`ONE_WORD_READ_ON` for one
  word), the rank is read on `READ_MARGIN` times as far, stopping at the needed matches (two
  common words typed together: 1-2 % of titles, a few thousand sessions); a read on that comes up
  short measures the rate again, over many more sessions, for one more reach.
* **The indexes** (`find_indexed`, for this rank and every later one at once) when the probe found
  no match (the needle is rare, exactly when the indexes are cheap), or so few that the read on
  would be long, or the read on came up short: a trigram index over the names (separators
  replaced by a letter, so trigrams span words; for several words, a second one without them)
  fetches every match in them; the distinct cwds are searched
  apart (`places`), and the newest sessions of each matching one read; the first are kept.

Needles under 3 characters have no trigram: the probe alone answers them over the newest
`SHORT_NEEDLE_ROWS` sessions of each rank, so a rare 1-2 character needle may miss older sessions
(the third character finds them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from sessionref.catalog.schema import JOINED_LETTER, JOINED_SEPARATORS

PROBE_ROWS: Final = 300
"""Most recent sessions of a rank the newest-first plan reads: a needle matching a sixth of the
sessions fills a first screen of 50 from them; a rarer one is measured."""
SHORT_NEEDLE_ROWS: Final = 2_000
"""Most recent sessions of a rank searched for a needle shorter than a trigram."""
READ_ON_ROWS: Final = 20_000
"""Most recent sessions of a rank read on newest first (about 1 µs a session) before the indexes
are asked instead (whose cost is every candidate they fetch, a few µs each)."""
ONE_WORD_READ_ON: Final = 8_000
"""How far the needed matches of a one-word needle may lie for the read on to be chosen over the
index. Its trigrams say about as much as the word: the index fetches about its matches, cheaper
than reading past them below about 0.5 % of sessions. Several words typed together are another
matter: the index fetches every title holding the words anywhere (two common words: 50-60 ms at
1 M sessions), so such a needle is read on as far as `READ_ON_ROWS`."""
READ_MARGIN: Final = 2.0
"""How many times as far as the measured rate says the needed matches lie the read on goes; when
it comes up short, the rate it measured (over many more sessions) sets the next reach."""
TRIGRAM: Final = 3
RANKS: Final = 3
"""0: the cwd's folder has the searching folder's name, 1: no cwd, 2: any other folder."""


@dataclass(frozen=True, slots=True)
class CatalogSession:
    """One session as the catalog lists it: its facts and where it comes from."""

    id: str
    machine: str
    owner: str
    title: str | None
    cwd: str | None
    created_at: int
    updated_at: int
    rank: int = 2
    """0: its folder has the searching folder's name, 1: no cwd, 2: any other folder."""


def session_of(row: Sequence[Any], rank: int = 2) -> CatalogSession:
    """A `CatalogSession` from a row of `id, machine, owner, title, cwd, created_at, updated_at`."""
    session_id, machine, owner, title, cwd, created_at, updated_at = row[:7]
    return CatalogSession(session_id, machine, owner, title, cwd, created_at, updated_at, rank)


def joined_pattern(needle: str) -> str:
    """The LIKE pattern of `needle` in the `*_joined` columns: separators replaced as there, then escaped."""
    return like_pattern(needle.translate(_JOINED))


_JOINED: Final = str.maketrans(dict.fromkeys(JOINED_SEPARATORS, JOINED_LETTER))


def bare_pattern(needle: str) -> str | None:
    """The LIKE pattern of a needle of several words in the names without their separators (the
    trigram index of schema version 6); None for one word, or when a trigram would not be left.

    Across a word boundary the joined names' trigrams are common ones (every title has them), the
    bare names' are as rare as the letters around it; within one word the joined names keep their
    boundaries (`vefi`: 805 candidates there, 23,313 in the bare names, where `ve fi` matches too)."""
    bare = needle.translate(_BARE)
    return like_pattern(bare) if bare != needle and len(bare) >= TRIGRAM else None


_BARE: Final = str.maketrans(dict.fromkeys(JOINED_SEPARATORS))


def like_pattern(needle: str) -> str:
    """`%needle%` for LIKE, with LIKE's own characters escaped (the needle is literal text)."""
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@dataclass(frozen=True, slots=True)
class Probe:
    """What a newest-first read found in one rank: its matches, and whether the rank has no
    sessions besides those read."""

    found: list[CatalogSession]
    read_everything: bool = False

    def answers(self, needed: int) -> bool:
        """Whether these matches are the rank's exact answer: enough of them, or all there are."""
        return len(self.found) >= needed or self.read_everything


def reach(found: int, read: int, needed: int, farthest: int | None = None) -> int | None:
    """How many of a rank's newest sessions to read for `needed` matches, at the rate of `found`
    matches among `read` sessions, with `READ_MARGIN`, at most `READ_ON_ROWS` (None: no match
    measured, or the needed ones lie farther than `farthest`, by default `READ_ON_ROWS`)."""
    if not found:
        return None
    expected = read * needed / found
    if expected > (READ_ON_ROWS if farthest is None else farthest):
        return None
    return min(READ_ON_ROWS, int(expected * READ_MARGIN))


def _probes(cursor: Any, params: dict[str, Any], limit: int) -> dict[int, Probe]:
    """The probe of every rank, in one call."""
    needle: str = params["needle"]
    # No needle: the newest sessions, one more than a screen in case one is `exclude_id`.
    newest = limit + 1 if not needle else SHORT_NEEDLE_ROWS if len(needle) < TRIGRAM else PROBE_ROWS
    return _read_newest(
        cursor, range(RANKS), params, limit, newest, pattern=params["pattern"] if needle else None
    )


def _read_newest(
    cursor: Any, ranks: range, params: dict[str, Any], limit: int, newest: int, *, pattern: str | None
) -> dict[int, Probe]:
    """What `find_recent` found among the `newest` most recent sessions of each of `ranks`."""
    arguments = (pattern, params["folder"], params["exclude_id"], params["exclude_machine"], limit, newest)
    cursor.execute(
        "SELECT * FROM sessionref.find_recent(%s, %s, %s, %s, %s, %s, %s, %s)",
        (ranks.start, ranks.stop - 1, *arguments),
    )
    if params["folder"] is None:
        ranks = range(max(1, ranks.start), ranks.stop)
    found: dict[int, list[CatalogSession]] = {rank: [] for rank in ranks}
    more: set[int] = set()
    for row in cursor.fetchall():
        if row[8]:
            found[row[0]].append(session_of(row[1:], row[0]))
        if row[9]:
            more.add(row[0])
    return {rank: Probe(found[rank], len(found[rank]) < limit and rank not in more) for rank in ranks}


def _recent(cursor: Any, rank: int, params: dict[str, Any], needed: int, newest: int) -> Probe:
    """The newest `needed` matches among the rank's `newest` most recent sessions, read in order."""
    return _read_newest(cursor, range(rank, rank + 1), params, needed, newest, pattern=params["pattern"])[
        rank
    ]


def _indexed(cursor: Any, first_rank: int, params: dict[str, Any], limit: int) -> list[CatalogSession]:
    """The first `limit` matches of every rank from `first_rank` on, in rank order, from the indexes:
    `find_indexed` answers for the cwds and for the names apart; each copy is kept once."""
    names = ("pattern", "joined", "folder", "exclude_id", "exclude_machine")
    cursor.execute(
        "SELECT * FROM sessionref.find_indexed(%s, %s, %s, %s, %s, %s, %s, %s)",
        (first_rank, *(params[name] for name in names), limit, params["bare"]),
    )
    copies = {(row[1], row[2], row[3]): session_of(row[1:], row[0]) for row in cursor.fetchall()}
    return sorted(copies.values(), key=lambda session: (session.rank, -session.updated_at))[:limit]


def _newest_answer(
    cursor: Any, rank: int, probe: Probe, params: dict[str, Any], needed: int, rate: tuple[int, int]
) -> list[CatalogSession] | None:
    """The newest `needed` matches of one rank, exactly, read newest first (None: ask the index).

    `rate` is what the probes of the short ranks found together, (matches, sessions read): a
    rank's own 300 sessions hold too few matches of a middling needle to measure it."""
    if probe.answers(needed) or len(params["needle"]) < TRIGRAM:
        return probe.found[:needed]
    one_word = len(params["needle"].split()) == 1
    read, next_reach = PROBE_ROWS, reach(*rate, needed, ONE_WORD_READ_ON if one_word else None)
    while next_reach is not None and next_reach > read:
        read_on = _recent(cursor, rank, params, needed, next_reach)
        if read_on.answers(needed):
            return read_on.found[:needed]
        read, next_reach = next_reach, reach(len(read_on.found), next_reach, needed)
    return None


def find_sessions(
    connection: Any,
    *,
    needle: str,
    folder: str | None,
    exclude_id: str,
    exclude_machine: str,
    limit: int,
) -> list[CatalogSession]:
    """Up to `limit` sessions matching `needle` (lower-case), ranked, one per id (its newest copy).

    Sessions published from `exclude_machine` (this one: the local store lists them) and the
    session `exclude_id` are left out.
    """
    params: dict[str, Any] = {
        "needle": needle,
        "pattern": like_pattern(needle),
        "joined": joined_pattern(needle),
        "bare": bare_pattern(needle),
        "folder": folder,
        "exclude_id": exclude_id,
        "exclude_machine": exclude_machine,
    }
    found: list[CatalogSession] = []
    seen: set[str] = set()

    def keep(sessions: list[CatalogSession]) -> None:
        for session in sessions:
            if session.id not in seen:
                seen.add(session.id)
                found.append(session)

    with connection.transaction(), connection.cursor() as cursor:
        probes = _probes(cursor, params, limit)
        short = [probe for probe in probes.values() if not probe.answers(limit)]
        rate = (sum(len(probe.found) for probe in short), PROBE_ROWS * len(short))
        for rank in range(RANKS):
            probe = probes.get(rank)
            if probe is None or len(found) >= limit:
                continue
            answer = _newest_answer(cursor, rank, probe, params, limit - len(found), rate)
            if answer is None:
                keep(_indexed(cursor, rank, params, limit - len(found)))
                break
            keep(answer)
    return found
