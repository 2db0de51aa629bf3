"""`sessionref sources` (other agents' histories found) and `sessionref snapshot ID` (one context message).

`sources` lists every other agent sessionref reads: where each folder is, whether sessionref
reads it and why, how many sessions were found and when it was last indexed, and why a
database was skipped (busy, unreadable, a newer schema). It opens the store (catching up, with
progress on stderr) when the store exists, or else the stand-in store in the cache directory when
histories are read (`store_access.existing_store_root`); it never creates a store.

`snapshot` prints the framed, bounded context message the model would get for one session: the
same preparation as a sent message, with the configured budget (or `--max-bytes`). It writes
nothing, so a cut session's full transcript is not saved (its omission notice says so). Printed
to a file or a pipe the text is exact; to a terminal it is shown inert.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from rich.cells import cell_len
from sessionref.service.session_ids import resolve_session_id

from sessionref_tui.cli.catalog_command import cli_catalog_link
from sessionref_tui.cli.output import EXIT_OK, inert_block, note, safe_json
from sessionref_tui.cli.store_access import command_settings, command_sources, open_cli_store, store_root
from sessionref_tui.display import inert, relative_age

if TYPE_CHECKING:
    from sessionref.host.sources import SourceStatus
    from sessionref.store.foreign_catalog import SourceCount

COLUMN_GAP: Final = "  "
NOT_INDEXED: Final = "-"
NO_STORE_NOTE: Final = (
    "there is no session store at {root} yet, so nothing is indexed; `sessionref chat` or "
    "`sessionref repl` creates it (or pass --store DIR)"
)


def _now_ms() -> float:
    return time.time() * 1000


def _counts(args: argparse.Namespace, statuses: Sequence[SourceStatus]) -> dict[str, SourceCount] | None:
    """Sessions found per source (the store, or the stand-in without one, opened and caught up), or
    None when there is nothing to open (no store, and no history to read)."""
    from sessionref.host.sources import enabled_roots

    if not store_root(args).exists() and (args.store is not None or not enabled_roots(statuses)):
        return None
    store = open_cli_store(args)
    try:
        return {count.source.kind: count for count in store.sources()}
    finally:
        store.close()


def source_rows(
    statuses: Sequence[SourceStatus], counts: dict[str, SourceCount] | None, now_ms: float
) -> list[str]:
    """The `sources` table: one row per source, its folder last (never cut: it is copied)."""
    table = [["SOURCE", "READ", "SESSIONS", "INDEXED", "WHY", "FOLDER"]]
    for status in statuses:
        count = counts.get(status.kind) if counts is not None and status.on else None
        walked = count.walked_at if count is not None else None
        table.append(
            [
                status.kind,
                "yes" if status.on else "no",
                f"{count.sessions:,}" if count is not None else NOT_INDEXED,
                relative_age(walked, now_ms) if walked is not None else NOT_INDEXED,
                status.why,
                inert(str(status.root)),
            ]
        )
    widths = [max(cell_len(row[column]) for row in table) for column in range(len(table[0]) - 1)]
    lines = []
    for row in table:
        cells = [cell + " " * (width - cell_len(cell)) for cell, width in zip(row, widths, strict=False)]
        lines.append(COLUMN_GAP.join([*cells, row[-1]]).rstrip())
    return lines


def source_json(status: SourceStatus, counts: dict[str, SourceCount] | None) -> dict[str, Any]:
    """One `sources --json` object."""
    count = counts.get(status.kind) if counts is not None and status.on else None
    return {
        "kind": status.kind,
        "name": status.name,
        "root": str(status.root),
        "on": status.on,
        "why": status.why,
        "sessions": count.sessions if count is not None else None,
        "lastIndexed": count.walked_at if count is not None else None,
        "problem": count.problem if count is not None else None,
    }


def cmd_sources(args: argparse.Namespace) -> int:
    """`sources`: every other agent's history, where it is, whether it is read and why, and what was found."""
    root = store_root(args)
    settings = command_settings(root)
    statuses = command_sources(args, settings)
    counts = _counts(args, statuses)
    if args.json:
        print(safe_json([source_json(status, counts) for status in statuses]))
        return EXIT_OK
    print("\n".join(source_rows(statuses, counts, _now_ms())))
    from sessionref.host.live_discovery import available_mode  # not at import: the launcher stays light

    note(f"while chat or repl runs, new and changed sessions show up by {available_mode()}")
    for count in (counts or {}).values():
        if count.problem is not None:
            note(f"{count.source.name} skipped for now: {count.problem}")
    if counts is None:
        note(NO_STORE_NOTE.format(root=root))
    return EXIT_OK


def cmd_snapshot(args: argparse.Namespace) -> int:
    """`snapshot ID`: the context message the model would get for this one session, and nothing else."""
    from sessionref.host.snapshot import prepare_snapshot

    settings = command_settings(store_root(args))
    store = open_cli_store(args, settings=settings)
    link = cli_catalog_link(settings)  # a session only the catalog has is captured from its copy
    try:
        query = store if link is None else link.sessions(store)
        session_id = asyncio.run(resolve_session_id(query, args.session_id))
        snapshot = asyncio.run(prepare_snapshot(query, settings, session_id, max_bytes=args.max_bytes))
    finally:
        store.close()
        if link is not None:
            link.close()
    text = snapshot.text
    if args.json:
        print(
            safe_json(
                {"sessionId": session_id, "label": snapshot.label, "text": text, "source": snapshot.source}
            )
        )
    else:
        # A file or a pipe gets the exact text the model would get; a terminal never gets anything
        # from data it could act on (the JSON already escapes control characters; this also shows
        # bidi and other format characters escaped).
        print(inert_block(text) if sys.stdout.isatty() else text)
    return EXIT_OK
