"""Who hears about appended events, and on which thread.

Writes run on worker threads (`lanes`), but a UI reacts on its own event loop. A listener
subscribed while a loop runs is therefore called on that loop (the call hops over with
`call_soon_threadsafe`, so calls keep the order of the writes); one subscribed without a loop is
called in whichever thread wrote. A listener unsubscribed while a call to it is on its way is not
called, and one that raises is logged without disturbing the writer or the other listeners.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("sessionref.store")

Listener = Callable[[str, list[dict[str, Any]]], None]
"""`listener(session_id, new_events)`."""


@dataclass(frozen=True, eq=False, slots=True)
class _Subscription:
    listener: Listener
    loop: asyncio.AbstractEventLoop | None


class Subscribers:
    """The store's listeners (see the module doc). Thread-safe."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._subscriptions: list[_Subscription] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add `listener`, bound to the running event loop if there is one; returns its remover."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        subscription = _Subscription(listener, loop)
        with self._guard:
            self._subscriptions.append(subscription)

        def unsubscribe() -> None:
            with self._guard:
                if subscription in self._subscriptions:
                    self._subscriptions.remove(subscription)

        return unsubscribe

    def notify(self, session_id: str, events: list[dict[str, Any]]) -> None:
        """Tell every listener about `events` (each on its own loop, or here)."""
        with self._guard:
            subscriptions = list(self._subscriptions)
        for subscription in subscriptions:
            if subscription.loop is None:
                self._call(subscription, session_id, events)
                continue
            try:
                subscription.loop.call_soon_threadsafe(self._call, subscription, session_id, events)
            except RuntimeError:  # its loop is closed: that subscriber is gone
                log.debug("not notifying a subscriber whose event loop is closed")

    def _call(self, subscription: _Subscription, session_id: str, events: list[dict[str, Any]]) -> None:
        with self._guard:
            subscribed = subscription in self._subscriptions
        if not subscribed:  # unsubscribed while the call hopped to its loop
            return
        try:
            subscription.listener(session_id, events)
        except Exception:
            log.exception("a store listener failed")
