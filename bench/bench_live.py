"""Benchmark: live discovery latency, a new Claude Code session written → listed by the running store.

Builds a Claude Code home of `--sessions` small sessions (two lines each) plus a store, opens the
store with the source on and starts `LiveDiscovery` as the app does. Each trial writes the first
line of a new session file (as Claude Code does when a session starts in the next pane) and
measures the time until the store lists it (the listener is told after the re-walk, which lists
only the folder the watch reported). Prints the
p50 / p99 / max over `--trials`, and the mode (watching or re-scanning).

With `--setup-store N` it measures instead what starting the watch costs on a DSH store of N
sessions (one folder each, written by `bench_discovery.build_root`), the cost that used to hold
the app's first paint: the time from `LiveDiscovery.start()` until the watch is in place, the
longest the interpreter was held meanwhile (a thread that wakes every millisecond measures its
longest gap), and how many folders are watched.

Run: `.venv/bin/python bench/bench_live.py [--sessions 30000] [--trials 100]`, or
`.venv/bin/python bench/bench_live.py --setup-store 100000`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_discovery import build_root
from bench_report import percentile
from sessionref.host.live_discovery import LiveDiscovery
from sessionref.store import StoreError, open_store
from sessionref.store.foreign_state import ForeignRoot

PROJECTS = 50


def line(native: str, number: int, text: str) -> str:
    record = {
        "type": "user", "uuid": f"{native}-{number}", "parentUuid": None, "cwd": "/home/ana/p",
        "timestamp": "2026-03-20T10:00:00.000Z", "message": {"role": "user", "content": text},
    }  # fmt: skip
    return json.dumps(record) + "\n"


def build_home(root: Path, sessions: int) -> None:
    for index in range(sessions):
        folder = root / "projects" / f"-home-ana-p{index % PROJECTS}"
        folder.mkdir(parents=True, exist_ok=True)
        native = f"00000000-0000-4000-8000-{index:012d}"
        (folder / f"{native}.jsonl").write_text(line(native, 1, f"task {index}") + line(native, 2, "more"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=30_000)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument(
        "--setup-store", type=int, default=0, help="time the watch's set-up on this big a store"
    )
    args = parser.parse_args()
    if args.setup_store:
        measure_setup(args.setup_store)
        return
    with tempfile.TemporaryDirectory(prefix="sessionref-bench-live-") as folder:
        home = Path(folder) / "claude"
        build_home(home, args.sessions)
        store = open_store(Path(folder) / "store", sources=[ForeignRoot.of("claude-code", home)])
        changed = threading.Condition()
        live = LiveDiscovery(
            store.refresh,
            [Path(folder) / "store", home],
            lambda: _notify(changed),
            refresh_changed=store.refresh_changed,
        )
        live.start()
        live.ready.wait(60)
        latencies: list[float] = []
        target = home / "projects" / "-home-ana-live"
        target.mkdir()
        for trial in range(args.trials):
            native = f"11111111-0000-4000-8000-{trial:012d}"
            session = f"claude-code:{native}"
            started = time.perf_counter()
            (target / f"{native}.jsonl").write_text(line(native, 1, f"live {trial}"))
            with changed:
                while not _listed(store, session):
                    changed.wait(30)
            latencies.append((time.perf_counter() - started) * 1000)
        live.stop()
        store.close()
    print("| mode | sessions | trials | p50 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|---:|")
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    total = args.sessions + args.trials
    print(f"| {live.mode} | {total:,} | {args.trials} | {p50:.0f} | {p99:.0f} | {max(latencies):.0f} |")


def measure_setup(sessions: int) -> None:
    """Print how long starting the watch takes on a store of `sessions`, and how long it holds the GIL."""
    with tempfile.TemporaryDirectory(prefix="sessionref-bench-live-setup-") as folder:
        root = Path(folder) / "store"
        build_root(root, sessions, random.Random(7))
        store = open_store(root)
        gaps: list[float] = []
        done = threading.Event()

        def tick() -> None:
            last = time.perf_counter()
            while not done.is_set():
                time.sleep(0.001)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        ticker = threading.Thread(target=tick)
        ticker.start()
        live = LiveDiscovery(store.refresh, [root], lambda: None, refresh_changed=store.refresh_changed)
        started = time.perf_counter()
        live.start()
        live.ready.wait(600)
        ready = time.perf_counter() - started
        done.set()
        ticker.join()
        watched = len(getattr(live, "watched", ()) or ()) or "every folder (recursive)"
        live.stop()
        store.close()
    print("| sessions | watch in place (ms) | longest interpreter hold (ms) | folders watched |")
    print("|---:|---:|---:|---:|")
    print(f"| {sessions:,} | {ready * 1000:.0f} | {max(gaps) * 1000:.0f} | {watched} |")


def _notify(changed: threading.Condition) -> None:
    with changed:
        changed.notify_all()


def _listed(store: object, session_id: str) -> bool:
    try:
        store.record(session_id)  # type: ignore[attr-defined]
    except StoreError:
        return False
    return True


if __name__ == "__main__":
    main()
