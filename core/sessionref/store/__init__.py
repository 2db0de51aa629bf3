"""The embedded session store: DSH-compatible logs, folding, titles and a SQLite discovery index."""

from sessionref.contract.titles import normalize_title
from sessionref.store.errors import StoreError
from sessionref.store.fold import fold_surface
from sessionref.store.layout import encode_session_segment, project_key
from sessionref.store.store import ConversationSource, SessionStore, open_store

__all__ = [
    "ConversationSource",
    "SessionStore",
    "StoreError",
    "encode_session_segment",
    "fold_surface",
    "normalize_title",
    "open_store",
    "project_key",
]
