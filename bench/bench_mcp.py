"""Benchmark: `sessionref mcp` as an MCP host sees it, over stdio with the SDK's own client.

* cold `initialize`: a fresh server process each time, from spawn to the `initialize` answer
  (what every agent session pays at its start; the issue's target: ≤ 0.4 s);
* at `--sessions` (100,000) sessions (bench_discovery's generator, indexed once and kept under
  `--root`): `list_sessions` p99 (queries typed as agents do: empty, a word, a folder) and
  `search_conversations` p99 (questions made of the corpus' words), each call timed at the client;
* `get_snapshot` of a 2,000-message session in the same store.

The first call of each kind opens the store and builds the conversation index (once per root;
not timed). Run: `.venv/bin/python bench/bench_mcp.py [--sessions 100000] [--root DIR]`.
Prints markdown tables and the load average (on a shared machine, times depend on it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_discovery import WORDS
from bench_loop_stall import prepared_root
from bench_report import markdown_table, percentile

LONG_ID = "bench-long-2000"
LONG_MESSAGES = 2_000
TARGETS = {"initialize": 400.0, "list_sessions": 20.0, "search_conversations": 50.0, "get_snapshot": 100.0}


def add_long_session(store_root: Path) -> None:
    """The 2,000-message session, written once through the store API."""
    from sessionref.store import open_store

    store = open_store(store_root)
    try:
        if store.records_with_titles([LONG_ID]):
            return
        store.create_session(cwd="/home/dev/proj-1", session_id=LONG_ID, created_at=1_790_000_000_000)
        rng = random.Random(2000)
        events = []
        for number in range(LONG_MESSAGES):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(20, 80)))
            content = [{"type": "text", "text": text}]
            if number % 2 == 0:
                data = {"source": {"kind": "user"}, "content": content, "role": "user", "id": f"u{number}"}
                events.append({"type": "user/message", "data": data, "surfaceOp": "append"})
            else:
                message = {
                    "id": f"a{number}",
                    "role": "assistant",
                    "content": content,
                    "source": {"kind": "model", "provider": "demo", "model": "demo"},
                }
                data = {"turn": number, "step": 1, "message": message}
                events.append({"type": "assistant/message", "data": data, "surfaceOp": "append"})
        store.append(LONG_ID, events, time_ms=1_790_000_000_000)
    finally:
        store.close()


def server_parameters(store_root: Path) -> Any:
    from mcp.client.stdio import StdioServerParameters

    repository = Path(__file__).resolve().parents[1]
    path = os.pathsep.join([str(repository / "core"), str(repository / "tui")])
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "sessionref_tui.cli", "mcp", "--store", str(store_root), "--sources", "none"],
        env={"PYTHONPATH": path},
        cwd="/",
    )


async def cold_initialize(store_root: Path, rounds: int) -> list[float]:
    """Milliseconds from spawning a server to its `initialize` answer, `rounds` times."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        async with (
            stdio_client(server_parameters(store_root)) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            times.append((time.perf_counter() - started) * 1000)
    return times


async def timed(session: Any, name: str, arguments: dict[str, Any]) -> float:
    started = time.perf_counter()
    result = await session.call_tool(name, arguments)
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error:
        raise SystemExit(f"{name} failed: {result.content[0].text}")
    return elapsed


async def warm_calls(store_root: Path, calls: int) -> dict[str, list[float]]:
    """Client-side milliseconds of each tool on one running server (after one untimed call each)."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    rng = random.Random(17)
    listings = [{"query": ""}, {"query": "proj-1"}] + [{"query": rng.choice(WORDS)} for _ in range(8)]
    questions = [
        f"what did we decide about {rng.choice(WORDS)} {rng.choice(WORDS)} for the {rng.choice(WORDS)}?"
        for _ in range(calls)
    ]
    samples: dict[str, list[float]] = {"list_sessions": [], "search_conversations": [], "get_snapshot": []}
    async with (
        stdio_client(server_parameters(store_root)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        started = time.perf_counter()
        await timed(session, "list_sessions", {})
        await timed(session, "search_conversations", {"query": questions[0]})
        print(
            f"store opened and conversation index caught up in {time.perf_counter() - started:.1f} s",
            file=sys.stderr,
        )
        await timed(session, "get_snapshot", {"session": LONG_ID})
        for number in range(calls):
            samples["list_sessions"].append(
                await timed(session, "list_sessions", {**listings[number % 10], "limit": 20})
            )
        for question in questions:
            samples["search_conversations"].append(
                await timed(session, "search_conversations", {"query": question})
            )
        for _ in range(max(10, calls // 10)):
            samples["get_snapshot"].append(await timed(session, "get_snapshot", {"session": LONG_ID}))
    return samples


def row(name: str, samples: list[float], note: str) -> dict[str, str]:
    p99 = percentile(samples, 0.99)
    return {
        "call": name,
        "what": note,
        "calls": str(len(samples)),
        "p50 (ms)": f"{percentile(samples, 0.5):.1f}",
        "p99 (ms)": f"{p99:.1f}",
        "target (ms)": f"≤ {TARGETS[name]:.0f}",
        "met": "yes" if p99 <= TARGETS[name] else "no",
    }


def main() -> None:
    """Build (once), measure, print the tables."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--root", type=Path, default=Path(tempfile.gettempdir()) / "sessionref-bench-stall")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--cold", type=int, default=10, help="cold starts to time")
    args = parser.parse_args()
    store_root = prepared_root(args.root, args.sessions)
    add_long_session(store_root)
    cold = asyncio.run(cold_initialize(store_root, args.cold))
    warm = asyncio.run(warm_calls(store_root, args.calls))
    rows = [
        row("initialize", cold, "cold process: spawn → initialize answered"),
        row("list_sessions", warm["list_sessions"], f"{args.sessions:,} sessions, limit 20"),
        row("search_conversations", warm["search_conversations"], "questions, question mode"),
        row("get_snapshot", warm["get_snapshot"], f"{LONG_MESSAGES:,}-message session, default budget"),
    ]
    print(markdown_table(rows))
    print(
        f"\nload average: {' '.join(f'{value:.2f}' for value in os.getloadavg())} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
