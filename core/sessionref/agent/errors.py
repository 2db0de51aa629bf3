"""The one error type the agent runtime raises at its callers, with stable codes."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from sessionref.contract.errors import CodedError


class AgentCode(StrEnum):
    """The agent runtime's stable error codes (docs/errors.md)."""

    READ_ONLY = "AGENT_READ_ONLY"
    INVALID_MESSAGE = "AGENT_INVALID_MESSAGE"
    EMPTY_MESSAGE = "AGENT_EMPTY_MESSAGE"
    NOTHING_TO_COMPACT = "AGENT_NOTHING_TO_COMPACT"
    NO_EVENT_LOOP = "AGENT_NO_EVENT_LOOP"
    # Codes that only ever appear in a logged ``turn/end`` (``errorCode``), never raised.
    PRE_STEP_FAILED = "AGENT_PRE_STEP_FAILED"
    MODEL_FAILED = "AGENT_MODEL_FAILED"
    STORE_FAILED = "AGENT_STORE_FAILED"
    """A read or write of the log failed with an error that carries no code of its own."""
    TURN_FAILED = "AGENT_TURN_FAILED"
    """An unexpected failure (a bug) stopped the step loop; only reported to ``on_turn_error``."""


# The names the agent's modules import; each is the catalogue member above.
AGENT_READ_ONLY: Final = AgentCode.READ_ONLY
AGENT_INVALID_MESSAGE: Final = AgentCode.INVALID_MESSAGE
AGENT_EMPTY_MESSAGE: Final = AgentCode.EMPTY_MESSAGE
AGENT_NOTHING_TO_COMPACT: Final = AgentCode.NOTHING_TO_COMPACT
AGENT_NO_EVENT_LOOP: Final = AgentCode.NO_EVENT_LOOP
AGENT_PRE_STEP_FAILED: Final = AgentCode.PRE_STEP_FAILED
AGENT_MODEL_FAILED: Final = AgentCode.MODEL_FAILED
AGENT_STORE_FAILED: Final = AgentCode.STORE_FAILED
AGENT_TURN_FAILED: Final = AgentCode.TURN_FAILED


class AgentError(CodedError):
    """A request to the agent could not be accepted; nothing was queued or written.

    ``code`` is an `AgentCode`, ``message`` is a sentence for people.
    """


@dataclass(frozen=True, slots=True)
class TurnFailure:
    """A turn that ended in an error, as ``Agent.on_turn_error`` reports it.

    ``code`` is stable (``MODEL_AUTH``, ``STORE_LOCK_TIMEOUT``, ``AGENT_PRE_STEP_FAILED``, ...),
    ``message`` is for people. ``turn`` is None when the turn could not even start. ``logged``
    is False when the log could not record the error: then a UI must show it from here.
    """

    session_id: str
    turn: int | None
    code: str
    message: str
    logged: bool
