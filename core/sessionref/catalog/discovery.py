"""Title, id and folder discovery in the catalog: the first screen of an `@` completion, fast.

A keystroke asks for the `limit` newest sessions whose id, title or cwd contains the needle, in
three ranks (docs/catalog.md, "Discovery"): sessions whose cwd has the searching folder's name,
then sessions without a cwd, then the rest. Both plans run inside the catalog's search functions
(`schema._SEARCH_FUNCTIONS`), and each rank is answered exactly:

* **Newest first, with early exit** (`find_newest`, one call for all ranks). Read the `PROBE_ROWS`
  (no needle: `limit`) most recent sessions of each rank (an index scan on `updated_at`) and keep
  the matches. When a rank yields as many matches as are still needed, they are its answer:
  nothing older can outrank them; when the read covered every session of the rank, likewise. A
  common needle (a few letters match a large share of titles) and the small ranks end here.
* **Trigram index** (`find_indexed`) for a rank the probe left short. The probe measured the
  needle: `k` matches among `PROBE_ROWS` sessions spanning some time. No match means the needle is
  rare, exactly when the index is cheap: every match is fetched, the newest kept. A few matches
  mean a middling needle whose matches are many but far apart: the index is asked only for the
  matches newer than a cutoff where, at the measured rate, twice the needed number should be
  (`WINDOW_MARGIN`), so it fetches a few hundred rows instead of every match; if that window
  comes up short, it is asked once more without a cutoff. Either way the answer is exact.

Needles under 3 characters have no trigram: the probe alone answers them over the newest
`SHORT_NEEDLE_ROWS` sessions of each rank, so a rare 1-2 character needle may miss older sessions
(the third character finds them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

PROBE_ROWS: Final = 300
"""Most recent sessions of a rank the newest-first plan reads: a needle matching a sixth of the
sessions fills a first screen of 50 from them; a rarer one is measured, then windowed."""
SHORT_NEEDLE_ROWS: Final = 2_000
"""Most recent sessions of a rank searched for a needle shorter than a trigram."""
WINDOW_MARGIN: Final = 2.0
"""How many times the needed matches the trigram window should hold at the measured rate."""
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


def like_pattern(needle: str) -> str:
    """`%needle%` for LIKE, with LIKE's own characters escaped (the needle is literal text)."""
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@dataclass(frozen=True, slots=True)
class Probe:
    """What the newest-first read found in one rank: its matches, and whether the rank has no
    sessions besides those read (known for the two small ranks only)."""

    found: list[CatalogSession]
    read_everything: bool = False

    def cutoff(self, needed: int) -> int | None:
        """The activity time after which `needed` matches should be, at the rate the probe measured
        between its newest and oldest match (None: too few matches to measure: ask without one)."""
        if len(self.found) < 2:
            return None
        span = max(1, self.found[0].updated_at - self.found[-1].updated_at)
        reach = span * WINDOW_MARGIN * needed / (len(self.found) - 1)
        return int(self.found[0].updated_at - reach)


def _probes(cursor: Any, params: dict[str, Any], limit: int) -> dict[int, Probe]:
    needle: str = params["needle"]
    newest = limit if not needle else SHORT_NEEDLE_ROWS if len(needle) < TRIGRAM else PROBE_ROWS
    pattern = params["pattern"] if needle else None
    arguments = (pattern, params["folder"], params["exclude_id"], params["exclude_machine"], limit, newest)
    cursor.execute("SELECT * FROM sessionref.find_newest(%s, %s, %s, %s, %s, %s)", arguments)
    found: dict[int, list[CatalogSession]] = {}
    probes: dict[int, Probe] = {}
    for row in cursor.fetchall():
        rank = row[0]
        if row[1] is not None:
            found.setdefault(rank, []).append(session_of(row[1:], rank))
        else:
            probes[rank] = Probe(found.get(rank, []), row[2] == "all")
    for rank in range(0 if params["folder"] is not None else 1, RANKS):
        probes.setdefault(rank, Probe(found.get(rank, [])))
    return probes


def _indexed(
    cursor: Any, rank: int, params: dict[str, Any], limit: int, since: int | None
) -> list[CatalogSession]:
    arguments = (rank, params["pattern"], params["folder"], params["exclude_id"], params["exclude_machine"])
    cursor.execute(
        "SELECT * FROM sessionref.find_indexed(%s, %s, %s, %s, %s, %s, %s)", (*arguments, limit, since)
    )
    return [session_of(row, rank) for row in cursor.fetchall()]


def _rank_answer(
    cursor: Any, rank: int, probe: Probe, params: dict[str, Any], needed: int
) -> list[CatalogSession]:
    """The newest `needed` matches of one rank, exactly (1-2 character needles: from the probe)."""
    if len(probe.found) >= needed or probe.read_everything:
        return probe.found[:needed]
    if len(params["needle"]) < TRIGRAM:
        return probe.found
    since = probe.cutoff(needed)
    if since is not None:
        windowed = _indexed(cursor, rank, params, needed, since)
        if len(windowed) >= needed:
            return windowed
    return _indexed(cursor, rank, params, needed, None)


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
        "folder": folder,
        "exclude_id": exclude_id,
        "exclude_machine": exclude_machine,
    }
    found: list[CatalogSession] = []
    seen: set[str] = set()
    with connection.transaction(), connection.cursor() as cursor:
        probes = _probes(cursor, params, limit)
        for rank in range(RANKS):
            probe = probes.get(rank)
            if probe is None or len(found) >= limit:
                continue
            for session in _rank_answer(cursor, rank, probe, params, limit - len(found)):
                if session.id not in seen:
                    seen.add(session.id)
                    found.append(session)
    return found
