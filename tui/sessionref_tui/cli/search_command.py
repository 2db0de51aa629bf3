"""`sessionref search TEXT`: sessions found by what was said in them, as text or JSON.

The store is opened (caught up with its logs) and its conversation index caught up before the
answer (a first build prints progress on stderr), then the reference service searches: relevance,
then the `--cwd` folder, then recent activity; one row per session, its best message. TEXT is
loose text (a question or words, every word whole: `textsearch.question`) unless `--strict`
(every word, the last as a prefix, as typed in the `@` picker). Both: `"quoted phrases"`, case
and diacritics ignored, CJK by substring (see docs/search.md, "What matches").
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from rich.cells import cell_len
from sessionref.service.vantage import Vantage

from sessionref_tui.cli.catalog_command import cli_catalog_link
from sessionref_tui.cli.data_commands import COLUMN_GAP, TITLE_CELLS
from sessionref_tui.cli.output import EXIT_OK, note, safe_json
from sessionref_tui.cli.store_access import command_settings, open_cli_store, progress_printer
from sessionref_tui.cli.table_fit import shortest_unique_prefixes, terminal_width
from sessionref_tui.display import inert, relative_age, truncate_end
from sessionref_tui.snippets import marked_snippet, role_label

if TYPE_CHECKING:
    from sessionref.service.conversations import ConversationMatch, ConversationSearchResult

SNIPPET_INDENT: Final = "    "
"""The snippet line of each match starts with this, under its session's row."""

WHO_CELLS: Final = len("checkpoint")


def _pad(text: str, cells: int) -> str:
    return text + " " * max(0, cells - cell_len(text))


def format_search_rows(
    matches: Sequence[ConversationMatch], now_ms: float, width: int | None = None
) -> list[str]:
    """The text view: a header, then for each match its row (id at the start, age, title, who said it
    and the message's seq) and an indented line with the snippet, the matches `«marked»`. With a
    `width` (a terminal's) ids are cut to their shortest unique prefix, the title column shares what
    is left and snippet lines are cut to the width; without one, ids are whole."""
    whole = [inert(match.session_id) for match in matches]
    ids = whole if width is None else shortest_unique_prefixes(whole)
    id_cells = max([cell_len("ID"), *(cell_len(session_id) for session_id in ids)])
    title_cells = TITLE_CELLS
    if width is not None:
        seq_cells = max([len("SEQ"), *(len(str(match.seq)) for match in matches)])
        rest = width - id_cells - 8 - WHO_CELLS - seq_cells - 4 * len(COLUMN_GAP)
        title_cells = max(8, min(TITLE_CELLS, rest))
    header = COLUMN_GAP.join(
        [_pad("ID", id_cells), f"{'ACTIVE':>8}", _pad("TITLE", title_cells), _pad("WHO", WHO_CELLS), "SEQ"]
    )
    rows = [header]
    for session_id, match in zip(ids, matches, strict=True):
        rows.append(
            COLUMN_GAP.join(
                [
                    _pad(session_id, id_cells),
                    f"{relative_age(match.last_activity, now_ms):>8}",
                    _pad(truncate_end(inert(match.label), title_cells), title_cells),
                    _pad(role_label(match.role, match.checkpoint), WHO_CELLS),
                    str(match.seq),
                ]
            )
        )
        snippet = SNIPPET_INDENT + marked_snippet(match.snippet, match.spans)
        rows.append(snippet if width is None else truncate_end(snippet, width))
    return rows


def search_json(text: str, result: ConversationSearchResult) -> dict[str, Any]:
    """`{query, status, pending, complete, note, matches: [...]}` (`ConversationMatch.to_json` each)."""
    return {
        "query": text,
        "status": result.status,
        "pending": result.pending,
        "complete": result.complete,
        "note": result.note,
        "matches": [match.to_json() for match in result.matches],
    }


def _search(args: argparse.Namespace, cwd: str) -> ConversationSearchResult:
    from sessionref.service.references import SessionReferences
    from sessionref.textsearch.store_index import StoreConversationIndex

    store = open_cli_store(args)
    link = cli_catalog_link(command_settings(store.root))
    try:
        # Not checked with quick_check on every call (seconds on a large index): a damaged file is
        # found by the first statement that fails, and rebuilt from the logs.
        conversations = StoreConversationIndex(store, verify=False)
        try:
            conversations.catch_up_now(progress=progress_printer(what="indexing what was said"))
            if link is None:
                references = SessionReferences(store, conversations=conversations)
            else:
                references = SessionReferences(
                    link.sessions(store), conversations=link.conversations(conversations)
                )
            vantage = Vantage(id="", cwd=cwd)
            loose = not args.strict
            text = args.text + " " if loose else args.text  # loose: every word is finished
            return asyncio.run(references.search_conversations(vantage, text, args.limit, question=loose))
        finally:
            conversations.close()
    finally:
        store.close()
        if link is not None:
            if link.note is not None:
                note(link.note)
            link.close()


def cmd_search(args: argparse.Namespace) -> int:
    """`search TEXT`: sessions whose conversation matches TEXT, best first; a note on stderr when
    nothing could be searched (too short) or nothing matched."""
    cwd = os.path.abspath(args.cwd) if args.cwd else os.getcwd()
    result = _search(args, cwd)
    if args.json:
        print(safe_json(search_json(args.text, result)))
        return EXIT_OK
    if result.matches:
        now_ms = datetime.now(tz=UTC).timestamp() * 1000
        print("\n".join(format_search_rows(result.matches, now_ms, terminal_width())))
    elif result.note is not None:
        note(result.note)
    else:
        note("nothing said matches")
    if result.pending and result.status == "ok":
        note(f'"{result.pending}" was not searched: a last word is searched from 3 letters on')
    if not result.complete:
        note("more messages matched than were examined: the newest are shown; add words to narrow it")
    return EXIT_OK
