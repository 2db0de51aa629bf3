"""Title, id and folder discovery in the catalog: the first screen of an `@` completion, fast.

A keystroke asks for the `limit` newest sessions whose id, title or cwd contains the needle, in
three ranks (docs/catalog.md, "Discovery"): sessions whose cwd has the searching folder's name,
then sessions without a cwd, then the rest. Each rank is answered by one of two plans:

* **Newest first, with early exit.** Read the `PROBE_ROWS` most recent sessions of the rank (an
  index scan on `updated_at`) and keep the matches. When that yields `limit` matches it is the
  exact answer: nothing older can outrank them. A common needle (the usual case: a few letters
  match a large share of titles) is answered here in a few milliseconds.
* **Trigram index.** Fewer matches than that among the newest rows means the needle is rare, which
  is exactly when the trigram index is cheap: its few matches are fetched and sorted. Run only
  after the probe says so, with the newest-first index scan disabled for that one statement, so
  the planner cannot pick the plan that reads the whole table in date order for a rare needle.

Needles under 3 characters have no trigram: the probe alone answers them, over `SHORT_NEEDLE_ROWS`
rows, and a rarer short needle may miss older sessions (a longer needle finds them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

PROBE_ROWS: Final = 5_000
"""Most recent sessions of a rank the newest-first plan reads before falling back to the index."""
SHORT_NEEDLE_ROWS: Final = 50_000
"""Most recent sessions of a rank searched for a needle shorter than a trigram."""
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


def _rank_rows(cursor: Any, rank: int, params: dict[str, Any], limit: int) -> list[CatalogSession]:
    """One rank's newest matches: the newest-first probe, then the trigram index if it came up short."""
    needle: str = params["needle"]
    newest = SHORT_NEEDLE_ROWS if needle and len(needle) < TRIGRAM else PROBE_ROWS
    call = "SELECT * FROM sessionref.find_sessions(%s, %s, %s, %s, %s, %s, %s)"
    arguments = [rank, params["pattern"] if needle else None, params["folder"]]
    arguments += [params["exclude_id"], params["exclude_machine"], limit]
    cursor.execute(call, [*arguments, newest])
    rows = cursor.fetchall()
    if len(rows) < limit and needle and len(needle) >= TRIGRAM:
        cursor.execute(call, [*arguments, None])
        rows = cursor.fetchall()
    return [session_of(row, rank) for row in rows]


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
        for rank in range(RANKS):
            if rank == 0 and folder is None:
                continue
            if len(found) >= limit:
                break
            for session in _rank_rows(cursor, rank, params, limit - len(found)):
                if session.id not in seen:
                    seen.add(session.id)
                    found.append(session)
    return found
