"""The pre-step middleware chain: order, prepend/append, once, next() semantics."""

from __future__ import annotations

from typing import Any

import pytest
from sessionref.agent import Enter, PreStepContext, Reject, make_user_message
from sessionref.agent.prestep import PreStepChain


def context(*texts: str) -> PreStepContext:
    return PreStepContext(agent=None, messages=tuple(make_user_message(t) for t in texts), turn=1, step=1)  # type: ignore[arg-type]


def texts(decision: Any) -> list[str]:
    assert isinstance(decision, Enter)
    return [message["content"][0]["text"] for message in decision.messages]


def tracer(name: str, calls: list[str]) -> Any:
    async def listener(ctx: PreStepContext, next_decision: Any) -> Any:
        calls.append(f"{name}:in")
        decision = await next_decision()
        calls.append(f"{name}:out")
        return decision

    return listener


async def test_empty_chain_enters_the_claimed_batch() -> None:
    decision = await PreStepChain().decide(context("a", "b"))
    assert texts(decision) == ["a", "b"]


async def test_outermost_first_with_prepend_and_append() -> None:
    chain = PreStepChain()
    calls: list[str] = []
    chain.add(tracer("middle", calls))
    chain.add(tracer("inner", calls))
    chain.add(tracer("outer", calls), prepend=True)
    await chain.decide(context("a"))
    assert calls == ["outer:in", "middle:in", "inner:in", "inner:out", "middle:out", "outer:out"]


async def test_outer_listener_sees_and_changes_the_downstream_decision() -> None:
    chain = PreStepChain()

    async def inner(ctx: PreStepContext, next_decision: Any) -> Any:
        decision = await next_decision()
        return Enter([*decision.messages, make_user_message("added")])

    async def outer(ctx: PreStepContext, next_decision: Any) -> Any:
        decision = await next_decision()
        assert texts(decision) == ["a", "added"]
        return Reject("outer says no")

    chain.add(inner)
    chain.add(outer, prepend=True)
    assert await chain.decide(context("a")) == Reject("outer says no")


async def test_short_circuit_skips_downstream_listeners() -> None:
    chain = PreStepChain()
    calls: list[str] = []

    async def stop(ctx: PreStepContext, next_decision: Any) -> Any:
        return Reject()

    chain.add(stop)
    chain.add(tracer("never", calls))
    decision = await chain.decide(context("a"))
    assert isinstance(decision, Reject)
    assert decision.kind == "reject"
    assert calls == []


async def test_once_listener_runs_one_time_and_remover_is_idempotent() -> None:
    chain = PreStepChain()
    calls: list[str] = []
    chain.add(tracer("once", calls), once=True)
    remove = chain.add(tracer("always", calls))
    await chain.decide(context("a"))
    await chain.decide(context("a"))
    assert calls.count("once:in") == 1
    assert calls.count("always:in") == 2
    remove()
    remove()
    assert len(chain) == 0


async def test_listener_removed_during_the_chain_is_skipped() -> None:
    chain = PreStepChain()
    calls: list[str] = []
    removers: list[Any] = []

    async def remove_next(ctx: PreStepContext, next_decision: Any) -> Any:
        removers[0]()
        return await next_decision()

    chain.add(remove_next)
    removers.append(chain.add(tracer("removed", calls)))
    assert texts(await chain.decide(context("a"))) == ["a"]
    assert calls == []


async def test_next_runs_downstream_once() -> None:
    chain = PreStepChain()
    calls: list[str] = []

    async def twice(ctx: PreStepContext, next_decision: Any) -> Any:
        first = await next_decision()
        second = await next_decision()
        assert first is second
        return first

    chain.add(twice)
    chain.add(tracer("inner", calls))
    await chain.decide(context("a"))
    assert calls == ["inner:in", "inner:out"]


async def test_listener_returning_something_else_is_a_type_error() -> None:
    chain = PreStepChain()

    async def wrong(ctx: PreStepContext, next_decision: Any) -> Any:
        return {"kind": "enter"}

    chain.add(wrong)
    with pytest.raises(TypeError):
        await chain.decide(context("a"))
