"""sessionref: mention one AI chat session inside another.

Every public name is loaded on first use (PEP 562 module ``__getattr__``), so importing one
layer never pays for another: ``import sessionref.contract.uri`` loads the standard library
only, and ``from sessionref import SessionReferences`` loads the service but not the store, the
agent runtime or the models. The layers are described in docs/architecture.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessionref.lazy_exports import lazy_exports

_PUBLIC: dict[str, tuple[str, ...]] = {
    # contract: pure, standard library only
    "sessionref.contract.errors": ("CodedError", "ErrorCode", "SessionReferenceError"),
    "sessionref.contract.js_json": ("stringify_tag_safe_json", "utf8_len"),
    "sessionref.contract.projection": (
        "ProjectedItem",
        "is_compact_checkpoint_source",
        "project_session_conversation",
    ),
    "sessionref.contract.reference_budget": (
        "RetainedReference",
        "RetentionStats",
        "retain_referenced_session",
    ),
    "sessionref.contract.text_retainer": ("truncate_with_notice",),
    "sessionref.contract.uri": (
        "SESSION_REFERENCE_SCHEME",
        "ParsedReferenceText",
        "SessionReference",
        "decode_session_reference_uri",
        "encode_session_reference_uri",
        "format_session_reference_mention",
        "parse_session_reference_text",
    ),
    "sessionref.contract.options": (
        "DEFAULT_CANDIDATE_LIMIT",
        "DEFAULT_MAX_REFERENCE_BYTES",
        "MAX_REFERENCES",
    ),
    # service
    "sessionref.service.abort": ("AbortSignal",),
    "sessionref.service.config": ("SessionReferenceConfig",),
    "sessionref.service.protocols": ("CandidateSearch", "SessionQuery", "SessionRecord", "SurfaceSnapshot"),
    "sessionref.service.references": (
        "Candidate",
        "PreparedReferencedMessage",
        "ReferencePreview",
        "SessionReferences",
    ),
    "sessionref.service.spill": ("MemorySpillStore", "SpillStore"),
    # store, runtime, models, wiring
    "sessionref.store": ("SessionStore", "StoreError", "open_store"),
    "sessionref.store.spill_files": ("DirectorySpillStore",),
    "sessionref.agent": ("Agent", "AgentError", "deliver_with_references", "make_user_message"),
    "sessionref.models": ("ChatModel", "DemoModel", "ModelError", "OpenAIChatModel"),
    "sessionref.host.workspace": ("Workspace",),
    "sessionref.host.settings": ("Settings", "default_store_root", "load_settings"),
    "sessionref.host.model_choice": ("build_model",),
}

__all__ = [
    "DEFAULT_CANDIDATE_LIMIT",
    "DEFAULT_MAX_REFERENCE_BYTES",
    "MAX_REFERENCES",
    "SESSION_REFERENCE_SCHEME",
    "AbortSignal",
    "Agent",
    "AgentError",
    "Candidate",
    "CandidateSearch",
    "ChatModel",
    "CodedError",
    "DemoModel",
    "DirectorySpillStore",
    "ErrorCode",
    "MemorySpillStore",
    "ModelError",
    "OpenAIChatModel",
    "ParsedReferenceText",
    "PreparedReferencedMessage",
    "ProjectedItem",
    "ReferencePreview",
    "RetainedReference",
    "RetentionStats",
    "SessionQuery",
    "SessionRecord",
    "SessionReference",
    "SessionReferenceConfig",
    "SessionReferenceError",
    "SessionReferences",
    "SessionStore",
    "Settings",
    "SpillStore",
    "StoreError",
    "SurfaceSnapshot",
    "Workspace",
    "build_model",
    "decode_session_reference_uri",
    "default_store_root",
    "deliver_with_references",
    "encode_session_reference_uri",
    "format_session_reference_mention",
    "is_compact_checkpoint_source",
    "load_settings",
    "make_user_message",
    "open_store",
    "parse_session_reference_text",
    "project_session_conversation",
    "retain_referenced_session",
    "stringify_tag_safe_json",
    "truncate_with_notice",
    "utf8_len",
]

if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs only
    from sessionref.agent import Agent, AgentError, deliver_with_references, make_user_message
    from sessionref.contract.errors import CodedError, ErrorCode, SessionReferenceError
    from sessionref.contract.js_json import stringify_tag_safe_json, utf8_len
    from sessionref.contract.options import (
        DEFAULT_CANDIDATE_LIMIT,
        DEFAULT_MAX_REFERENCE_BYTES,
        MAX_REFERENCES,
    )
    from sessionref.contract.projection import (
        ProjectedItem,
        is_compact_checkpoint_source,
        project_session_conversation,
    )
    from sessionref.contract.reference_budget import (
        RetainedReference,
        RetentionStats,
        retain_referenced_session,
    )
    from sessionref.contract.text_retainer import truncate_with_notice
    from sessionref.contract.uri import (
        SESSION_REFERENCE_SCHEME,
        ParsedReferenceText,
        SessionReference,
        decode_session_reference_uri,
        encode_session_reference_uri,
        format_session_reference_mention,
        parse_session_reference_text,
    )
    from sessionref.host.model_choice import build_model
    from sessionref.host.settings import Settings, default_store_root, load_settings
    from sessionref.host.workspace import Workspace
    from sessionref.models import ChatModel, DemoModel, ModelError, OpenAIChatModel
    from sessionref.service.abort import AbortSignal
    from sessionref.service.config import SessionReferenceConfig
    from sessionref.service.protocols import CandidateSearch, SessionQuery, SessionRecord, SurfaceSnapshot
    from sessionref.service.references import (
        Candidate,
        PreparedReferencedMessage,
        ReferencePreview,
        SessionReferences,
    )
    from sessionref.service.spill import MemorySpillStore, SpillStore
    from sessionref.store import SessionStore, StoreError, open_store
    from sessionref.store.spill_files import DirectorySpillStore


__getattr__, __dir__ = lazy_exports(__name__, _PUBLIC, globals())
