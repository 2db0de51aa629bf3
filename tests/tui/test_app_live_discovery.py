"""Live discovery end to end: another process creates and grows sessions while the app runs."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

from app_factory import build_harness
from sessionref.host.live_discovery import LiveDiscovery
from sessionref_tui.widgets.sidebar import Sidebar
from textual.pilot import Pilot
from worker_wait import workers_done

WAIT = 60
"""Seconds to wait for an event before failing (a bound: the event ends the wait)."""

WRITER = r"""
import json, sys
from pathlib import Path
folder = Path(sys.argv[1])
for number, line in enumerate(sys.stdin):
    name, _, text = line.strip().partition(" ")
    if text.startswith("title:"):
        record = {"type": "custom-title", "customTitle": text[len("title:"):], "sessionId": name}
    else:
        record = {"type": "user", "uuid": f"{name}-{number}", "parentUuid": None, "cwd": sys.argv[2],
                  "timestamp": "2026-03-20T10:00:00.000Z", "message": {"role": "user", "content": text}}
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"{name}.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    print("wrote", flush=True)
"""
NATIVE = "5e551011-0000-4000-8000-0000000000e2"


class Writer:
    """A Claude Code writing its log in the next pane; `write` returns once the line is on disk."""

    def __init__(self, folder: Path, cwd: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(folder), cwd],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    async def write(self, text: str) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{NATIVE} {text}\n")
        self.process.stdin.flush()
        line = await asyncio.to_thread(self.process.stdout.readline)
        assert line.strip() == "wrote"

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=WAIT)


async def settle(pilot: Pilot[Any]) -> None:
    await pilot.pause()
    await workers_done(pilot.app)
    await pilot.pause()


async def test_a_session_started_in_the_next_pane_appears_in_the_sidebar_and_picker(tmp_path: Path) -> None:
    harness = build_harness(tmp_path / "store", histories=tmp_path / "agents")
    project = tmp_path / "agents" / "claude" / "projects" / "-home-ana-live"
    writer = Writer(project, "/home/ana/live")
    try:
        async with harness.app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            live: LiveDiscovery = pilot.app.workspace.watch_changes(
                lambda: None
            )  # the app's, already running
            assert await asyncio.to_thread(live.ready.wait, WAIT)
            redrawn = asyncio.Event()
            chat = pilot.app.chat
            show = chat.show_caught_up

            def shown() -> None:
                show()
                redrawn.set()

            chat.show_caught_up = shown  # type: ignore[method-assign]

            async def sidebar_after(text: str) -> list[str | None]:
                redrawn.clear()
                await writer.write(text)
                expected = text.removeprefix("title:")
                titles: list[str | None] = []
                while expected not in titles:  # each redraw is an event; a busy writer may need two
                    await asyncio.wait_for(redrawn.wait(), WAIT)
                    redrawn.clear()
                    await settle(pilot)
                    titles = [entry.title for entry in pilot.app.query_one(Sidebar).entries]
                return titles

            assert "Tail the deploy log" in await sidebar_after("Tail the deploy log")
            assert "Deploy tail" in await sidebar_after("title:Deploy tail")  # the session grew: renamed
            await pilot.press("@", *"deploy")
            await settle(pilot)
            popup = pilot.app.query_one("MentionPopup")
            assert [row.label for row in popup.candidate_list._rows][:1] == ["Deploy tail"]  # type: ignore[attr-defined]
    finally:
        writer.close()
