"""One session's snapshot as a context message, exactly as `sessionref snapshot ID` prints it.

The same preparation as a sent message (`SessionReferences.prepare` with one reference), with the
configured budget or an explicit `max_bytes`, and no spill store: nothing is written, so a cut
session's full transcript is not saved (its omission notice says so). The CLI's `snapshot`
command and the MCP server's `get_snapshot` (and its resources and prompt) both call
`prepare_snapshot`, so an agent gets byte for byte what the command prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sessionref.service.vantage import Vantage

if TYPE_CHECKING:
    from sessionref.host.settings import Settings
    from sessionref.service.abort import AbortSignal
    from sessionref.service.protocols import SessionQuery


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A prepared snapshot: the session, the label it was framed with, the context message's text
    and its `session-reference` source (the per-reference record)."""

    session_id: str
    label: str
    text: str
    source: dict[str, Any]


async def prepare_snapshot(
    query: SessionQuery,
    settings: Settings,
    session_id: str,
    *,
    max_bytes: int | None = None,
    signal: AbortSignal | None = None,
) -> Snapshot:
    """The context message for `session_id` under `max_bytes` (default: the settings' budget, else
    the configured model's automatic one), read through `query` (the store, or the store and the
    shared catalog). Raises the reference service's coded errors."""
    from sessionref.host.model_choice import build_model
    from sessionref.service.config import SessionReferenceConfig
    from sessionref.service.references import SessionReferences

    config = settings.references
    if max_bytes is not None:
        config = SessionReferenceConfig.from_value({**config.model_dump(), "max_reference_bytes": max_bytes})
    window = build_model(settings).context_window
    label = (await query.read_titles([session_id])).get(session_id) or session_id
    references = SessionReferences(query, config, spill_store=None, context_window=window)
    reference = {"sessionId": session_id, "label": label}
    prepared = await references.prepare(Vantage(id="", cwd=None), [], [reference], signal=signal)
    context = prepared.additional_context
    assert context is not None  # one reference always makes a context message
    return Snapshot(session_id, label, context["content"][0]["text"], dict(context["source"]))
