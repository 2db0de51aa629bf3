"""`sessionref sessions | show | mention`: read-only views of the store, as text or JSON.

Text output puts every session id whole at the start of its row (never cut, padded with spaces),
so a double click in the terminal copies it; `show`, `mention`, `prepare --session` and
`repl --session` accept it or any unique start of it. Sessions from other agents' histories are
listed with a source mark (`CC`, `CX`, `GM`) and `"source"` in JSON (`store` for the store's own).
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from rich.cells import cell_len
from sessionref.service.session_ids import resolve_session_id
from sessionref.service.vantage import Vantage

from sessionref_tui.cli.catalog_command import cli_catalog_link
from sessionref_tui.cli.output import EXIT_OK, inert_block, note, safe_json
from sessionref_tui.cli.store_access import (
    INDEX_MAX_AGE_SECONDS,
    command_roots,
    command_settings,
    existing_store_root,
    open_cli_store,
)
from sessionref_tui.cli.table_fit import shortest_unique_prefixes, terminal_width
from sessionref_tui.display import inert, machine_folder, relative_age, truncate_end, truncate_middle
from sessionref_tui.source_marks import MARK_CELLS, source_mark, source_of

if TYPE_CHECKING:
    from sessionref.service.candidates import Candidate
    from sessionref.service.protocols import SessionQuery
    from sessionref.store.foreign_state import ForeignRoot

TITLE_CELLS: Final = 36
"""Width of the title column of `sessions` (titles are cut at the end with an ellipsis)."""
CWD_CELLS: Final = 50
"""Width of the cwd column of `sessions` (cut in the middle: both ends of a path matter)."""
COLUMN_GAP: Final = "  "
SKIPPED_LINES_LISTED: Final = 20
"""How many unreadable line numbers `show` names in its `skipped:` line (`--json` lists them all)."""

EMPTY_STORE_HINT: Final = (
    "no sessions yet in {root}: start one with `sessionref chat` or `sessionref repl` "
    "(or point --store at a DSH sessions directory)"
)


def _iso(created_at_ms: int) -> str:
    return datetime.fromtimestamp(created_at_ms / 1000, tz=UTC).isoformat(timespec="seconds")


def _now_ms() -> float:
    return datetime.now(tz=UTC).timestamp() * 1000


def _pad(text: str, cells: int) -> str:
    return text + " " * max(0, cells - cell_len(text))


async def _listing(store: SessionQuery, query: str, limit: int, cwd: str | None) -> tuple[list[Any], bool]:
    """(the candidates `@` completion would offer, whether the store has any session at all)."""
    from sessionref.service.references import SessionReferences

    # The very call the @ completion makes, so the ranking is the same.
    found = await SessionReferences(store).list_candidates(Vantage(id="", cwd=cwd), query, limit, fuzzy=True)
    return list(found), bool(found) or bool(await store.list_sessions())


def format_session_rows(
    found: Sequence[Candidate],
    cwd: str,
    now_ms: float,
    width: int | None = None,
    machines: Mapping[str, str] | None = None,
) -> list[str]:
    """The `sessions` table: a header, then one row per candidate, each id at the row's start.

    When other agents' sessions are listed, a `SRC` column marks them (`CC`, `CX`, `GM`). With a
    `width` (a terminal's) ids are cut to their shortest unique prefix and the title and cwd columns
    share what is left, so no row is wider; without one, ids are whole and the columns fixed. A
    session from the catalog (`machines`: its machine by id) shows `machine:` before its cwd.
    """
    whole = [inert(candidate.session_id) for candidate in found]
    ids = whole if width is None else shortest_unique_prefixes(whole)
    marks = [source_mark(candidate.session_id) for candidate in found]
    id_cells = max([cell_len("ID"), *(cell_len(session_id) for session_id in ids)])
    marked = any(marks)
    title_cells, cwd_cells = TITLE_CELLS, CWD_CELLS
    if width is not None:
        gaps = len(COLUMN_GAP) * (3 + marked)
        rest = width - id_cells - 8 - (max(MARK_CELLS, len("SRC")) if marked else 0) - gaps - 2
        title_cells = max(8, min(TITLE_CELLS, rest * 3 // 5))
        cwd_cells = max(8, rest - title_cells)
    header = COLUMN_GAP.join(
        [
            _pad("ID", id_cells),
            f"{'ACTIVE':>8}",
            *(["SRC"] if marked else []),
            _pad("TITLE", title_cells),
            truncate_end(f"CWD (● = {truncate_middle(inert(cwd), 40)})", cwd_cells + 2),
        ]
    )
    rows = [header]
    for session_id, mark, candidate in zip(ids, marks, found, strict=True):
        here = "●" if candidate.same_workspace else " "
        folder = "(no cwd)" if candidate.cwd is None else inert(candidate.cwd)
        place = machine_folder((machines or {}).get(candidate.session_id), folder, cwd_cells)
        rows.append(
            COLUMN_GAP.join(
                [
                    _pad(session_id, id_cells),
                    f"{relative_age(candidate.last_activity, now_ms):>8}",
                    *([_pad(mark, max(MARK_CELLS, len("SRC")))] if marked else []),
                    _pad(truncate_end(inert(candidate.label), title_cells), title_cells),
                    f"{here} {place}",
                ]
            ).rstrip()
        )
    return rows


def candidate_json(candidate: Candidate) -> dict[str, Any]:
    """One `sessions --json` object: the contract's candidate shape, its mention, its `source`, and
    `lastActivity` (epoch ms: what the ranking and the ACTIVE column use; `createdAt` is the contract's)."""
    shape = candidate.to_json(with_mention=True)
    shape["lastActivity"] = candidate.last_activity
    shape["source"] = source_of(candidate.session_id)
    return shape


def _from_index(
    root: Path, query: str, limit: int, cwd: str, sources: Sequence[ForeignRoot] = ()
) -> tuple[list[Candidate], bool] | None:
    """The `sessions` answer read from the discovery index alone, or None when it is missing or stale.

    The same candidates `list_candidates(fuzzy=True)` gives: the exact ones (a randomized test
    holds them equal), then close title matches; see `INDEX_MAX_AGE_SECONDS` for how fresh they are.
    """
    from sessionref.service.candidates import FUZZY_POOL, checked_candidate_limit, with_close_matches

    checked = checked_candidate_limit(limit)
    found = _index_candidates(root, query, checked, cwd, sources)
    if found is None:
        return None
    exact, any_sessions = found
    if not query.strip() or len(exact) >= checked:
        return exact, any_sessions
    pool = _index_candidates(root, "", FUZZY_POOL, cwd, sources)
    return (exact if pool is None else with_close_matches(exact, pool[0], query, checked)), any_sessions


def _index_candidates(
    root: Path, query: str, limit: int, cwd: str, sources: Sequence[ForeignRoot]
) -> tuple[list[Candidate], bool] | None:
    """The contract's (exact) candidates from the discovery index, or None when it is missing or stale."""
    from sessionref.service.candidates import Candidate as Found
    from sessionref.service.candidates import is_same_workspace, label_from_title
    from sessionref.store.index_query import query_index

    answer = query_index(
        root,
        exclude_id="",
        target_cwd=cwd,
        needle=query.lower(),
        limit=limit,
        max_age=INDEX_MAX_AGE_SECONDS,
        sources=sources,
    )
    if answer is None:
        return None
    found = [
        Found(
            record.id,
            label_from_title(record.id, label),
            record.cwd,
            record.created_at,
            is_same_workspace(record.cwd, cwd),
            record.updated_at,
        )
        for record, label in answer.found
    ]
    return found, answer.any_sessions


def cmd_sessions(args: argparse.Namespace) -> int:
    """`sessions [QUERY]`: ranked like completion; says so when the store has no sessions yet.

    Answered from the discovery index when its last catch-up is recent (`INDEX_MAX_AGE_SECONDS`),
    else (or with `--fresh`) by opening the store, which catches up with the logs first.
    """
    cwd = os.path.abspath(args.cwd) if args.cwd else os.getcwd()
    root = existing_store_root(args)
    settings = command_settings(root)
    sources = command_roots(args, settings)
    link = cli_catalog_link(settings)  # a catalog: its sessions too, so never the index alone
    answer = (
        None if args.fresh or link is not None else _from_index(root, args.query, args.limit, cwd, sources)
    )
    machines: dict[str, str] = {}
    if answer is not None:
        found, any_sessions = answer
    else:
        store = open_cli_store(args, settings=settings)
        try:
            query = store if link is None else link.sessions(store)
            found, any_sessions = asyncio.run(_listing(query, args.query, args.limit, cwd))
            root = store.root
        finally:
            store.close()
            if link is not None:
                machines = {
                    item.session_id: link.machines[item.session_id]
                    for item in found
                    if item.session_id in link.machines
                }
                if link.note is not None:
                    note(link.note)
                link.close()
    if args.json:
        print(
            safe_json([{**candidate_json(candidate), **_machine(candidate, machines)} for candidate in found])
        )
        return EXIT_OK
    if not any_sessions:
        note(EMPTY_STORE_HINT.format(root=root))
    elif not found:
        note("no matching sessions")
    else:
        print("\n".join(format_session_rows(found, cwd, _now_ms(), terminal_width(), machines)))
    return EXIT_OK


def _machine(candidate: Candidate, machines: dict[str, str]) -> dict[str, Any]:
    """`{"machine": name}` for a session listed from the catalog (published on another machine)."""
    machine = machines.get(candidate.session_id)
    return {} if machine is None else {"machine": machine}


def cmd_show(args: argparse.Namespace) -> int:
    """`show ID`: the session's current (folded) conversation, and the log's unreadable lines it left out."""
    from sessionref.contract.projection import project_session_conversation

    from sessionref_tui.event_view import line_numbers

    store = open_cli_store(args)
    try:
        session_id = asyncio.run(resolve_session_id(store, args.session_id))
        report = asyncio.run(store.read_surface_report(session_id))
        title = store.title(session_id)
        source = store.source_of(session_id)
    finally:
        store.close()
    snapshot, skipped = report.snapshot, list(report.skipped_lines)
    header = snapshot["session"]
    items = project_session_conversation(snapshot)
    if args.json:
        print(
            safe_json(
                {
                    "sessionId": header.get("id", session_id),
                    "source": source_of(session_id),
                    "title": title,
                    "cwd": header.get("cwd"),
                    "createdAt": header.get("createdAt"),
                    "capturedThroughSeq": snapshot.get("capturedThroughSeq"),
                    "skippedLines": skipped,
                    "conversation": [
                        {"role": item.role, "text": item.text, "checkpoint": item.checkpoint}
                        for item in items
                    ],
                }
            )
        )
        return EXIT_OK
    lines = [
        f"# {inert(title or session_id)}",
        f"id:      {inert(str(header.get('id', session_id)))}",
        f"cwd:     {inert(str(header['cwd'])) if header.get('cwd') is not None else '(no cwd)'}",
    ]
    if source is not None:
        lines.append(f"source:  {source.name}, read-only ({inert(source.root)})")
    if isinstance(header.get("createdAt"), int):
        lines.append(f"created: {_iso(header['createdAt'])}")
    lines.append(f"through: seq {snapshot.get('capturedThroughSeq')}")
    if skipped:
        noun = "line" if len(skipped) == 1 else "lines"
        where = line_numbers(skipped, SKIPPED_LINES_LISTED)
        lines.append(f"skipped: {len(skipped):,} unreadable {noun} ({noun} {where})")
    if not items:
        lines.append("\n(no messages)")
    for item in items:
        who = "checkpoint" if item.checkpoint else ("you" if item.role == "user" else "assistant")
        lines.append(f"\n{who} ›\n{inert_block(item.text)}")
    print("\n".join(lines))
    return EXIT_OK


def cmd_mention(args: argparse.Namespace) -> int:
    """`mention ID`: the canonical mention token (label: --label, else the title, else the id)."""
    from sessionref_tui.mentions import MentionTarget, mention_for

    store = open_cli_store(args)
    try:
        session_id = asyncio.run(resolve_session_id(store, args.session_id))
        label = args.label if args.label is not None else (store.title(session_id) or session_id)
    finally:
        store.close()
    # The label is what readers see (made inert, as in the completion menu); the URI keeps the raw id.
    mention = mention_for(MentionTarget(session_id, label))
    if args.json:
        print(safe_json({"sessionId": session_id, "label": inert(label), "mention": mention}))
    else:
        print(mention)
    return EXIT_OK
