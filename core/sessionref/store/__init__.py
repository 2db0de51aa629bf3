"""The embedded session store: DSH-compatible logs, folding, titles and a SQLite discovery index."""

from sessionref.store.errors import StoreError
from sessionref.store.fold import fold_surface
from sessionref.store.layout import encode_session_segment, project_key
from sessionref.store.store import SessionStore, default_store_root, open_store
from sessionref.store.titles import normalize_title

__all__ = [
    "SessionStore",
    "StoreError",
    "default_store_root",
    "encode_session_segment",
    "fold_surface",
    "normalize_title",
    "open_store",
    "project_key",
]
