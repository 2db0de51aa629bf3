"""The agent's inbox: a ``next-turn`` and a ``next-step`` list, and the claim rule."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

InboxList = Literal["next-turn", "next-step"]


@dataclass
class Inbox:
    """Two FIFO lists of user messages waiting to be claimed by the step loop.

    ``claim`` takes the whole ``next-step`` list first and then, only at a turn boundary, one
    ``next-turn`` message. Claimed messages never return to the inbox.
    """

    next_turn: list[dict[str, Any]] = field(default_factory=list)
    next_step: list[dict[str, Any]] = field(default_factory=list)

    def push(self, target: InboxList, message: dict[str, Any]) -> None:
        """Append ``message`` at the tail of ``target``."""
        (self.next_turn if target == "next-turn" else self.next_step).append(message)

    def claim(self, *, turn_boundary: bool) -> list[dict[str, Any]]:
        """Remove and return the batch: all next-step items, then (at a turn boundary) one next-turn item."""
        batch = self.next_step
        self.next_step = []
        if turn_boundary and self.next_turn:
            batch.append(self.next_turn.pop(0))
        return batch

    def has_work(self) -> bool:
        """True when a new turn would claim something."""
        return bool(self.next_step or self.next_turn)

    def pending(self) -> list[tuple[InboxList, dict[str, Any]]]:
        """Every queued message with its list, in the order a fresh turn would claim them."""
        return [("next-step", m) for m in self.next_step] + [("next-turn", m) for m in self.next_turn]

    def remove(self, message_id: str) -> dict[str, Any] | None:
        """Remove the queued message with ``message_id`` and return it (None if it is not queued)."""
        for queue in (self.next_step, self.next_turn):
            for index, message in enumerate(queue):
                if message.get("id") == message_id:
                    return queue.pop(index)
        return None

    def clear(self) -> list[dict[str, Any]]:
        """Remove and return every queued message in claim order."""
        removed = [message for _, message in self.pending()]
        self.next_step = []
        self.next_turn = []
        return removed
