"""Test support: parse-and-prepare for a batch of messages about to enter a step (rc.8's pre-step).

rc.8 (docs/contract.md §0) prepared mentions inside the agent's pre-step. sessionref delivers
through `Workspace.submit` instead (decisions D2/D3), so the product never calls this; the
service-case vectors and the placement tests still drive `SessionReferences.prepare` the rc.8
way through it.

Only direct user messages (`source.kind == "user"`) are touched: each of their
text blocks is rewritten to readable `@label` text, the references of all
blocks are prepared together, and the snapshot message is placed next to the
message that cited it. Every other message is returned as the same object.
Any parse or prepare failure fails the whole batch (nothing partial enters).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sessionref.contract.options import Placement
from sessionref.contract.uri import SessionReference, parse_session_reference_text
from sessionref.service.abort import AbortSignal

if TYPE_CHECKING:
    from sessionref.service.references import SessionReferences


def is_direct_user_message(message: Mapping[str, Any]) -> bool:
    """True for a message typed by the human (not plugin context, tools or earlier snapshots)."""
    source = message.get("source")
    return isinstance(source, Mapping) and source.get("kind") == "user"


def rewrite_mentions(content: Sequence[Any]) -> tuple[list[Any], list[SessionReference]]:
    """`content` with every text block's mentions rewritten, and the references in block order.

    Non-text blocks are kept as they are. Raises `SESSION_REFERENCE_INVALID_REFERENCE`
    for a malformed mention anywhere.
    """
    rewritten: list[Any] = []
    references: list[SessionReference] = []
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parsed = parse_session_reference_text(block["text"])
            rewritten.append({**block, "text": parsed.text})
            references.extend(parsed.references)
        else:
            rewritten.append(block)
    return rewritten, references


async def _prepare_one(
    service: SessionReferences,
    agent: Any,
    message: Mapping[str, Any],
    placement: Placement,
    signal: AbortSignal | None,
) -> list[Mapping[str, Any]]:
    if not is_direct_user_message(message):
        return [message]
    content, references = rewrite_mentions(message.get("content") or [])
    if not references:
        return [message]
    prepared = await service.prepare(agent, content, references, signal=signal)
    readable = {**message, "content": prepared.content}
    context = prepared.additional_context
    if context is None:
        return [readable]
    return [context, readable] if placement == "before" else [readable, context]


async def prepare_direct_messages(
    service: SessionReferences,
    agent: Any,
    messages: Sequence[Mapping[str, Any]],
    *,
    signal: AbortSignal | None = None,
    placement: Placement = "before",
) -> list[Mapping[str, Any]]:
    """The batch with each citing direct message rewritten and its snapshot placed beside it.

    `placement="before"` puts the snapshot immediately before the readable message
    (the seed order, decision D2's default); `"after"` immediately after it (rc.8).
    Each direct message gets its own `prepare` (own reads, dedupe and limit), all in parallel.
    """
    groups = await asyncio.gather(
        *(_prepare_one(service, agent, message, placement, signal) for message in messages)
    )
    return [message for group in groups for message in group]
