"""Which chat model a host talks to, chosen from its settings.

Kept apart from `settings` so that reading settings never loads an HTTP client.
"""

from __future__ import annotations

from sessionref.host.settings import Settings
from sessionref.models.base import ChatModel


def build_model(settings: Settings) -> ChatModel:
    """The OpenAI-compatible model when an API key is configured, else the offline demo model."""
    chosen = settings.model
    if chosen.api_key is not None:
        from sessionref.models.openai import OpenAIChatModel

        return OpenAIChatModel(
            base_url=chosen.base_url,
            model=chosen.model,
            api_key=chosen.api_key.get_secret_value(),
            context_window=chosen.context_window,
            timeout=chosen.timeout,
            deadline=chosen.deadline,
        )
    from sessionref.models.demo import DemoModel

    return DemoModel(pace=chosen.demo_pace)
