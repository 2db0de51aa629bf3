"""Discovery of sessions a message may reference (docs/contract.md §6).

Candidates are other sessions ranked by working-directory affinity, then by the
backend's newest-first order. Labels come from the backend's title index; a
session log is never read while listing (this runs on every keystroke of an
`@` completion).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sessionref.contract.errors import ErrorCode, SessionReferenceError
from sessionref.contract.options import Profile
from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref.service.abort import AbortSignal
from sessionref.service.cancellation import race, raise_if_aborted
from sessionref.service.config import as_positive_safe_integer
from sessionref.service.fuzzy_titles import FuzzyMatch, FuzzyQuery
from sessionref.service.protocols import CandidateSearch, SessionQuery, SessionRecord

INVALID_LIMIT_MESSAGE = "candidate limit must be a positive safe integer"
FUZZY_POOL = 2000
"""Sessions, ranked first (same folder, then most recently active), whose titles are tried for a
close match once the exact matches do not fill a list: bounds a keystroke's work."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """One session offered for an `@` mention.

    `label` is the session's current title, or its id when it has none;
    `same_workspace` is true when its cwd equals the requesting agent's cwd;
    `updated_at` is its last activity (epoch ms; `created_at` when unknown).
    The wire shape (`to_json`) is the contract's and carries neither `updated_at` nor `close`.
    """

    session_id: str
    label: str
    cwd: str | None
    created_at: int
    same_workspace: bool
    updated_at: int | None = None
    close: FuzzyMatch | None = None
    """Set on a close (not exact) match of the query: how its label matched (`fuzzy_titles`)."""

    @property
    def last_activity(self) -> int:
        """When the session was last active: `updated_at`, else `created_at`."""
        return self.created_at if self.updated_at is None else self.updated_at

    @property
    def mention(self) -> str:
        """The canonical mention token `@[label](dsh-session:...)` for this candidate."""
        return format_session_reference_mention(SessionReference(self.session_id, self.label))

    def to_json(self, profile: Profile = "later", *, with_mention: bool = False) -> dict[str, Any]:
        """Upstream wire shape: `{sessionId, label, cwd?, sameWorkspace, createdAt}`.

        The `rc8` profile omits `sameWorkspace` (the seed and rc.8 shape, docs/contract.md §0); `with_mention`
        appends the canonical `mention` as the Remote face does.
        """
        shape: dict[str, Any] = {"sessionId": self.session_id, "label": self.label}
        if self.cwd is not None:
            shape["cwd"] = self.cwd
        if profile != "rc8":
            shape["sameWorkspace"] = self.same_workspace
        shape["createdAt"] = self.created_at
        if with_mention:
            shape["mention"] = self.mention
        return shape


def checked_candidate_limit(limit: object) -> int:
    """`limit` as an int if it is a positive safe integer, else `SESSION_REFERENCE_INVALID_REFERENCE`."""
    number = as_positive_safe_integer(limit)
    if number is None:
        raise SessionReferenceError(ErrorCode.INVALID_REFERENCE, INVALID_LIMIT_MESSAGE)
    return number


def is_same_workspace(cwd: str | None, target_cwd: str | None) -> bool:
    """Whether a session's `cwd` is the agent's `target_cwd` (both known and equal)."""
    return cwd is not None and target_cwd is not None and cwd == target_cwd


def workspace_rank(cwd: str | None, target_cwd: str | None) -> int:
    """0 for the agent's own cwd, 1 for a session without cwd, 2 for any other cwd."""
    if is_same_workspace(cwd, target_cwd):
        return 0
    if cwd is None:
        return 1
    return 2


def label_from_title(session_id: str, title: object) -> str:
    """The mention label: the title when there is a non-empty one, else the id."""
    return title if isinstance(title, str) and title else session_id


def matches_needle(needle: str, session_id: str, cwd: str | None, label: str) -> bool:
    """Case-insensitive substring match on id, cwd or label (`needle` is already lower-case)."""
    if needle in session_id.lower() or needle in label.lower():
        return True
    return cwd is not None and needle in cwd.lower()


def _candidate(
    record: SessionRecord, label: str, target_cwd: str | None, close: FuzzyMatch | None = None
) -> Candidate:
    same = is_same_workspace(record.cwd, target_cwd)
    return Candidate(record.id, label, record.cwd, record.created_at, same, record.updated_at, close)


async def read_titles(
    query: SessionQuery, session_ids: Sequence[str], signal: AbortSignal | None
) -> Mapping[str, str | None]:
    """The titles of `session_ids` from the backend's index, raced against `signal`; no call for none."""
    if not session_ids:
        return {}
    return await race(query.read_titles(session_ids), signal)


async def find_candidates(
    query: SessionQuery,
    *,
    agent_id: str,
    agent_cwd: str | None,
    text: str,
    limit: int,
    signal: AbortSignal | None = None,
    fuzzy: bool = False,
) -> list[Candidate]:
    """Up to `limit` candidates other than `agent_id` matching `text`, best first.

    With an empty `text` only the first `limit` sessions by rank get a title lookup.
    Uses the backend's `CandidateSearch` fast path when it offers one (same results).
    With `fuzzy`, when the exact matches are fewer than `limit`, close matches of the label
    follow them (`with_close_matches`). Backend errors propagate unchanged; an aborted `signal`
    gives `SESSION_REFERENCE_CANCELLED`.
    """
    exact = await _exact_candidates(query, agent_id, agent_cwd, text, limit, signal)
    if not fuzzy or not text.strip() or len(exact) >= limit:
        return exact
    pool = await _exact_entries(query, agent_id, agent_cwd, "", FUZZY_POOL, signal)
    chosen = _closest(exact, [(record.id, label) for record, label in pool], text, limit)
    return exact + [_candidate(*pool[order], agent_cwd, found) for order, found in chosen]


def with_close_matches(
    exact: list[Candidate], pool: Sequence[Candidate], text: str, limit: int
) -> list[Candidate]:
    """`exact` then the closest matches of `text` among the labels of `pool` (in rank order), at
    most `limit` in all: by closeness, then the pool's order (folder, recency)."""
    labels = [(candidate.session_id, candidate.label) for candidate in pool]
    return exact + [
        replace(pool[order], close=found) for order, found in _closest(exact, labels, text, limit)
    ]


def _closest(
    exact: list[Candidate], pool: Sequence[tuple[str, str]], text: str, limit: int
) -> list[tuple[int, FuzzyMatch]]:
    """The places in `pool` of (session id, label) pairs whose labels match `text` closest, each
    with how, for at most `limit` candidates after `exact` (see `with_close_matches`)."""
    shown = {candidate.session_id for candidate in exact}
    query = FuzzyQuery(text)
    close: list[tuple[float, int, FuzzyMatch]] = []
    for order, (session_id, label) in enumerate(pool):
        if session_id not in shown and (found := query.match(label)) is not None:
            close.append((-found.score, order, found))
    close.sort(key=lambda entry: (entry[0], entry[1]))
    return [(order, found) for _score, order, found in close[: limit - len(exact)]]


async def close_match_labels(query: SessionQuery, *, agent_id: str, agent_cwd: str | None) -> list[str]:
    """The labels a close-title pass for `agent_id` would score: those of the first `FUZZY_POOL`
    sessions by rank (see `find_candidates`), for `fuzzy_titles.prepare_titles`."""
    pool = await _exact_entries(query, agent_id, agent_cwd, "", FUZZY_POOL, None)
    return [label for _record, label in pool]


async def _exact_candidates(
    query: SessionQuery,
    agent_id: str,
    agent_cwd: str | None,
    text: str,
    limit: int,
    signal: AbortSignal | None,
) -> list[Candidate]:
    """The contract's candidates: a substring of id, cwd or label (`matches_needle`), ranked."""
    found = await _exact_entries(query, agent_id, agent_cwd, text, limit, signal)
    return [_candidate(record, label, agent_cwd) for record, label in found]


async def _exact_entries(
    query: SessionQuery,
    agent_id: str,
    agent_cwd: str | None,
    text: str,
    limit: int,
    signal: AbortSignal | None,
) -> list[tuple[SessionRecord, str]]:
    """`_exact_candidates` as (record, label) pairs."""
    needle = text.lower()
    raise_if_aborted(signal)
    if isinstance(query, CandidateSearch):
        found = await race(
            query.search_candidates(exclude_id=agent_id, target_cwd=agent_cwd, needle=needle, limit=limit),
            signal,
        )
        return [(record, label_from_title(record.id, label)) for record, label in found]
    listed = await race(query.list_sessions(), signal)
    ranked = sorted(
        (record for record in listed if record.id != agent_id),
        key=lambda record: workspace_rank(record.cwd, agent_cwd),
    )
    if not needle:
        chosen = ranked[:limit]
        titles = await read_titles(query, [record.id for record in chosen], signal)
        return [(record, label_from_title(record.id, titles.get(record.id))) for record in chosen]
    titles = await read_titles(query, [record.id for record in ranked], signal)
    matching: list[tuple[SessionRecord, str]] = []
    for record in ranked:
        label = label_from_title(record.id, titles.get(record.id))
        if matches_needle(needle, record.id, record.cwd, label):
            matching.append((record, label))
            if len(matching) == limit:
                break
    return matching
