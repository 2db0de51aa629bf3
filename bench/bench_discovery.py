"""Benchmark: `@` candidate search per keystroke over stores of 1k, 10k and 100k sessions.

Builds each store by writing DSH-layout logs directly (header, a direct prompt, its fallback
title, sometimes a rename, an assistant reply), then measures:

* first-open indexing time (`open_store` on a root with no index yet);
* `SessionReferences(store).list_candidates` latency per keystroke, typing several queries one
  character at a time (lengths 0-12; some match, some do not): p50 / p99 in ms; then the same
  with close title matches after the exact ones (`fuzzy=True`, as the app and `sessions` ask);
* the naive approach (read every log for its latest title, then filter) per keystroke; at 100k it
  is timed on a sample of logs and extrapolated linearly (said so in the table);
* incremental catch-up: 1,000 logs grown outside the store, then `store.refresh()`;
* re-opening the indexed store: in full (`open_store`, which walks and stats every log) and from
  the index alone (`open_store(catch_up=False)`, as the TUI does before its background `refresh()`).

First indexing scans new folders with helper processes on the other cores (`first_scan`);
`--serial-first-scan` measures it in one process, for comparison. The machine's load average is
printed with the table: on a shared machine, wall times depend on it.

Run: `.venv/bin/python bench/bench_discovery.py [--sizes 1000,10000,100000]`. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from bench_report import markdown_table, percentile
from sessionref.service.candidates import matches_needle, workspace_rank
from sessionref.service.references import SessionReferences
from sessionref.store.layout import encode_session_segment, project_key
from sessionref.store.logfile import parse_log
from sessionref.store.store import SessionStore, open_store

WORDS = [
    "fix",
    "parser",
    "crash",
    "store",
    "index",
    "title",
    "compaction",
    "session",
    "reference",
    "picker",
    "mention",
    "budget",
    "retention",
    "refactor",
    "async",
    "agent",
    "model",
    "stream",
    "delta",
    "chunk",
    "layout",
    "escape",
    "unicode",
    "terminal",
    "render",
    "popup",
    "search",
    "benchmark",
    "latency",
    "sqlite",
    "migrate",
    "schema",
    "config",
    "loader",
    "cli",
    "repl",
    "textual",
    "widget",
    "composer",
    "preview",
]
QUERIES = [
    "fix parser crash",
    "compaction budg",
    "/home/dev/proj-1",
    "zzz-no-match-q",
    "a1b2c3",
    "widget pre",
    "ÜNICODE",
]
NAIVE_SAMPLE = 2_000


@dataclass(frozen=True)
class Agent:
    """The requesting session: its id and cwd."""

    id: str
    cwd: str | None


def _line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def build_root(root: Path, count: int, rng: random.Random) -> list[Path]:
    """Write `count` DSH-layout logs under `root`; returns their paths."""
    cwds = [f"/home/dev/proj-{n}" for n in range(max(4, count // 500))]
    paths: list[Path] = []
    now = 1_790_000_000_000
    for _ in range(count):
        session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        cwd = None if rng.random() < 0.1 else rng.choice(cwds)
        created = now - rng.randrange(365 * 86_400_000)
        header = {"type": "session", "version": 0, "id": session_id, "createdAt": created}
        if cwd is not None:
            header["cwd"] = cwd
        header["delegationDepth"] = 0
        prompt = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(4, 14)))
        message = {
            "source": {"kind": "user"},
            "content": [{"type": "text", "text": prompt}],
            "role": "user",
            "id": "m",
        }
        events = [
            {"type": "turn/start", "seq": 0, "time": created, "data": {"turn": 1}},
            {"type": "user/message", "seq": 1, "time": created, "data": message, "surfaceOp": "append"},
            {
                "type": "session/title",
                "seq": 2,
                "time": created,
                "data": {
                    "title": " ".join(prompt.split()[:5]),
                    "messageSeqs": [1],
                    "source": {"kind": "fallback"},
                },
            },
            {
                "type": "assistant/message",
                "seq": 3,
                "time": created,
                "data": {
                    "turn": 1,
                    "step": 1,
                    "message": {
                        "id": "a",
                        "role": "assistant",
                        "content": [{"type": "text", "text": "ok " * 20}],
                        "source": {"kind": "model", "provider": "demo", "model": "demo"},
                    },
                },
                "surfaceOp": "append",
            },
        ]
        if rng.random() < 0.2:
            title = " ".join(rng.choice(WORDS) for _ in range(3)).title()
            events.append(
                {
                    "type": "session/title",
                    "seq": 4,
                    "time": created,
                    "data": {"title": title, "messageSeqs": [], "source": {"kind": "user"}},
                }
            )
        folder = root / project_key(cwd) / encode_session_segment(session_id)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "session.jsonl"
        path.write_text("\n".join(_line(r) for r in [header, *events]) + "\n", "utf-8")
        paths.append(path)
    return paths


def keystrokes() -> list[str]:
    """Every prefix (length 0..12) of every query."""
    return [query[:length] for query in QUERIES for length in range(13) if length <= len(query)]


async def time_fast(
    store: SessionStore, agent: Agent, *, fuzzy: bool = False
) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU milliseconds per keystroke through the reference service (store fast path);
    with `fuzzy`, as the app and `sessions` ask (close title matches after the exact ones).

    CPU time (`time.thread_time`) is reported beside wall time because on a loaded machine the
    wall-clock tail is dominated by the scheduler, not by the search.
    """
    service = SessionReferences(store)
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(3):
        for text in keystrokes():
            start, start_cpu = time.perf_counter(), time.thread_time()
            await service.list_candidates(agent, text, fuzzy=fuzzy)
            cpu.append((time.thread_time() - start_cpu) * 1000)
            wall.append((time.perf_counter() - start) * 1000)
    return wall, cpu


def naive_keystroke(paths: list[Path], agent: Agent, text: str, limit: int = 50) -> int:
    """One keystroke the naive way: read every log for header and latest title, then rank and filter."""
    needle = text.lower()
    rows = []
    for path in paths:
        header, events = parse_log(path.read_bytes())
        titles = [e["data"]["title"] for e in events if e["type"] == "session/title"]
        label = titles[-1] if titles else header["id"]
        rows.append((header["createdAt"], header["id"], header.get("cwd"), label))
    rows.sort(key=lambda row: (-row[0], row[1]))
    ranked = sorted((r for r in rows if r[1] != agent.id), key=lambda r: workspace_rank(r[2], agent.cwd))
    found = [r for r in ranked if not needle or matches_needle(needle, r[1], r[2], r[3])]
    return len(found[:limit])


def time_naive(paths: list[Path], agent: Agent, rng: random.Random) -> tuple[list[float], str]:
    """Milliseconds per keystroke for the naive approach (sampled and extrapolated for big stores)."""
    sample = paths if len(paths) <= NAIVE_SAMPLE else rng.sample(paths, NAIVE_SAMPLE)
    scale = len(paths) / len(sample)
    strokes = keystrokes()[::3] if len(paths) > NAIVE_SAMPLE else keystrokes()
    samples = []
    for text in strokes:
        start = time.perf_counter()
        naive_keystroke(sample, agent, text)
        samples.append((time.perf_counter() - start) * 1000 * scale)
    note = f"extrapolated from {len(sample):,} logs" if scale > 1 else "measured"
    return samples, note


def grow(paths: list[Path], count: int, rng: random.Random) -> None:
    """Append one rename event to `count` logs, as another process would."""
    for path in rng.sample(paths, min(count, len(paths))):
        with open(path, "a", encoding="utf-8") as file:
            file.write(
                _line(
                    {
                        "type": "session/title",
                        "seq": 9,
                        "time": 1,
                        "data": {
                            "title": "grown " + rng.choice(WORDS),
                            "messageSeqs": [],
                            "source": {"kind": "user"},
                        },
                    }
                )
                + "\n"
            )


async def run_size(count: int, base: Path) -> dict[str, str]:
    """All measurements for one store size."""
    rng = random.Random(count)
    root = base / f"store-{count}"
    start = time.perf_counter()
    paths = build_root(root, count, rng)
    build_s = time.perf_counter() - start
    start, start_cpu = time.perf_counter(), time.process_time()
    store = open_store(root)
    index_s, index_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    agent = Agent(id="not-a-session", cwd="/home/dev/proj-1")
    fast, fast_cpu = await time_fast(store, agent)
    close, close_cpu = await time_fast(store, agent, fuzzy=True)
    naive, note = time_naive(paths, agent, rng)
    grow(paths, 1_000, rng)
    start, start_cpu = time.perf_counter(), time.process_time()
    store.refresh()
    catch_up_s, catch_up_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    store.close()
    start, start_cpu = time.perf_counter(), time.process_time()
    open_store(root).close()
    reopen_s, reopen_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    start, start_cpu = time.perf_counter(), time.process_time()
    open_store(root, catch_up=False).close()
    lazy_s, lazy_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    fast_p50, fast_p99 = percentile(fast, 0.5), percentile(fast, 0.99)
    naive_p50 = percentile(naive, 0.5)
    return {
        "sessions": f"{count:,}",
        "write logs (s)": f"{build_s:.1f}",
        "first open, indexing (s, wall / CPU)": f"{index_s:.2f} / {index_cpu:.2f}",
        "reopen (s, wall / CPU)": f"{reopen_s:.2f} / {reopen_cpu:.2f}",
        "reopen from the index, no walk (s, wall / CPU)": f"{lazy_s:.2f} / {lazy_cpu:.2f}",
        "catch-up, 1,000 grown (s, wall / CPU)": f"{catch_up_s:.2f} / {catch_up_cpu:.2f}",
        "keystroke p50 (ms)": f"{fast_p50:.3f}",
        "keystroke p99 (ms)": f"{fast_p99:.3f}",
        "keystroke CPU p99 (ms)": f"{percentile(fast_cpu, 0.99):.3f}",
        "with close matches p50 / p99 (ms)": f"{percentile(close, 0.5):.3f} / {percentile(close, 0.99):.3f}",
        "with close matches CPU p99 (ms)": f"{percentile(close_cpu, 0.99):.3f}",
        "naive p50 (ms)": f"{naive_p50:.0f} ({note})",
        "speed-up at p50": f"{naive_p50 / max(fast_p50, 1e-6):,.0f}×",
        "speed-up at p99": f"{percentile(naive, 0.99) / max(fast_p99, 1e-6):,.0f}×",
    }


def main() -> None:
    """Run the benchmark for the requested sizes and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--keep", action="store_true", help="keep the generated stores")
    parser.add_argument("--serial-first-scan", action="store_true", help="index without helper processes")
    args = parser.parse_args()
    try:
        from sessionref.store import first_scan
    except ImportError:  # code from before helper processes (this script also measures it)
        first_scan = None
    if args.serial_first_scan and first_scan is not None:
        first_scan.PARALLEL_MIN_FOLDERS = 1 << 62
    load_before = os.getloadavg()
    base = Path(tempfile.mkdtemp(prefix="sessionref-bench-"))
    try:
        rows = [asyncio.run(run_size(int(size), base)) for size in args.sizes.split(",")]
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(markdown_table(rows))
    print(
        f"\n{len(keystrokes())} keystrokes × 3 rounds per size via SessionReferences(store).list_candidates "
        f"(store.search_candidates fast path), limit 50, queries typed one character at a time: {QUERIES}"
    )
    helpers = 0 if args.serial_first_scan or first_scan is None else first_scan.helper_count()
    load = os.getloadavg()
    print(
        f"First indexing with {helpers} helper process(es); CPU is this process's only. Load average "
        f"{load_before[0]:.2f} before, {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} after, "
        f"on {os.cpu_count()} cores."
    )


if __name__ == "__main__":
    main()
