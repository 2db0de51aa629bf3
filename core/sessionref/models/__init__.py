"""Chat models: the offline demo model and an OpenAI-compatible streaming model."""

from sessionref.models.base import (
    MODEL_AUTH,
    MODEL_BAD_REQUEST,
    MODEL_BAD_RESPONSE,
    MODEL_ERROR_CODES,
    MODEL_HTTP_ERROR,
    MODEL_REDIRECT,
    MODEL_STREAM_DROPPED,
    MODEL_STREAM_TOO_LARGE,
    MODEL_TIMEOUT,
    MODEL_UNREACHABLE,
    ChatModel,
    ModelError,
)
from sessionref.models.demo import DEMO_CONTEXT_WINDOW, DemoModel
from sessionref.models.openai import DEFAULT_BASE_URL, OpenAIChatModel, known_context_window
from sessionref.models.openai_stream import (
    DEFAULT_DEADLINE,
    MAX_REDIRECTS,
    MAX_REPLY_BYTES,
    MAX_SSE_LINE_BYTES,
    StreamLimits,
)

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_DEADLINE",
    "DEMO_CONTEXT_WINDOW",
    "MAX_REDIRECTS",
    "MAX_REPLY_BYTES",
    "MAX_SSE_LINE_BYTES",
    "MODEL_AUTH",
    "MODEL_BAD_REQUEST",
    "MODEL_BAD_RESPONSE",
    "MODEL_ERROR_CODES",
    "MODEL_HTTP_ERROR",
    "MODEL_REDIRECT",
    "MODEL_STREAM_DROPPED",
    "MODEL_STREAM_TOO_LARGE",
    "MODEL_TIMEOUT",
    "MODEL_UNREACHABLE",
    "ChatModel",
    "DemoModel",
    "ModelError",
    "OpenAIChatModel",
    "StreamLimits",
    "known_context_window",
]
