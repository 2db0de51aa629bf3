"""Chat models: the offline demo model and an OpenAI-compatible streaming model."""

from sessionref.models.base import (
    MODEL_AUTH,
    MODEL_BAD_REQUEST,
    MODEL_BAD_RESPONSE,
    MODEL_ERROR_CODES,
    MODEL_HTTP_ERROR,
    MODEL_STREAM_DROPPED,
    MODEL_TIMEOUT,
    MODEL_UNREACHABLE,
    ChatModel,
    ModelError,
)
from sessionref.models.demo import DEMO_CONTEXT_WINDOW, DemoModel
from sessionref.models.openai import DEFAULT_BASE_URL, OpenAIChatModel, known_context_window

__all__ = [
    "DEFAULT_BASE_URL",
    "DEMO_CONTEXT_WINDOW",
    "MODEL_AUTH",
    "MODEL_BAD_REQUEST",
    "MODEL_BAD_RESPONSE",
    "MODEL_ERROR_CODES",
    "MODEL_HTTP_ERROR",
    "MODEL_STREAM_DROPPED",
    "MODEL_TIMEOUT",
    "MODEL_UNREACHABLE",
    "ChatModel",
    "DemoModel",
    "ModelError",
    "OpenAIChatModel",
    "known_context_window",
]
