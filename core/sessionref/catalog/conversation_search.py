"""Conversation search in the catalog: PostgreSQL full-text search over the published messages.

The text is turned into a `tsquery` of the `simple` configuration (words lower-cased, never
stemmed): every word must occur, the last one also as the start of a word (`migr` finds
`migration`), `"quoted words"` must stand together in that order. Words of 1-2 characters only
count inside a quoted phrase; a trailing one is reported as `pending`, like the local index does.
A first screen is answered from the newest visible sessions first, each session's words checked
before its messages, their index only for rare words (`sessionref.search_messages`,
`schema._SESSION_WORDS_V6`, docs/catalog.md): at most
`EXAMINED_MESSAGES` matching messages are examined, and when matches were left unread the answer
says it is not `complete`. Among them each session's best message (by `ts_rank`) is kept, ranked
by relevance, then the searching folder's name, then recent activity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from sessionref.service.candidates import label_from_title
from sessionref.service.protocols import ConversationMatch, ConversationSearchResult

EXAMINED_MESSAGES: Final = 2_000
"""Matching messages one search examines at most: enough for a first screen of sessions."""
FETCHED_TEXT_CHARS: Final = 20_000
"""Characters of each matching message fetched to cut its snippet from."""
SNIPPET_CHARS: Final = 160
"""Characters of the one-line snippet around the first matched word."""
MIN_WORD: Final = 3

_PHRASE_OR_WORD = re.compile(r'"([^"]*)"?|(\S+)')
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A search text as a tsquery (None: nothing to search), its words, and a pending short word.

    `terms` are its words one by one (the last as `word:*`, a phrase's words plain): the search
    function asks the full-text index for the rarest of them among the newest messages only.
    """

    tsquery: str | None
    words: tuple[str, ...]
    pending: str
    status: str
    terms: tuple[str, ...] = ()


def parse_query(text: str) -> ParsedQuery:
    """The `tsquery` for `text` (see the module docstring), or why there is none (`status`)."""
    parts: list[str] = []
    words: list[str] = []
    pending = ""
    terms: list[str] = []
    tokens = list(_PHRASE_OR_WORD.finditer(text))
    any_word = False
    for index, token in enumerate(tokens):
        last = index == len(tokens) - 1 and not text[-1:].isspace()
        if token.group(1) is not None:
            phrase = [word.lower() for word in _WORD.findall(token.group(1))]
            any_word = any_word or bool(phrase)
            if phrase and any(len(word) >= MIN_WORD for word in phrase):
                parts.append("(" + " <-> ".join(phrase) + ")")
                words.extend(phrase)
                terms.extend(phrase)
            continue
        for position, word in enumerate(_WORD.findall(token.group(2) or "")):
            any_word = True
            lowered = word.lower()
            final = last and position == len(_WORD.findall(token.group(2) or "")) - 1
            if len(lowered) < MIN_WORD:
                if final:
                    pending = lowered
                continue
            parts.append(lowered + (":*" if final else ""))
            words.append(lowered)
            terms.append(parts[-1])
    if not parts:
        return ParsedQuery(None, (), pending, "too_short" if any_word else "empty")
    return ParsedQuery(" & ".join(parts), tuple(words), pending, "ok", tuple(dict.fromkeys(terms)))


def snippet(text: str, words: tuple[str, ...]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """One line of `text` around its first matched word, and the spans of the words in it."""
    lowered = text.lower()
    hits = [position for word in words if (position := lowered.find(word)) >= 0]
    start = max(0, min(hits) - SNIPPET_CHARS // 4) if hits else 0
    line = text[start : start + SNIPPET_CHARS]
    line = re.sub(r"\s+", " ", line)
    spans: list[tuple[int, int]] = []
    lowered_line = line.lower()
    for word in words:
        for found in re.finditer(re.escape(word), lowered_line):
            spans.append((found.start(), found.end()))
    return line, tuple(sorted(set(spans)))


def search_messages(
    connection: Any,
    text: str,
    *,
    limit: int,
    exclude_session_id: str | None,
    folder: str | None,
    exclude_machine: str,
) -> ConversationSearchResult:
    """Up to `limit` sessions whose published conversation matches `text`, one match each, best first,
    labelled with the title of the session's newest visible copy."""
    parsed = parse_query(text)
    if parsed.tsquery is None:
        return ConversationSearchResult(
            status="empty" if parsed.status == "empty" else "too_short", pending=parsed.pending
        )
    with connection.transaction(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT * FROM sessionref.search_messages(to_tsquery('simple', %s), %s, %s, %s, %s, %s, %s)",
            (
                parsed.tsquery,
                folder,
                exclude_session_id,
                exclude_machine,
                EXAMINED_MESSAGES,
                FETCHED_TEXT_CHARS,
                list(parsed.terms),
            ),
        )
        everything = cursor.fetchall()
        rows = [row for row in everything if row[0] is not None]
        complete = all(row[9] for row in everything if row[0] is None)
        best: dict[str, tuple[Any, ...]] = {}
        for row in rows:
            current = best.get(row[0])
            if current is None or (row[6], row[4]) > (current[6], current[4]):
                best[row[0]] = row
        ranked = sorted(best.values(), key=lambda row: (-row[6], not row[7], -row[8], row[0]))[:limit]
        cursor.execute(
            "SELECT DISTINCT ON (id) id, title FROM sessionref.sessions WHERE id = ANY(%s)"
            " ORDER BY id, updated_at DESC",
            ([row[0] for row in ranked],),
        )
        titles: dict[str, str | None] = dict(cursor.fetchall())
    matches = []
    for session_id, seq, role, kind, at, message, rank, same_folder, updated, _complete in ranked:
        line, spans = snippet(message, parsed.words)
        matches.append(
            ConversationMatch(
                session_id,
                label_from_title(session_id, titles.get(session_id)),
                seq,
                role,
                kind == "checkpoint",
                at,
                line,
                spans,
                bool(same_folder),
                updated,
                float(rank),
            )
        )
    return ConversationSearchResult(tuple(matches), "ok", parsed.pending, complete=complete)
