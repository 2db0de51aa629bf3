"""The agent runtime: inbox, step loop, pre-step chain and idle/running delivery."""

from sessionref.agent.agent import Agent, AgentStatus
from sessionref.agent.delivery import (
    DeliveryOutcome,
    DeliveryTicket,
    PreparedMessage,
    deliver_with_references,
)
from sessionref.agent.errors import AgentError, TurnFailure
from sessionref.agent.messages import conversation_from_surface, make_user_message, message_text
from sessionref.agent.prestep import (
    Enter,
    NextDecision,
    PreStepContext,
    PreStepDecision,
    PreStepListener,
    Reject,
)
from sessionref.contract.options import Placement

__all__ = [
    "Agent",
    "AgentError",
    "AgentStatus",
    "DeliveryOutcome",
    "DeliveryTicket",
    "Enter",
    "NextDecision",
    "Placement",
    "PreStepContext",
    "PreStepDecision",
    "PreStepListener",
    "PreparedMessage",
    "Reject",
    "TurnFailure",
    "conversation_from_surface",
    "deliver_with_references",
    "make_user_message",
    "message_text",
]
