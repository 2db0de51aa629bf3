"""Chat models: the offline demo model and an OpenAI-compatible streaming model.

Names load on first use, so `sessionref.models.base` (the protocol, the error type and the
defaults) can be imported without loading httpx or pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessionref.lazy_exports import lazy_exports

_PUBLIC: dict[str, tuple[str, ...]] = {
    "sessionref.models.base": (
        "DEFAULT_BASE_URL",
        "DEFAULT_DEADLINE",
        "DEFAULT_DEMO_PACE",
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
        "ModelError",
    ),
    "sessionref.models.demo": ("DEMO_CONTEXT_WINDOW", "DemoModel"),
    "sessionref.models.openai": ("OpenAIChatModel", "known_context_window"),
    "sessionref.models.openai_stream": (
        "MAX_REDIRECTS",
        "MAX_REPLY_BYTES",
        "MAX_SSE_LINE_BYTES",
        "StreamLimits",
    ),
}

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_DEADLINE",
    "DEFAULT_DEMO_PACE",
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

if TYPE_CHECKING:  # pragma: no cover
    from sessionref.models.base import (
        DEFAULT_BASE_URL,
        DEFAULT_DEADLINE,
        DEFAULT_DEMO_PACE,
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
    from sessionref.models.openai import OpenAIChatModel, known_context_window
    from sessionref.models.openai_stream import (
        MAX_REDIRECTS,
        MAX_REPLY_BYTES,
        MAX_SSE_LINE_BYTES,
        StreamLimits,
    )


__getattr__, __dir__ = lazy_exports(__name__, _PUBLIC, globals())
