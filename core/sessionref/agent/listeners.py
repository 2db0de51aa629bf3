"""A small callback registry whose callbacks can never break the caller."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, ParamSpec

logger = logging.getLogger(__name__)

P = ParamSpec("P")


class Listeners(Generic[P]):
    """Callbacks called in registration order; one that raises is logged and the rest still run."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._callbacks: list[Callable[P, object]] = []

    def __len__(self) -> int:
        return len(self._callbacks)

    def add(self, callback: Callable[P, object]) -> Callable[[], None]:
        """Register ``callback``; the returned function unregisters it (calling it twice is harmless)."""
        token: list[Callable[P, object]] = [callback]
        self._callbacks.append(callback)

        def remove() -> None:
            if token:
                target = token.pop()
                for index, registered in enumerate(self._callbacks):
                    if registered is target:
                        del self._callbacks[index]
                        break

        return remove

    def emit(self, *args: P.args, **kwargs: P.kwargs) -> None:
        """Call every callback registered right now with the given arguments."""
        for callback in list(self._callbacks):
            try:
                callback(*args, **kwargs)
            except Exception:
                logger.exception("%s listener %r failed", self._name, callback)
