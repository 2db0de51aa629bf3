"""The app in interesting states, shared by the SVG snapshot tests and `scripts/screenshots.py`.

Each scenario builds a harness (seeded store, fixed clock, fixed ids) and a
`run_before` coroutine that drives it with Pilot and waits for every worker, so
the picture is the same on every run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app_factory import GatedModel, Harness, await_text_index, build_harness, session_id_for
from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref_tui.widgets.composer import Composer
from textual.pilot import Pilot
from worker_wait import workers_done

WIDE = (130, 36)
NARROW = (60, 30)
TERMINAL = (80, 24)
"""A default terminal: what a first-time user sees."""

RunBefore = Callable[[Pilot[Any]], Awaitable[None]]


@dataclass(frozen=True)
class Scenario:
    """A named picture: what it shows, its terminal size, and how to reach it."""

    name: str
    description: str
    size: tuple[int, int]
    build: Callable[[Path], tuple[Harness, RunBefore]]


def once_shown(
    build: Callable[[Path], tuple[Harness, RunBefore]],
) -> Callable[[Path], tuple[Harness, RunBefore]]:
    """`build`, whose `run_before` starts once the chat shows its first session: the chat is a screen
    of its own, mounted after the app, and a key pressed before it has focus would go nowhere."""

    def built(root: Path) -> tuple[Harness, RunBefore]:
        harness, run_before = build(root)

        async def shown_then(pilot: Pilot[Any]) -> None:
            await harness.app.chat.ready_event.wait()
            await run_before(pilot)

        return harness, shown_then

    return built


async def settle(pilot: Pilot[Any]) -> None:
    """Let every worker (lookup, preview, send) finish and the screen catch up."""
    await pilot.pause()
    await workers_done(pilot.app)
    await pilot.pause()


async def type_query(pilot: Pilot[Any], query: str) -> None:
    """Type `@query` and wait for the picker."""
    await pilot.press("@", *query)
    await settle(pilot)


async def send(pilot: Pilot[Any], text: str) -> None:
    """Type `text` and press Enter, then wait for the send to be queued."""
    await pilot.press(*text, "enter")
    await settle(pilot)


def popup_open(root: Path) -> tuple[Harness, RunBefore]:
    harness = build_harness(root)

    async def run_before(pilot: Pilot[Any]) -> None:
        await type_query(pilot, "")
        await pilot.press("down")
        await settle(pilot)

    return harness, run_before


def preview_long(root: Path) -> tuple[Harness, RunBefore]:
    harness = build_harness(root)

    async def run_before(pilot: Pilot[Any]) -> None:
        await type_query(pilot, "incident")

    return harness, run_before


def chips(root: Path) -> tuple[Harness, RunBefore]:
    harness = build_harness(root)

    async def run_before(pilot: Pilot[Any]) -> None:
        await type_query(pilot, "flaky")
        await pilot.press("tab")
        await type_query(pilot, "postgres")
        await pilot.press("tab", *"compare the two")
        await settle(pilot)

    return harness, run_before


def self_reference_error(root: Path) -> tuple[Harness, RunBefore]:
    harness = build_harness(root)

    async def run_before(pilot: Pilot[Any]) -> None:
        own = format_session_reference_mention(SessionReference(harness.current_id, "Try it"))
        pilot.app.query_one(Composer).value = f"{own} what did I say?"
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)

    return harness, run_before


def inspector_idle(root: Path) -> tuple[Harness, RunBefore]:
    harness = build_harness(root, show_inspector=True)

    async def run_before(pilot: Pilot[Any]) -> None:
        await type_query(pilot, "flaky")
        await pilot.press("tab")
        await send(pilot, "what fixed it?")
        await pilot.app.chat.agent.wait_idle()
        await settle(pilot)

    return harness, run_before


def inspector_running(root: Path) -> tuple[Harness, RunBefore]:
    model = GatedModel()
    harness = build_harness(root, model=model, show_inspector=True)

    async def run_before(pilot: Pilot[Any]) -> None:
        await send(pilot, "first question")
        await model.started.wait()
        await type_query(pilot, "flaky")
        await pilot.press("tab")
        await send(pilot, "and this one?")
        model.release.set()
        await pilot.app.chat.agent.wait_idle()
        await settle(pilot)

    return harness, run_before


def snapshot_expanded(root: Path) -> tuple[Harness, RunBefore]:
    harness = build_harness(root)

    async def run_before(pilot: Pilot[Any]) -> None:
        await type_query(pilot, "release")
        await pilot.press("tab")
        await send(pilot, "what is left?")
        await pilot.app.chat.agent.wait_idle()
        await settle(pilot)
        await pilot.click("CollapsibleTitle")
        await settle(pilot)

    return harness, run_before


def queued_while_replying(root: Path) -> tuple[Harness, RunBefore]:
    model = GatedModel()
    harness = build_harness(root, model=model)

    async def run_before(pilot: Pilot[Any]) -> None:
        await send(pilot, "first question")
        await model.started.wait()
        await type_query(pilot, "flaky")
        await pilot.press("tab")
        await send(pilot, "and this one?")
        await send(pilot, "also check the release checklist")

    return harness, run_before


def compaction_question(root: Path) -> tuple[Harness, RunBefore]:
    harness = build_harness(root, open_session="retry")

    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.press("f8")
        await settle(pilot)

    return harness, run_before


def popup_with_sources(root: Path) -> tuple[Harness, RunBefore]:
    harness = build_harness(root / "store", histories=root / "agents")

    async def run_before(pilot: Pilot[Any]) -> None:
        await type_query(pilot, "")
        await pilot.press("down")
        await settle(pilot)

    return harness, run_before


def narrow_popup(root: Path) -> tuple[Harness, RunBefore]:
    harness = build_harness(root)

    async def run_before(pilot: Pilot[Any]) -> None:
        await type_query(pilot, "")

    return harness, run_before


def said_in_conversation(root: Path) -> tuple[Harness, RunBefore]:
    harness = build_harness(root, text_search=True)

    async def run_before(pilot: Pilot[Any]) -> None:
        await await_text_index(pilot, harness)
        await type_query(pilot, "test")
        await pilot.press("down", "down")
        await settle(pilot)

    return harness, run_before


def hostile_narrow(root: Path) -> tuple[Harness, RunBefore]:
    harness = build_harness(root)

    async def run_before(pilot: Pilot[Any]) -> None:
        pilot.app.chat.open_session(session_id_for("hostile"))
        await settle(pilot)

    return harness, run_before


SCENARIOS: dict[str, Scenario] = {
    scenario.name: replace(scenario, build=once_shown(scenario.build))
    for scenario in (
        Scenario("popup", "The @ picker open, second row highlighted, with its preview", WIDE, popup_open),
        Scenario(
            "preview",
            "@incident: the long session's preview (kept / omitted under the budget)",
            WIDE,
            preview_long,
        ),
        Scenario("chips", "Two accepted mentions as chips in the draft", WIDE, chips),
        Scenario(
            "error",
            "A self reference: the draft stays, the error names the problem",
            WIDE,
            self_reference_error,
        ),
        Scenario(
            "inspector-idle",
            "Inspector after an idle send: snapshot right before the prompt",
            WIDE,
            inspector_idle,
        ),
        Scenario(
            "inspector-running",
            "Inspector after a send while replying: the same order",
            WIDE,
            inspector_running,
        ),
        Scenario(
            "snapshot-row",
            "The 'Referenced sessions' row expanded: stats and pretty JSON",
            WIDE,
            snapshot_expanded,
        ),
        Scenario(
            "queued",
            "Messages sent while the model replies wait as queued rows, chips included",
            WIDE,
            queued_while_replying,
        ),
        Scenario(
            "compact-confirm",
            "F8 (or the palette) asks before compacting and says what it does",
            WIDE,
            compaction_question,
        ),
        Scenario(
            "sources",
            "Sessions from other agents (CC, CX, GM, AG, GH, QW, OC) beside the store's own",
            WIDE,
            popup_with_sources,
        ),
        Scenario(
            "said",
            "@test: title matches, then what was said; a checkpoint's match previewed in context",
            WIDE,
            said_in_conversation,
        ),
        Scenario("narrow-popup", "The picker at 60 columns", NARROW, narrow_popup),
        Scenario(
            "terminal-popup",
            "An 80×24 terminal: no sidebar, the picker's rows without ids, the footer whole",
            TERMINAL,
            popup_with_sources,
        ),
        Scenario(
            "hostile-narrow", "Hostile title and text shown literally, 60 columns", NARROW, hostile_narrow
        ),
    )
}
