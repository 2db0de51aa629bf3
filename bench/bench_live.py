"""Benchmark: live discovery latency, a new Claude Code session written → listed by the running store.

Builds a Claude Code home of `--sessions` small sessions (two lines each) plus a store, opens the
store with the source on and starts `LiveDiscovery` as the app does. Each trial writes the first
line of a new session file (as Claude Code does when a session starts in the next pane) and
measures the time until the store lists it (the listener is told after the re-walk, which lists
only the folder the watch reported). Prints the
p50 / p99 / max over `--trials`, and the mode (watching or re-scanning).

Run: `.venv/bin/python bench/bench_live.py [--sessions 30000] [--trials 100]`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

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
    args = parser.parse_args()
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
