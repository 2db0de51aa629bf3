"""Benchmark: peak memory (RSS) of `show`, `snapshot`, `search` and a first index build vs log size.

Run: `python bench/bench_memory.py [messages ...]` (default 10,000 100,000 1,000,000). Prints a
markdown table (docs/reliability.md, "Memory"). Each size is one DSH-layout session log of short
user/assistant messages (about 110 bytes a line: 1,000,000 messages make a 110 MB log), in a
store of its own. Every command runs in a fresh interpreter (`python -m sessionref_tui.cli`)
with its output sent to /dev/null, and its peak RSS is read from `resource.getrusage` of that
child alone. "first index" is `sessions --fresh` on a store without an index file: discovery
plus nothing else; `search` builds the text index on its first run, so its row is that build.
The target (issue 20): a 110 MB log under 600 MB for each command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SIZES = (10_000, 100_000, 1_000_000)
SESSION_ID = "bench-memory"


def write_log(root: Path, messages: int) -> int:
    """A log of `messages` alternating short user/assistant messages; returns its size in bytes."""
    folder = root / "--bench--" / SESSION_ID
    folder.mkdir(parents=True)
    path = folder / "session.jsonl"
    header = {"type": "session", "version": 0, "id": SESSION_ID, "createdAt": 1_700_000_000_000, "cwd": "/b"}
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps(header, separators=(",", ":")) + "\n")
        for seq in range(messages):
            text = f"message {seq} about zeppelins"
            if seq % 2 == 0:
                data = {
                    "source": {"kind": "user"},
                    "content": [{"type": "text", "text": text}],
                    "role": "user",
                    "id": f"u{seq}",
                }
                kind = "user/message"
            else:
                message = {"id": f"a{seq}", "role": "assistant", "content": [{"type": "text", "text": text}]}
                data = {"message": message}
                kind = "assistant/message"
            line = {
                "type": kind,
                "seq": seq,
                "time": 1_700_000_000_000 + seq,
                "data": data,
                "surfaceOp": "append",
            }
            out.write(json.dumps(line, separators=(",", ":")) + "\n")
    return path.stat().st_size


def peak_rss_mb(argv: list[str], env: dict[str, str]) -> float:
    """Peak RSS (MB) of one CLI run in a child process of its own."""
    code = (
        "import resource, subprocess, sys;"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    cli = [sys.executable, "-m", "sessionref_tui.cli", *argv]
    out = subprocess.run(
        [sys.executable, "-c", code, *cli], capture_output=True, text=True, env=env, check=True
    )
    kilobytes = int(out.stdout.strip())
    return kilobytes / 1024 if sys.platform != "darwin" else kilobytes / (1024 * 1024)


def main(sizes: tuple[int, ...]) -> None:
    """Print the table for `sizes` (message counts)."""
    env = {**os.environ, "SESSIONREF_SOURCES": "none"}
    print("| messages | log MB | first index MB | show MB | snapshot MB | search MB |")
    print("|---:|---:|---:|---:|---:|---:|")
    for messages in sizes:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder) / "store"
            size = write_log(root, messages)
            env["XDG_STATE_HOME"] = str(Path(folder) / "state")
            store = ["--store", str(root)]
            rows = [
                peak_rss_mb(["sessions", "--fresh", *store], env),
                peak_rss_mb(["show", SESSION_ID, *store], env),
                peak_rss_mb(["snapshot", SESSION_ID, *store], env),
                peak_rss_mb(["search", "zeppelins", *store], env),
            ]
            cells = " | ".join(f"{value:,.0f}" for value in rows)
            print(f"| {messages:,} | {size / 1e6:,.0f} | {cells} |", flush=True)


if __name__ == "__main__":
    main(tuple(int(arg) for arg in sys.argv[1:]) or SIZES)
