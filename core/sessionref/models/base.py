"""The chat-model protocol every model implements, and the one error type it may raise.

A model turns a conversation (plain ``{"role", "content"}`` dicts with string content) into a
stream of text deltas. Failures are always a :class:`ModelError` with a stable code, never an
exception from the transport library, so the agent can end the turn with a clear message.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from enum import StrEnum
from typing import Any, Final, Literal, Protocol, runtime_checkable

from sessionref.contract.errors import CodedError
from sessionref.contract.terminal_text import UNSAFE_CHARACTER


class ModelCode(StrEnum):
    """The stable codes of `ModelError` (docs/errors.md)."""

    AUTH = "MODEL_AUTH"
    TIMEOUT = "MODEL_TIMEOUT"
    STREAM_DROPPED = "MODEL_STREAM_DROPPED"
    HTTP_ERROR = "MODEL_HTTP_ERROR"
    BAD_RESPONSE = "MODEL_BAD_RESPONSE"
    UNREACHABLE = "MODEL_UNREACHABLE"
    BAD_REQUEST = "MODEL_BAD_REQUEST"
    STREAM_TOO_LARGE = "MODEL_STREAM_TOO_LARGE"
    REDIRECT = "MODEL_REDIRECT"


# The names the models' modules import; each is the catalogue member above.
MODEL_AUTH: Final = ModelCode.AUTH
MODEL_TIMEOUT: Final = ModelCode.TIMEOUT
MODEL_STREAM_DROPPED: Final = ModelCode.STREAM_DROPPED
MODEL_HTTP_ERROR: Final = ModelCode.HTTP_ERROR
MODEL_BAD_RESPONSE: Final = ModelCode.BAD_RESPONSE
MODEL_UNREACHABLE: Final = ModelCode.UNREACHABLE
MODEL_BAD_REQUEST: Final = ModelCode.BAD_REQUEST
MODEL_STREAM_TOO_LARGE: Final = ModelCode.STREAM_TOO_LARGE
MODEL_REDIRECT: Final = ModelCode.REDIRECT

MODEL_ERROR_CODES: Final[frozenset[str]] = frozenset(ModelCode)

Role = Literal["user", "assistant", "system"]
"""The roles a conversation message sent to a model may have."""

ROLES: Final[tuple[Role, ...]] = ("user", "assistant", "system")

DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
"""Where the OpenAI-compatible model sends requests unless configured otherwise."""

DEFAULT_DEADLINE: Final = 600.0
"""Seconds one whole model call may take, however steadily the server keeps sending."""

DEFAULT_DEMO_PACE: Final = 0.04
"""Seconds between the words the demo model streams."""

MAX_DEMO_PACE: Final = 10.0
"""The slowest demo pace a setting or `--pace` may ask for (seconds between words)."""


class ModelError(CodedError):
    """A model call failed; ``code`` is a `ModelCode`, ``message`` is for people."""


@runtime_checkable
class ChatModel(Protocol):
    """What the agent runtime needs from a model."""

    name: str
    provider: str
    model: str
    context_window: int | None

    def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        """Yield the reply to ``messages`` as text deltas; raise ModelError on failure."""
        ...

    async def summarize(self, messages: list[dict[str, Any]]) -> str:
        """Return a summary of ``messages`` suitable for a compaction checkpoint."""
        ...

    async def aclose(self) -> None:
        """Release what the model holds (its HTTP client); the host calls it on shutdown."""
        ...


def _role(value: object) -> Role | None:
    """``value`` as a `Role`, or None when it is not one."""
    for role in ROLES:
        if value == role:
            return role
    return None


def validate_messages(messages: Sequence[Mapping[str, Any]]) -> list[tuple[Role, str]]:
    """Return ``(role, content)`` pairs, or raise ModelError(MODEL_BAD_REQUEST) naming the bad item."""
    pairs: list[tuple[Role, str]] = []
    for index, message in enumerate(messages):
        role = _role(message.get("role")) if isinstance(message, Mapping) else None
        content = message.get("content") if isinstance(message, Mapping) else None
        if role is None or not isinstance(content, str):
            raise ModelError(
                MODEL_BAD_REQUEST,
                f"message {index} must have a role of user, assistant or system and string content",
            )
        pairs.append((role, content))
    return pairs


def _dropped_or_space(match: re.Match[str]) -> str:
    return " " if match.group().isspace() else ""


def one_line_excerpt(text: str, limit: int) -> str:
    """Return ``text`` as one inert line: every terminal-unsafe character
    (`sessionref.contract.terminal_text`) removed, or made a space where it separates words (tab,
    line breaks), whitespace collapsed, at most ``limit`` characters (an ellipsis marks a cut)."""
    flat = " ".join(UNSAFE_CHARACTER.sub(_dropped_or_space, text).split())
    if len(flat) <= limit:
        return flat
    return flat[: max(0, limit - 1)].rstrip() + "…"
