"""Benchmark: a store with Claude Code, Codex CLI and Gemini CLI homes of 10,000 sessions each.

Generates the three homes with `bench_sources.py`'s generators (prompts, answers split over lines,
tool calls with 0.5-8 KB results, reasoning, renames, compactions, split Codex files, legacy
Gemini files) plus a store of DSH sessions, then measures the store with all three sources on:

* **first open**: `open_store` with no index yet (walks the logs and scans every history file,
  reporting progress); its peak RSS (in a fresh process, so the number is the open's own);
* **reopen**: `open_store` again (a stat per log and per history file, nothing scanned);
* **reopen from the index**: `open_store(catch_up=False)`, as the app opens before its refresh;
* **catch-up**: `GROWN` history files get one more turn appended, then `refresh()` (only the new
  bytes of each are read);
* **keystroke**: `SessionReferences(store).list_candidates` per keystroke, queries typed one
  character at a time (lengths 0-12, some matching, some not), 3 rounds: p50 / p99 in ms;
* **read one**: `read_surface` of the largest foreign session (what a preview or a send reads).

Run: `.venv/bin/python bench/bench_foreign_store.py [--sessions 10000] [--turns 8] [--store-sessions 1000]`.
Prints markdown tables. Each measure runs in its own process (`--measure`, internal).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_report import percentile
from bench_sources import (
    antigravity_session,
    claude_session,
    codex_session,
    copilot_session,
    crush_databases,
    cursor_database,
    gemini_session,
    opencode_database,
    qwen_session,
)
from sessionref.service.references import SessionReferences
from sessionref.store import open_store
from sessionref.store.foreign_state import ForeignRoot

GROWN = 1_000
QUERIES = ["fix parser crash", "compaction budg", "/home/ana/p1", "zzz-no-match-q", "a1b2c3", "refund tax"]
KINDS = ("claude-code", "codex", "gemini")
ALL_KINDS = (*KINDS, "antigravity", "copilot", "opencode", "qwen-code", "cursor", "crush")
"""`--all-sources`: every registered source (`sessionref.sources.registry.SOURCES`)."""


def keystrokes() -> list[str]:
    """Every prefix (length 0..12) of every query."""
    return [query[:length] for query in QUERIES for length in range(13) if length <= len(query)]


def tree_size(root: Path) -> tuple[int, int]:
    files = total = 0
    for directory, _, names in os.walk(root):
        for name in names:
            files += 1
            total += os.path.getsize(os.path.join(directory, name))
    return files, total


def build(
    directory: Path, sessions: int, turns: int, store_sessions: int, seed: int, kinds: tuple[str, ...]
) -> None:
    rng = random.Random(seed)
    makers = {
        "claude-code": claude_session,
        "codex": codex_session,
        "gemini": gemini_session,
        "antigravity": antigravity_session,
        "copilot": copilot_session,
        "qwen-code": qwen_session,
    }
    for kind in kinds:
        if kind == "opencode":
            opencode_database(rng, directory / kind, sessions, turns)
        elif kind == "cursor":
            cursor_database(rng, directory / kind, sessions, turns)
        elif kind == "crush":
            crush_databases(rng, directory / kind, directory / "crush-projects", sessions, turns)
        else:
            for index in range(sessions):
                makers[kind](rng, directory / kind, index, rng.randint(max(1, turns // 2), turns * 3 // 2))
    (directory / "kinds.json").write_text(json.dumps(list(kinds)), encoding="utf-8")
    store = open_store(directory / "store")
    try:
        for index in range(store_sessions):
            moment = 1_760_000_000_000 + index
            record = store.create_session(cwd=f"/home/ana/p{index % 100}", created_at=moment)
            store.rename(record.id, f"store session {index} about parser budget", time_ms=moment)
    finally:
        store.close()
    (directory / "store" / ".sessionref-index.sqlite").unlink()


def built_kinds(directory: Path) -> tuple[str, ...]:
    return tuple(json.loads((directory / "kinds.json").read_text(encoding="utf-8")))


def sources(directory: Path) -> list[ForeignRoot]:
    return [ForeignRoot.of(kind, directory / kind) for kind in built_kinds(directory)]  # type: ignore[arg-type]


def grow(directory: Path, seed: int) -> int:
    """Append one prompt, continuing the live branch, to `GROWN` Claude Code files; returns how many."""
    rng = random.Random(seed)
    paths = sorted((directory / "claude-code" / "projects").glob("*/*.jsonl"))
    chosen = rng.sample(paths, min(GROWN, len(paths)))
    for path in chosen:
        leaf = None
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("type") in ("user", "assistant"):
                leaf = record["uuid"]
        message = {"role": "user", "content": "one more turn"}
        added = {"type": "user", "parentUuid": leaf, "message": message, "uuid": f"grown-{path.stem}",
                 "timestamp": "2030-01-01T00:00:00.000Z", "sessionId": path.stem}  # fmt: skip
        with path.open("a", encoding="utf-8") as stream:
            stream.write(json.dumps(added) + "\n")
    return len(chosen)


class Vantage:
    id = ""
    cwd = "/home/ana/p1"


def measure(name: str, directory: Path) -> dict[str, Any]:
    """One measure in this (fresh) process; its wall time and peak RSS."""
    result: dict[str, Any] = {}
    progress: list[tuple[int, int]] = []
    started = time.perf_counter()
    if name == "first":
        store = open_store(
            directory / "store", sources=sources(directory), progress=lambda d, t: progress.append((d, t))
        )
        result["progress_reports"] = len(progress)
        result["progress_total"] = progress[-1][1] if progress else 0
    elif name == "reopen":
        store = open_store(directory / "store", sources=sources(directory))
    elif name == "from_index":
        store = open_store(directory / "store", sources=sources(directory), catch_up=False)
    elif name == "catch_up":
        store = open_store(directory / "store", sources=sources(directory), catch_up=False)
        started = time.perf_counter()
        store.refresh()
    elif name == "keystrokes":
        store = open_store(directory / "store", sources=sources(directory), catch_up=False)
        service = SessionReferences(store)
        samples: list[float] = []

        async def typed() -> None:
            for _ in range(3):
                for text in keystrokes():
                    start = time.perf_counter()
                    await service.list_candidates(Vantage(), text)
                    samples.append((time.perf_counter() - start) * 1000)

        asyncio.run(typed())
        result["p50"], result["p99"] = percentile(samples, 0.5), percentile(samples, 0.99)
        result["count"] = len(samples)
    elif name == "read_one":
        store = open_store(directory / "store", sources=sources(directory), catch_up=False)
        claude = (directory / "claude-code" / "projects").glob("*/*.jsonl")
        largest = max(claude, key=lambda path: path.stat().st_size)
        started = time.perf_counter()
        surface = asyncio.run(store.read_surface(f"claude-code:{largest.stem}"))
        result["events"] = len(surface["events"])
        result["kb"] = largest.stat().st_size / 1024
    else:
        raise SystemExit(f"unknown measure {name}")
    result["seconds"] = time.perf_counter() - started
    result["sessions"] = len(asyncio.run(store.list_sessions()))
    store.close()
    result["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def run(name: str, directory: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--measure", name, "--dir", str(directory)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--sessions", type=int, default=10_000, help="sessions per source (10000)")
    parser.add_argument("--turns", type=int, default=8, help="average turns per session (8)")
    parser.add_argument("--store-sessions", type=int, default=1_000, help="DSH sessions of the store (1000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--all-sources", action="store_true", help="every registered source, not the first three"
    )
    parser.add_argument("--first-only", action="store_true", help="measure the first open only")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, Path(args.dir))))
        return
    directory = Path(tempfile.mkdtemp(prefix="bench-foreign-"))
    try:
        started = time.perf_counter()
        kinds = ALL_KINDS if args.all_sources else KINDS
        build(directory, args.sessions, args.turns, args.store_sessions, args.seed, kinds)
        built = time.perf_counter() - started
        sizes = {kind: tree_size(directory / kind) for kind in kinds}
        if "crush" in kinds:
            files, size = tree_size(directory / "crush-projects")
            sizes["crush"] = (sizes["crush"][0] + files, sizes["crush"][1] + size)
        print(f"\nGenerated in {built:.0f} s; load average {os.getloadavg()[0]:.1f}\n")
        print("| source | sessions | files | MB |")
        print("|---|---:|---:|---:|")
        for kind in kinds:
            files, size = sizes[kind]
            print(f"| {kind} | {args.sessions:,} | {files:,} | {size / 2**20:,.0f} |")
        total_mb = sum(size for _, size in sizes.values()) / 2**20
        print(f"| store (DSH logs) | {args.store_sessions:,} | | |")
        first = run("first", directory)
        if args.first_only:
            per_session = first["seconds"] / max(1, first["sessions"]) * 1000
            print("\n| first open | sessions | seconds | ms per session | peak RSS MB |")
            print("|---|---:|---:|---:|---:|")
            row = (
                f"{first['sessions']:,} | {first['seconds']:.2f} | {per_session:.3f} | {first['rss_mb']:.0f}"
            )
            print(f"| {len(kinds)} sources | {row} |")
            return
        reopen = run("reopen", directory)
        from_index = run("from_index", directory)
        grown = grow(directory, args.seed)
        catch_up = run("catch_up", directory)
        keys = run("keystrokes", directory)
        read_one = run("read_one", directory)
        print(f"\n### All sources on: {first['sessions']:,} sessions, {total_mb:,.0f} MB of histories\n")
        print("| measure | seconds | peak RSS MB | note |")
        print("|---|---:|---:|---|")
        print(
            f"| first open (index built) | {first['seconds']:.2f} | {first['rss_mb']:.0f} |"
            f" {first['progress_reports']} progress reports up to {first['progress_total']:,} |"
        )
        print(f"| reopen (stat every file) | {reopen['seconds']:.2f} | {reopen['rss_mb']:.0f} | |")
        print(f"| reopen from the index | {from_index['seconds']:.2f} | {from_index['rss_mb']:.0f} | |")
        print(f"| catch-up, {grown:,} files grown | {catch_up['seconds']:.2f} | {catch_up['rss_mb']:.0f} | |")
        print(
            f"| read the largest Claude Code session | {read_one['seconds']:.3f}"
            f" | {read_one['rss_mb']:.0f} | {read_one['kb']:,.0f} KB, {read_one['events']} messages |"
        )
        print(
            f"\nKeystroke latency, `list_candidates` over {keys['sessions']:,} sessions"
            f" ({keys['count']} keystrokes): p50 {keys['p50']:.3f} ms, p99 {keys['p99']:.3f} ms"
        )
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
