"""Pre-step decisions and the ordered middleware chain that produces them.

Before each step the claimed batch runs through the registered listeners, outermost first. A
listener receives the context and a ``next`` callable; awaiting ``next()`` yields the decision of
everything downstream (the innermost default is ``Enter(batch)``). A listener may return that
decision, change it, or decide on its own without calling ``next``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from sessionref.agent.agent import Agent


@dataclass(frozen=True, slots=True)
class Enter:
    """Enter a step with ``messages``: each is logged as a ``user/message`` in this order."""

    messages: list[dict[str, Any]]
    kind: Literal["enter"] = field(default="enter", init=False)


@dataclass(frozen=True, slots=True)
class Reject:
    """Do not enter the step: the claimed batch is discarded and the turn ends as ``rejected``."""

    reason: str = "rejected"
    kind: Literal["reject"] = field(default="reject", init=False)


PreStepDecision = Enter | Reject


@dataclass(frozen=True, slots=True)
class PreStepContext:
    """What a pre-step listener sees: the agent, the claimed batch (read-only), turn and step numbers."""

    agent: Agent
    messages: tuple[dict[str, Any], ...]
    turn: int
    step: int


NextDecision = Callable[[], Awaitable[PreStepDecision]]
PreStepListener = Callable[[PreStepContext, NextDecision], Awaitable[PreStepDecision]]


@dataclass(eq=False, slots=True)
class _Entry:
    listener: PreStepListener
    once: bool
    active: bool = True


class PreStepChain:
    """An ordered list of pre-step listeners; ``prepend`` puts a listener outermost."""

    def __init__(self) -> None:
        self._entries: list[_Entry] = []

    def __len__(self) -> int:
        return len(self._entries)

    def add(
        self, listener: PreStepListener, *, prepend: bool = False, once: bool = False
    ) -> Callable[[], None]:
        """Register ``listener``; the returned function removes it (calling it twice is harmless).

        A ``once`` listener is removed as soon as it is invoked for the first time.
        """
        entry = _Entry(listener, once)
        if prepend:
            self._entries.insert(0, entry)
        else:
            self._entries.append(entry)

        def remove() -> None:
            self._drop(entry)

        return remove

    def _drop(self, entry: _Entry) -> None:
        entry.active = False
        if entry in self._entries:
            self._entries.remove(entry)

    async def decide(self, context: PreStepContext) -> PreStepDecision:
        """Run the chain over ``context`` and return the outermost listener's decision.

        The listeners are those registered when the call starts; one removed before its turn in
        the chain is skipped. ``next()`` runs the downstream part at most once (a second call
        returns the same decision). A listener returning anything but Enter or Reject raises
        TypeError.
        """
        entries = list(self._entries)

        async def run_from(index: int) -> PreStepDecision:
            while index < len(entries) and not entries[index].active:
                index += 1
            if index == len(entries):
                return Enter(list(context.messages))
            entry = entries[index]
            if entry.once:
                self._drop(entry)
            decision = await entry.listener(context, _memoized(lambda: run_from(index + 1)))
            if not isinstance(decision, Enter | Reject):
                raise TypeError(f"pre-step listener returned {type(decision).__name__}, not Enter or Reject")
            return decision

        return await run_from(0)


def _memoized(run: Callable[[], Awaitable[PreStepDecision]]) -> NextDecision:
    """Wrap ``run`` so the downstream chain executes once however often ``next()`` is awaited."""
    state: dict[str, PreStepDecision] = {}
    started = False

    async def next_decision() -> PreStepDecision:
        nonlocal started
        if "decision" in state:
            return state["decision"]
        if started:
            raise RuntimeError("next() awaited again while the downstream chain is still deciding")
        started = True
        state["decision"] = await run()
        return state["decision"]

    return next_decision
