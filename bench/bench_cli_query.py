"""Benchmark: one `sessionref sessions QUERY --limit 5` process on an indexed 100k-session store.

Scripts call the CLI in loops, so what counts is the whole process: start-up, imports, the answer,
exit. This runs the real command (`python -m sessionref_tui.cli` in a fresh process each time)
against a store of `--sessions` logs (bench_discovery's generator, indexed once and kept under
`--root`), and prints wall time and peak memory per call:

* `fresh`: `--fresh`, which opens the store and catches up with every log (what every call did
  before the index answered directly; also what a call does when the last catch-up is old);
* `from the index`: the calls that follow within `INDEX_MAX_AGE_SECONDS` (the target: ≤ 0.5 s).

Run: `.venv/bin/python bench/bench_cli_query.py [--sessions 100000] [--root DIR] [--calls 10]`.
Against code without `--fresh`, pass `--no-fresh-flag`: every call then opens the store.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_loop_stall import prepared_root

QUERY = ["sessions", "parser", "--limit", "5", "--cwd", "/home/dev/proj-1"]
TARGET_S = 0.5


def one_call(store_root: Path, extra: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one CLI process."""
    command = [
        sys.executable,
        "-c",
        "import sys; from sessionref_tui.cli import main; sys.exit(main())",
        *QUERY,
        "--store",
        str(store_root),
        *extra,
    ]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    out, err = process.stdout.read(), process.stderr.read()  # a few lines each
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0 or b"parser" not in out:
        raise SystemExit(f"the command failed: {(err or out).decode(errors='replace')}")
    return wall, usage.ru_maxrss / 1024  # KB on Linux


def main() -> None:
    """Time the calls and print a markdown table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--root", type=Path, default=Path(tempfile.gettempdir()) / "sessionref-bench-stall")
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--no-fresh-flag", action="store_true", help="the code under test has no --fresh")
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    store_root = prepared_root(args.root, args.sessions)
    rows = []
    fresh_extra = [] if args.no_fresh_flag else ["--fresh"]
    fresh = [one_call(store_root, fresh_extra) for _ in range(3)]
    rows.append(("fresh (open and catch up)", fresh))
    if not args.no_fresh_flag:
        quick = [one_call(store_root, []) for _ in range(args.calls)]
        rows.append(("from the index", quick))
    print("| call | calls | p50 (s) | max (s) | peak memory (MB) | ≤ 0.5 s |")
    print("|---|---:|---:|---:|---:|:---:|")
    for name, samples in rows:
        walls = [wall for wall, _ in samples]
        print(
            f"| {name} | {len(samples)} | {statistics.median(walls):.2f} | {max(walls):.2f} | "
            f"{max(peak for _, peak in samples):.0f} | {'yes' if max(walls) <= TARGET_S else 'no'} |"
        )
    load = os.getloadavg()
    print(
        f"\n{args.label + ': ' if args.label else ''}`sessionref {' '.join(QUERY)}` on {args.sessions:,} "
        f"sessions; load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} on {os.cpu_count()} cores. "
        "Peak memory is the resident set of one process."
    )


if __name__ == "__main__":
    main()
