"""One place that wires the store, the model, the reference service and the agents together.

The Textual app and the line mode both submit through :meth:`Workspace.submit`, so a message
typed in either is parsed, prepared and delivered the same way.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from sessionref.agent import Agent, AgentError, DeliveryTicket, deliver_with_references
from sessionref.agent.errors import AGENT_EMPTY_MESSAGE
from sessionref.references import PreparedReferencedMessage, SessionReferences
from sessionref.settings import Placement, Settings
from sessionref.signal import AbortSignal
from sessionref.spill import DirectorySpillStore


@dataclass(frozen=True, slots=True)
class SubmitResult:
    """A submitted message: its delivery ticket, what was prepared, and the referenced labels."""

    ticket: DeliveryTicket
    prepared: PreparedReferencedMessage
    references: tuple[str, ...]


class Workspace:
    """The store, the active model, the reference service and one cached Agent per session.

    ``cwd`` is where new sessions are created (and which sessions rank first as candidates).
    ``settings`` supplies the snapshot placement and the reference configuration; without it
    the defaults apply (placement ``before``, automatic budget from the model's context window).
    """

    def __init__(self, store: Any, model: Any, *, cwd: str | None, settings: Settings | None = None) -> None:
        self.store = store
        self.model = model
        self.cwd = cwd
        self.settings = settings
        self.placement: Placement = settings.placement if settings is not None else "before"
        self.references = SessionReferences(
            store,
            settings.references if settings is not None else None,
            spill_store=DirectorySpillStore(store.root),
            context_window=self._context_window,
        )
        self._agents: dict[str, Agent] = {}

    def _context_window(self) -> int | None:
        return getattr(self.model, "context_window", None)

    def set_model(self, model: Any) -> None:
        """Switch the active model; agents use it from their next step on."""
        self.model = model
        for agent in self._agents.values():
            agent.model = model

    def agent(self, session_id: str) -> Agent:
        """The Agent of ``session_id`` (created on first use, then cached).

        Raises the store's error (``STORE_SESSION_NOT_FOUND``) for an unknown session.
        """
        agent = self._agents.get(session_id)
        if agent is None:
            agent = Agent(self.store, session_id, self.model, placement=self.placement)
            self._agents[session_id] = agent
        return agent

    def new_session(self) -> Agent:
        """Create a session in this workspace's cwd and return its Agent."""
        record = self.store.create_session(cwd=self.cwd)
        return self.agent(record.id)

    async def submit(self, agent: Agent, text: str, *, signal: AbortSignal | None = None) -> SubmitResult:
        """Parse the mentions in ``text``, prepare the snapshot, and deliver both to ``agent``.

        Every failure happens before anything is queued, so the caller keeps the draft:
        ``AgentError`` (AGENT_READ_ONLY, AGENT_EMPTY_MESSAGE) or ``SessionReferenceError``
        (invalid mention, self reference, too many, unreadable source, budget, cancelled via
        ``signal``). Text without mentions is delivered as a plain followup (idle) or steer
        (running).
        """
        agent.ensure_writable()
        if not text.strip():
            raise AgentError(AGENT_EMPTY_MESSAGE, "there is nothing to send")
        prepared = await self.references.prepare_text(agent, text, signal=signal)
        ticket = deliver_with_references(agent, prepared)
        return SubmitResult(ticket, prepared, _labels(prepared))

    async def close(self, *, close_store: bool = True) -> None:
        """Cancel running turns (what was streamed is kept in the log), then close the store."""
        running = [agent for agent in self._agents.values() if agent.status == "running"]
        await asyncio.gather(*(agent.cancel() for agent in running))
        if close_store:
            self.store.close()


def _labels(prepared: PreparedReferencedMessage) -> tuple[str, ...]:
    context = prepared.additional_context
    if context is None:
        return ()
    records = context.get("source", {}).get("references", [])
    return tuple(str(record.get("label", record.get("sessionId", ""))) for record in records)
