"""`SessionReferences`: candidate discovery and snapshot preparation over a `SessionQuery`.

The service follows the seed contract (docs/contract.md §5, §6) with the later
additions (§0, decision D1): an automatic model-relative byte budget, omission
notices outside the budgeted JSON with a saved full transcript, the
`sameWorkspace` candidate flag and `capturedFormatVersion` on each record.
`profile="rc8"` reproduces the older prepare output byte for byte (no
`capturedFormatVersion`, no omission notices, 65536-byte default budget).

Cancellation (docs/contract.md, decision D5): asyncio cancellation always propagates untouched; an
aborted `AbortSignal` gives `SESSION_REFERENCE_CANCELLED`.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sessionref.contract.context_message import (
    automatic_reference_budget,
    budget_exceeded,
    context_message,
    normalize_references,
    reference_record,
    render_prompt,
)
from sessionref.contract.errors import ErrorCode, SessionReferenceError
from sessionref.contract.events import ContentBlock, ReferenceRecord, UserMessage
from sessionref.contract.options import DEFAULT_MAX_REFERENCE_BYTES, Profile
from sessionref.contract.reference_budget import RetainedReference, retain_referenced_session
from sessionref.contract.uri import SessionReference, parse_session_reference_text
from sessionref.service.abort import AbortSignal
from sessionref.service.cancellation import race, raise_if_aborted
from sessionref.service.candidates import (
    Candidate,
    checked_candidate_limit,
    close_match_labels,
    find_candidates,
)
from sessionref.service.captured import CapturedReference, label_of, omission_notices
from sessionref.service.config import SessionReferenceConfig
from sessionref.service.conversations import (
    ConversationRequest,
    ConversationSearchResult,
    MessageContext,
    checked_search_text,
    find_conversations,
    read_message_context,
)
from sessionref.service.protocols import ConversationQuery, SessionQuery, SurfaceSnapshot
from sessionref.service.reference_preview import ReferencePreview, reference_preview
from sessionref.service.spill import SpillStore

__all__ = [
    "Candidate",
    "CapturedReference",
    "PreparedReferencedMessage",
    "ReferencePreview",
    "ReferencingAgent",
    "SessionReferences",
    "omission_notices",
]

ContextWindow = int | Callable[[], "int | Awaitable[int | None] | None"] | None

READ_FAILED_PREFIX = "failed to read referenced session: "


class ReferencingAgent(Protocol):
    """The agent a message belongs to: its session id. An optional `cwd` attribute
    (None when absent) ranks candidates; nothing else is read."""

    @property
    def id(self) -> str: ...


@dataclass(frozen=True, slots=True)
class PreparedReferencedMessage:
    """What `prepare` returns.

    `content` is a deep copy of the readable content; `additional_context` the
    snapshot user message (`{source, content, role, id}`, source kind
    `session-reference`) or None when nothing was referenced; `references` the
    per-source records of that message's source.
    """

    content: list[ContentBlock]
    additional_context: UserMessage | None
    references: list[ReferenceRecord]

    def to_json(self) -> dict[str, Any]:
        """Upstream result shape `{content, additionalContext?}`."""
        shape: dict[str, Any] = {"content": self.content}
        if self.additional_context is not None:
            shape["additionalContext"] = self.additional_context
        return shape


class SessionReferences:
    """The reference service over a `SessionQuery` (any backend).

    `context_window` is the active model's context window in tokens, or a
    callable (sync or async) returning it; it feeds the automatic budget when
    `max_reference_bytes` is not configured. `spill_store` receives full
    transcripts of truncated references (without one, notices say
    `storage-not-configured`). `conversations` answers `search_conversations` (without it,
    that search is `off`). Construction raises `SESSION_REFERENCE_INVALID_CONFIG`
    for a bad config.
    """

    def __init__(
        self,
        query: SessionQuery,
        config: SessionReferenceConfig | Mapping[str, Any] | None = None,
        *,
        spill_store: SpillStore | None = None,
        context_window: ContextWindow = None,
        profile: Profile = "later",
        conversations: ConversationQuery | None = None,
    ) -> None:
        if profile not in ("rc8", "later"):
            raise ValueError(f"unknown profile {profile!r}")
        self.query = query
        self.config = SessionReferenceConfig.from_value(config)
        self.spill_store = spill_store
        self.context_window = context_window
        self.profile: Profile = profile
        self.conversations = conversations

    # -- discovery -------------------------------------------------------------------------------

    async def list_candidates(
        self,
        agent: ReferencingAgent,
        query: str = "",
        limit: object = None,
        *,
        signal: AbortSignal | None = None,
        fuzzy: bool = False,
    ) -> list[Candidate]:
        """Other sessions matching `query` (id, cwd or title substring, case-insensitive), best first.

        Same-cwd sessions rank first, then cwd-less ones, then the rest, each in the
        backend's newest-first order. `limit` defaults to `candidate_limit` and must be
        a positive safe integer (else `SESSION_REFERENCE_INVALID_REFERENCE`). With `fuzzy` (the
        UIs), close matches of titles follow the exact ones (`service.fuzzy_titles`).
        """
        checked = self.config.candidate_limit if limit is None else checked_candidate_limit(limit)
        if not isinstance(query, str):
            raise SessionReferenceError(ErrorCode.INVALID_REFERENCE, "candidate query must be a string")
        return await find_candidates(
            self.query,
            agent_id=agent.id,
            agent_cwd=getattr(agent, "cwd", None),
            text=query,
            limit=checked,
            signal=signal,
            fuzzy=fuzzy,
        )

    async def close_match_labels(self, agent: ReferencingAgent) -> list[str]:
        """The labels `list_candidates(agent, …, fuzzy=True)` scores for close matches, best first:
        what `fuzzy_titles.prepare_titles` can prepare ahead of the first keystroke."""
        return await close_match_labels(self.query, agent_id=agent.id, agent_cwd=getattr(agent, "cwd", None))

    async def search_conversations(
        self,
        agent: ReferencingAgent,
        text: str,
        limit: object = 20,
        *,
        signal: AbortSignal | None = None,
        question: bool = False,
    ) -> ConversationSearchResult:
        """Other sessions whose conversation matches `text` (what was said, not the title), best first.

        `question`: `text` is a question an agent typed, not keystrokes (`ConversationRequest.question`).
        Relevance, then `agent`'s cwd, then recent activity; one match per session, `agent` itself
        never. Runs in a worker thread; cancellable like `list_candidates` (an aborted `signal`
        gives `SESSION_REFERENCE_CANCELLED` and interrupts the running query). Without a text
        index (not built yet, no full-text support) the result has no matches and says why (`note`).
        """
        request = ConversationRequest(
            checked_search_text(text),
            checked_candidate_limit(limit),
            exclude_session_id=agent.id or None,
            cwd=getattr(agent, "cwd", None),
            question=question,
        )
        return await find_conversations(self.conversations, request, signal)

    async def message_context(
        self, session_id: str, seq: int, *, around: int = 1, signal: AbortSignal | None = None
    ) -> MessageContext:
        """Message `seq` of `session_id` with `around` neighbours each side, from its projection now
        (one read of its log; texts bounded). For a preview of a conversation match."""
        return await read_message_context(self.query, session_id, seq, around=around, signal=signal)

    # -- preparation -----------------------------------------------------------------------------

    async def resolve_budget(self, *, signal: AbortSignal | None = None) -> int:
        """The per-source byte budget now: the configured one, else the automatic one.

        Errors from a `context_window` callable propagate unchanged.
        """
        if self.config.max_reference_bytes is not None:
            return self.config.max_reference_bytes
        if self.profile == "rc8":
            return DEFAULT_MAX_REFERENCE_BYTES
        window: Any = self.context_window
        if callable(window):
            window = window()
            if inspect.isawaitable(window):
                window = await race(window, signal)
        return automatic_reference_budget(window, self.config.reference_context_fraction)

    async def _read_all(
        self, references: Sequence[SessionReference], signal: AbortSignal | None
    ) -> list[SurfaceSnapshot]:
        """Read every source once, in parallel; all-or-nothing."""

        async def read_each_once() -> list[SurfaceSnapshot]:
            reads = [self.query.read_surface(reference.session_id) for reference in references]
            return list(await asyncio.gather(*reads))

        try:
            return await race(read_each_once(), signal)
        except Exception as error:
            if signal is not None and signal.aborted:
                if isinstance(error, SessionReferenceError) and error.code == ErrorCode.CANCELLED:
                    raise
                raise_if_aborted(signal)
            raise SessionReferenceError(
                ErrorCode.READ_FAILED, READ_FAILED_PREFIX + str(error), cause=error
            ) from error

    def _retain(self, snapshot: SurfaceSnapshot, label: str, budget: int) -> RetainedReference:
        try:
            retained = retain_referenced_session(snapshot, label, budget)
        except SessionReferenceError:
            raise
        except Exception as error:
            if self.profile == "rc8":
                raise
            # The product never shows a bare exception: an unprojectable surface is a failed read.
            raise SessionReferenceError(
                ErrorCode.READ_FAILED, READ_FAILED_PREFIX + str(error), cause=error
            ) from error
        if retained is None:
            raise budget_exceeded()
        return retained

    def _capture_all(
        self, refs: Sequence[SessionReference], snapshots: Sequence[SurfaceSnapshot], budget: int
    ) -> list[CapturedReference]:
        """Retain every source in input order; the first that cannot fit raises BUDGET_EXCEEDED."""
        return [
            CapturedReference(ref, snapshot, self._retain(snapshot, label_of(ref), budget), index)
            for index, (ref, snapshot) in enumerate(zip(refs, snapshots, strict=True))
        ]

    async def prepare(
        self,
        agent: ReferencingAgent,
        content: Sequence[ContentBlock],
        references: Sequence[object],
        *,
        signal: AbortSignal | None = None,
    ) -> PreparedReferencedMessage:
        """Capture each referenced session into one untrusted snapshot message, or fail as a whole.

        Order: copy content; validate and dedupe references (INVALID_REFERENCE,
        SELF_REFERENCE, TOO_MANY); nothing referenced -> content only; resolve the
        budget; read all sources in parallel, each once (READ_FAILED); retain each
        (BUDGET_EXCEEDED); save transcripts of truncated ones ("later" profile);
        build the message. An aborted `signal` at any await -> CANCELLED.
        """
        accepted = copy.deepcopy(list(content))
        refs = normalize_references(references, agent.id, self.config.max_references)
        if not refs:
            return PreparedReferencedMessage(accepted, None, [])
        raise_if_aborted(signal)
        budget = await self.resolve_budget(signal=signal)
        raise_if_aborted(signal)
        snapshots = await self._read_all(refs, signal)
        raise_if_aborted(signal)
        # Projection and retention are pure CPU work (large sessions take tens of ms): keep them off
        # the event loop so a UI stays responsive while a message is prepared.
        captured = await asyncio.to_thread(self._capture_all, refs, snapshots, budget)
        notices: list[dict[str, Any]] = []
        if self.profile != "rc8":
            notices = await race(omission_notices(self.spill_store, agent.id, captured), signal)
            raise_if_aborted(signal)
        records = [
            reference_record(item.reference, item.snapshot, item.retained, item.input_index, self.profile)
            for item in captured
        ]
        prompt = render_prompt([item.retained for item in captured], notices)
        message = context_message(prompt, records)
        return PreparedReferencedMessage(accepted, message, records)

    async def prepare_text(
        self, agent: ReferencingAgent, text: str, *, signal: AbortSignal | None = None
    ) -> PreparedReferencedMessage:
        """Parse the mentions in `text`, then `prepare` one text block holding the readable text.

        A malformed mention raises `SESSION_REFERENCE_INVALID_REFERENCE` before any read.
        """
        parsed = parse_session_reference_text(text)
        return await self.prepare(
            agent, [{"type": "text", "text": parsed.text}], list(parsed.references), signal=signal
        )

    async def preview(
        self,
        agent: ReferencingAgent,
        session_id: str,
        *,
        label: str | None = None,
        signal: AbortSignal | None = None,
    ) -> ReferencePreview:
        """How `session_id` would be captured now under the current budget (one read, no save).

        Raises the same errors as `prepare` for a single reference.
        """
        element: dict[str, Any] = {"sessionId": session_id}
        if label is not None:
            element["label"] = label
        (reference,) = normalize_references([element], agent.id, self.config.max_references)
        raise_if_aborted(signal)
        budget = await self.resolve_budget(signal=signal)
        raise_if_aborted(signal)
        (snapshot,) = await self._read_all([reference], signal)
        raise_if_aborted(signal)
        shown = label_of(reference)
        retained = await asyncio.to_thread(self._retain, snapshot, shown, budget)
        return reference_preview(reference.session_id, shown, retained, budget)
