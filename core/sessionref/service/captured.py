"""`CapturedReference`: one source as `prepare` captured it, and the omission notices for them.

A reference cut to fit its budget gets a notice outside the budgeted JSON that says what was
left out and where its full transcript was saved (`spill`), so nothing is silently lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sessionref.contract.context_message import captured_format_version
from sessionref.contract.omissions import (
    UNAVAILABLE_NO_STORE,
    UNAVAILABLE_SAVE_FAILED,
    SpillOwner,
    SpillSource,
    omission_notice,
    render_transcript,
    saved_snapshot,
    unavailable_snapshot,
)
from sessionref.contract.reference_budget import RetainedReference
from sessionref.contract.uri import SessionReference
from sessionref.service.protocols import SurfaceSnapshot
from sessionref.service.spill import SpillStore


def label_of(reference: SessionReference) -> str:
    """The resolved label (an empty label is a real label, not a missing one)."""
    return reference.session_id if reference.label is None else reference.label


@dataclass(frozen=True, slots=True)
class CapturedReference:
    """One source as captured by `prepare`: its reference, raw snapshot, retention and input index."""

    reference: SessionReference
    snapshot: SurfaceSnapshot
    retained: RetainedReference
    input_index: int


async def _full_snapshot(
    store: SpillStore | None, target_id: str, captured: CapturedReference
) -> dict[str, Any]:
    """Save one full transcript and describe the outcome (`saved` or `unavailable` with a reason)."""
    if store is None:
        return unavailable_snapshot(UNAVAILABLE_NO_STORE)
    transcript = render_transcript(captured.retained.full_data, captured_format_version(captured.snapshot))
    reference = captured.reference
    try:
        saved = await store.save_text(
            SpillOwner(target_id),
            SpillSource(reference.session_id, label_of(reference)),
            f"session-reference-{captured.input_index + 1}.txt",
            transcript,
        )
    except Exception:
        return unavailable_snapshot(UNAVAILABLE_SAVE_FAILED)
    return saved_snapshot(saved)


async def omission_notices(
    store: SpillStore | None, target_id: str, captured: Sequence[CapturedReference]
) -> list[dict[str, Any]]:
    """Notices for the truncated references, saving each one's full transcript (in parallel).

    Intact references get no notice and no save. A failing store never fails the
    preparation: its notice says `save-failed`; without a store, `storage-not-configured`.
    """
    truncated = [item for item in captured if item.retained.stats.truncated]
    outcomes = await asyncio.gather(*(_full_snapshot(store, target_id, item) for item in truncated))
    return [
        omission_notice(
            item.reference.session_id,
            item.snapshot.get("capturedThroughSeq"),
            item.retained.stats.omitted_messages,
            item.retained.stats.omitted_bytes,
            outcome,
        )
        for item, outcome in zip(truncated, outcomes, strict=True)
    ]
