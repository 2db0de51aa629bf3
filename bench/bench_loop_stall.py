"""Benchmark: the longest event-loop stall while a reply streams into a 100k-session store.

Opens a store of `--sessions` DSH-layout logs (written with `bench_discovery.build_root` and
indexed once, both kept under `--root` for later runs), then, through `Workspace` exactly as the
app does, sends messages that create a new session and stream replies into it:

* `demo`: the offline demo model at pace 0 (as fast as the loop allows), several turns;
* `fast stream`: a fake model streaming `--deltas` deltas 1 ms apart (a fast real model), so the
  agent writes dozens of chunk batches per turn.

The heap is frozen once the store is open, as the app does (`gc.freeze()`: a full collection
over the 100k-session catalogue otherwise pauses the loop for tens of ms). A ticker task sleeps
`TICK_SECONDS` over and over and records how late it wakes: that lateness is the time the loop
could not run anything else (a keystroke, a frame). The table gives the maximum
(the target is at most 4 ms), the p99 and p50 of those stalls, and how many appends the turns
made. A last row runs the ticker alone for `IDLE_SECONDS`: the noise floor of a shared machine.

Run: `.venv/bin/python bench/bench_loop_stall.py [--sessions 100000] [--root DIR]`. Uses only
APIs that exist before and after writes moved off the loop, so the same script measures both.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_discovery import build_root
from bench_report import markdown_table
from sessionref.host.workspace import Workspace
from sessionref.models.demo import DemoModel
from sessionref.store import open_store

TICK_SECONDS = 0.001
TARGET_MS = 4.0
TURNS = 5
IDLE_SECONDS = 4.0


class FastStreamModel:
    """Streams `deltas` short words, `gap` seconds apart (1 ms: a fast model over the network)."""

    name = "fast stream"
    provider = "bench"
    model = "fast-stream"
    context_window: int | None = 32_768

    def __init__(self, deltas: int, gap: float = 0.001) -> None:
        self.deltas = deltas
        self.gap = gap

    async def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        for index in range(self.deltas):
            await asyncio.sleep(self.gap)
            yield f"w{index} "

    async def summarize(self, messages: list[dict[str, Any]]) -> str:
        return "summary"

    async def aclose(self) -> None:
        """Nothing to release (the `ChatModel` port: `Workspace.close` closes its model)."""


class Ticker:
    """Measures how late a task that sleeps `TICK_SECONDS` at a time wakes up."""

    def __init__(self) -> None:
        self.stalls: list[float] = []
        self._running = True

    async def run(self) -> None:
        while self._running:
            start = time.perf_counter()
            await asyncio.sleep(TICK_SECONDS)
            self.stalls.append((time.perf_counter() - start - TICK_SECONDS) * 1000)

    def stop(self) -> None:
        self._running = False


def prepared_root(root: Path, sessions: int) -> Path:
    """A store of `sessions` logs under `root`, indexed once (reused when it is already there)."""
    store_root = root / f"store-{sessions}"
    if not (store_root / ".sessionref-index.sqlite").exists():
        print(f"writing and indexing {sessions:,} sessions under {store_root} (once)...", file=sys.stderr)
        build_root(store_root, sessions, random.Random(sessions))
        open_store(store_root).close()
    return store_root


async def measure(store_root: Path, model: Any, turns: int) -> dict[str, str]:
    """Stream `turns` replies from `model` into a new session of the store; loop stalls meanwhile."""
    store = await asyncio.to_thread(open_store, store_root, catch_up=False)
    gc.freeze()  # as the app does once the store is open (sessionref_tui.opening.freeze_heap)
    workspace = Workspace(store, model, cwd="/home/dev/proj-1")
    appends = 0

    def count(session_id: str, events: list[dict[str, Any]]) -> None:
        nonlocal appends
        appends += 1

    unsubscribe = store.subscribe(count)
    ticker = Ticker()
    ticking = asyncio.ensure_future(ticker.run())
    await asyncio.sleep(0.05)  # the ticker settles in
    ticker.stalls.clear()
    started = time.perf_counter()
    target: Any = workspace.draft_session()
    for turn in range(turns):
        result = await workspace.submit(target, f"question {turn}: what changed in the parser?")
        target = result.agent
        await result.agent.wait_idle()
    elapsed = time.perf_counter() - started
    await asyncio.sleep(0.05)  # listener calls still on their way
    ticker.stop()
    await ticking
    unsubscribe()
    await workspace.close(close_store=False)
    await asyncio.to_thread(store.close)
    return _row(model.name, str(turns), f"{appends:,}", elapsed, ticker.stalls)


async def measure_idle(seconds: float) -> dict[str, str]:
    """The same ticker with nothing else running: the machine's own scheduling noise."""
    ticker = Ticker()
    ticking = asyncio.ensure_future(ticker.run())
    await asyncio.sleep(seconds)
    ticker.stop()
    await ticking
    return _row("(nothing: ticker alone)", "-", "-", seconds, ticker.stalls)


def _row(model: str, turns: str, appends: str, elapsed: float, samples: list[float]) -> dict[str, str]:
    stalls = sorted(samples)
    worst = stalls[-1]
    return {
        "model": model,
        "turns": turns,
        "appends": appends,
        "wall (s)": f"{elapsed:.2f}",
        "ticks": f"{len(stalls):,}",
        "max stall (ms)": f"{worst:.1f}",
        "p99 stall (ms)": f"{stalls[int(0.99 * (len(stalls) - 1))]:.2f}",
        "p50 stall (ms)": f"{statistics.median(stalls):.2f}",
        f"≤ {TARGET_MS:g} ms": "yes" if worst <= TARGET_MS else "no",
    }


def main() -> None:
    """Run both models against the store and print a markdown table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--root", type=Path, default=Path(tempfile.gettempdir()) / "sessionref-bench-stall")
    parser.add_argument("--deltas", type=int, default=2_000)
    parser.add_argument("--label", default="", help="a name for this run (e.g. before/after)")
    args = parser.parse_args()
    store_root = prepared_root(args.root, args.sessions)
    rows = [
        asyncio.run(measure(store_root, DemoModel(pace=0), TURNS)),
        asyncio.run(measure(store_root, FastStreamModel(args.deltas), 2)),
        asyncio.run(measure_idle(IDLE_SECONDS)),
    ]
    load = os.getloadavg()
    print(markdown_table(rows))
    print(
        f"\n{args.label + ': ' if args.label else ''}{args.sessions:,} sessions; ticker every "
        f"{TICK_SECONDS * 1000:g} ms; load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} "
        f"on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
