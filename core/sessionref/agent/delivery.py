"""Delivering a prepared referenced message to an agent (decisions D2 and D3).

The readable prompt and its snapshot (the prepared ``additional_context``) must reach the log as
a pair, next to each other, in the configured order, and only together:

* ``placement="before"`` (default): snapshot ``user/message`` immediately before the prompt;
  ``"after"``: immediately after it. The order is the same whether the agent was idle or running.
* Idle: the prompt is queued with ``followup`` and a one-shot, prepended pre-step wrapper adds
  the snapshot to the ``Enter`` decision of the batch that contains the prompt. A discard
  listener, installed before the prompt is queued, removes the wrapper if the prompt is dropped
  first. The wrapper is gone in every outcome.
* Running: ``inject(snapshot)`` and ``steer(prompt)`` back to back (prompt first for ``after``),
  so the next step boundary claims both in one batch; a rejection drops both.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

from sessionref.agent.agent import Agent
from sessionref.agent.messages import check_user_message, make_user_message
from sessionref.agent.prestep import Enter, NextDecision, PreStepContext, PreStepDecision
from sessionref.contract.events import ContentBlock, UserMessage
from sessionref.contract.options import Placement

DeliveryOutcome = Literal["entered", "rejected", "discarded"]


class PreparedMessage(Protocol):
    """What ``SessionReferences.prepare`` returns: readable content and an optional snapshot message."""

    @property
    def content(self) -> Sequence[ContentBlock]:
        """The readable prompt's content blocks (read-only: a frozen result satisfies it)."""
        ...

    @property
    def additional_context(self) -> UserMessage | None:
        """The snapshot user message, or None when nothing was referenced."""
        ...


class DeliveryTicket:
    """Tracks one delivered prompt until it has entered a step or was dropped.

    ``prompt`` is the direct user message that was queued, ``context`` the snapshot message (or
    None), ``path`` ``"idle"`` or ``"running"``. Every listener the delivery installed is removed
    once the outcome is known.
    """

    def __init__(
        self,
        agent: Agent,
        prompt: dict[str, Any],
        context: dict[str, Any] | None,
        placement: Placement,
        path: Literal["idle", "running"],
    ) -> None:
        self.prompt = prompt
        self.context = context
        self.placement: Placement = placement
        self.path: Literal["idle", "running"] = path
        self._agent = agent
        self._future: asyncio.Future[DeliveryOutcome] = asyncio.get_running_loop().create_future()
        self._removers: list[Callable[[], None]] = []

    @property
    def done(self) -> bool:
        """True once the outcome is known."""
        return self._future.done()

    async def outcome(self) -> DeliveryOutcome:
        """``entered`` (logged), ``rejected`` (a pre-step listener rejected it) or ``discarded``."""
        return await asyncio.shield(self._future)

    def _watch(self) -> None:
        prompt_id = self.prompt["id"]

        def on_entered(messages: list[dict[str, Any]]) -> None:
            if any(message["id"] == prompt_id for message in messages):
                self._settle("entered")

        def on_discard(message: dict[str, Any], reason: str) -> None:
            if message["id"] != prompt_id:
                return
            if self.context is not None:
                # A snapshot still waiting in the inbox must not outlive its prompt.
                self._agent.discard_pending(self.context["id"], reason=reason)
            self._settle("rejected" if reason == "rejected" else "discarded")

        self._removers.append(self._agent.on_entered(on_entered))
        self._removers.append(self._agent.on_discard(on_discard))

    def _install_wrapper(self) -> None:
        assert self.context is not None
        prompt_id = self.prompt["id"]
        context = self.context
        placement = self.placement

        async def add_snapshot(ctx: PreStepContext, next_decision: NextDecision) -> PreStepDecision:
            if not any(message["id"] == prompt_id for message in ctx.messages):
                return await next_decision()
            remove_wrapper()  # one-shot: gone before the downstream decision, whatever it is
            decision = await next_decision()
            if not isinstance(decision, Enter):
                return decision
            messages = list(decision.messages)
            for index, message in enumerate(messages):
                if message["id"] == prompt_id:
                    messages.insert(index if placement == "before" else index + 1, copy.deepcopy(context))
                    return Enter(messages)
            return decision

        remove_wrapper = self._agent.add_pre_step(add_snapshot, prepend=True)
        self._removers.append(remove_wrapper)

    def _settle(self, outcome: DeliveryOutcome) -> None:
        self._detach()
        if not self._future.done():
            self._future.set_result(outcome)

    def _detach(self) -> None:
        removers, self._removers = self._removers, []
        for remove in removers:
            remove()


def deliver_with_references(
    agent: Agent, prepared: PreparedMessage, *, placement: Placement | None = None
) -> DeliveryTicket:
    """Queue ``prepared.content`` as a direct prompt and its snapshot (if any) per D2/D3.

    Idle agents get a ``followup`` plus the one-shot wrapper; running agents get
    ``inject``/``steer``. Without a snapshot the prompt is simply followed up (idle) or steered
    (running). Raises AgentError before anything is queued if the session is read-only or the
    prepared messages are malformed.
    """
    chosen: Placement = placement if placement is not None else agent.placement
    if chosen not in ("before", "after"):
        raise ValueError('placement must be "before" or "after"')
    agent.ensure_writable()
    prompt = make_user_message(prepared.content)
    additional = prepared.additional_context
    context = None if additional is None else copy.deepcopy(check_user_message(dict(additional)))
    running = agent.status == "running"
    ticket = DeliveryTicket(agent, prompt, context, chosen, "running" if running else "idle")
    ticket._watch()
    try:
        if context is None:
            (agent.steer if running else agent.followup)(prompt)
        elif running:
            if chosen == "before":
                agent.inject(context)
                agent.steer(prompt)
            else:
                agent.steer(prompt)
                agent.inject(context)
        else:
            ticket._install_wrapper()
            agent.followup(prompt)
    except BaseException:
        ticket._detach()
        raise
    return ticket
