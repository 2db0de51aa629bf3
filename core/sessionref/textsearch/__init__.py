"""Conversation search: find a session by what was said in it (issue 10, the engine).

`TextIndex` is an SQLite FTS5 index of every session's snapshot projection (direct user text,
assistant text, compaction checkpoints), one row per message, behind the `ConversationSearch`
protocol. Feed it with `SessionRows` built by `conversation_rows(surface)` (or read by the store,
`SessionStore.read_conversation`), search it with `TextIndex.search`.
"""

from sessionref.service.conversation_rows import ConversationRow, SessionConversation, conversation_rows
from sessionref.service.protocols import ConversationMatch, ConversationRequest, ConversationSearchResult
from sessionref.textsearch.errors import (
    TEXT_SEARCH_CANCELLED,
    TEXT_SEARCH_CLOSED,
    TEXT_SEARCH_INVALID_ARGUMENT,
    TEXT_SEARCH_UNAVAILABLE,
    TextSearchError,
)
from sessionref.textsearch.index import TextIndex
from sessionref.textsearch.protocol import (
    ConversationSearch,
    FactsProvider,
    IndexedSession,
    SearchCancellation,
    SessionChange,
    SessionFacts,
    SessionRemoved,
    SessionRows,
    UpdateReport,
)
from sessionref.textsearch.query import QueryPlan, parse_query
from sessionref.textsearch.schema import TEXT_INDEX_FILE_NAME
from sessionref.textsearch.snippet import Snippet, make_snippet

__all__ = [
    "TEXT_INDEX_FILE_NAME",
    "TEXT_SEARCH_CANCELLED",
    "TEXT_SEARCH_CLOSED",
    "TEXT_SEARCH_INVALID_ARGUMENT",
    "TEXT_SEARCH_UNAVAILABLE",
    "ConversationMatch",
    "ConversationRequest",
    "ConversationRow",
    "ConversationSearch",
    "ConversationSearchResult",
    "FactsProvider",
    "IndexedSession",
    "QueryPlan",
    "SearchCancellation",
    "SessionChange",
    "SessionConversation",
    "SessionFacts",
    "SessionRemoved",
    "SessionRows",
    "Snippet",
    "TextIndex",
    "TextSearchError",
    "UpdateReport",
    "conversation_rows",
    "make_snippet",
    "parse_query",
]
