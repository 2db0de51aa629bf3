"""sessionref: mention one AI chat session inside another.

The pure reference contract (URIs, mentions, JSON byte rules, projection,
retention) and the reference service are imported eagerly: they are small and
have no I/O. The store, the agent runtime and the models pull in SQLite, zstd
and httpx, so they load on first use (PEP 562 module ``__getattr__``).
"""

from __future__ import annotations

import importlib
from typing import Any

from sessionref.config import (
    DEFAULT_CANDIDATE_LIMIT,
    DEFAULT_MAX_REFERENCE_BYTES,
    MAX_REFERENCES,
    SessionReferenceConfig,
)
from sessionref.errors import ErrorCode, SessionReferenceError
from sessionref.jsjson import stringify_tag_safe_json, utf8_len
from sessionref.projection import ProjectedItem, is_compact_checkpoint_source, project_session_conversation
from sessionref.query import CandidateSearch, SessionQuery, SessionRecord, SurfaceSnapshot
from sessionref.references import (
    Candidate,
    PreparedReferencedMessage,
    ReferencePreview,
    SessionReferences,
)
from sessionref.retainer import truncate_with_notice
from sessionref.retention import RetainedReference, RetentionStats, retain_referenced_session
from sessionref.signal import AbortSignal
from sessionref.spill import DirectorySpillStore, MemorySpillStore, SpillStore
from sessionref.uri import (
    SESSION_REFERENCE_SCHEME,
    ParsedReferenceText,
    SessionReference,
    decode_session_reference_uri,
    encode_session_reference_uri,
    format_session_reference_mention,
    parse_session_reference_text,
)

_LAZY: dict[str, str] = {
    "open_store": "sessionref.store",
    "SessionStore": "sessionref.store",
    "StoreError": "sessionref.store",
    "default_store_root": "sessionref.store",
    "Agent": "sessionref.agent",
    "AgentError": "sessionref.agent",
    "deliver_with_references": "sessionref.agent",
    "make_user_message": "sessionref.agent",
    "Workspace": "sessionref.workspace",
    "ChatModel": "sessionref.models",
    "DemoModel": "sessionref.models",
    "ModelError": "sessionref.models",
    "OpenAIChatModel": "sessionref.models",
    "Settings": "sessionref.settings",
    "load_settings": "sessionref.settings",
    "build_model": "sessionref.settings",
}


def __getattr__(name: str) -> Any:
    """Load the store, runtime and model names on first access."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sessionref' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [  # grouped by layer, not alphabetically
    # contract
    "SESSION_REFERENCE_SCHEME",
    "ErrorCode",
    "SessionReferenceError",
    "SessionReference",
    "ParsedReferenceText",
    "encode_session_reference_uri",
    "decode_session_reference_uri",
    "format_session_reference_mention",
    "parse_session_reference_text",
    "stringify_tag_safe_json",
    "utf8_len",
    "truncate_with_notice",
    "ProjectedItem",
    "project_session_conversation",
    "is_compact_checkpoint_source",
    "RetainedReference",
    "RetentionStats",
    "retain_referenced_session",
    # service
    "MAX_REFERENCES",
    "DEFAULT_CANDIDATE_LIMIT",
    "DEFAULT_MAX_REFERENCE_BYTES",
    "SessionReferenceConfig",
    "SessionQuery",
    "CandidateSearch",
    "SessionRecord",
    "SurfaceSnapshot",
    "SessionReferences",
    "Candidate",
    "PreparedReferencedMessage",
    "ReferencePreview",
    "AbortSignal",
    "SpillStore",
    "MemorySpillStore",
    "DirectorySpillStore",
    # store, runtime, models (lazy)
    *_LAZY,
]
