"""Benchmark: the line mode's Markdown rendering, which runs on the event loop while the user types.

Measures, at a terminal width of 100 columns:

* rendering one complete block (`markdown_lines`) of each kind a model writes: a paragraph, a
  list, a fenced code block, a table; p50 / p99 / max in ms;
* streaming a whole reply word by word through `Transcript.show_event` (the path a reply takes):
  the time each chunk holds the loop (p50 / p99 / max, the max being a chunk that completes a
  block and renders it) and the total.

Run: `.venv/bin/python bench/bench_repl_markdown.py [--rounds 200]`. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from prompt_toolkit.output import DummyOutput
from sessionref_tui.repl.markdown import markdown_lines
from sessionref_tui.repl.transcript import Transcript

WIDTH = 100
PARAGRAPH = " ".join(["The **cache** stampede came from `refresh()` racing the TTL expiry"] * 6)
LIST = "\n".join(f"{i}. Step {i}: check the *retry* budget and the `pool` size" for i in range(1, 11))
CODE = "```python\n" + "\n".join(f"def step_{i}(x):\n    return x * {i}" for i in range(15)) + "\n```"
TABLE = "| key | hits | misses |\n|---|---|---|\n" + "\n".join(f"| k{i} | {i * 7} | {i} |" for i in range(10))
REPLY = "\n\n".join([PARAGRAPH, LIST, CODE, TABLE] * 3)


def timed(work: Callable[[], object], rounds: int) -> list[float]:
    """Milliseconds per call of `work`, `rounds` times."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def row(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"| {name} | {statistics.median(ordered):.2f} | {p99:.2f} | {ordered[-1]:.2f} |"


def stream_reply() -> tuple[list[float], float]:
    """Chunk times (ms) and the total (ms) of streaming REPLY word by word into a transcript."""
    transcript = Transcript(output=DummyOutput(), style=None, columns=lambda: WIDTH)
    words = REPLY.split(" ")
    chunks = [word if index == 0 else " " + word for index, word in enumerate(words)]
    samples = []
    for chunk in chunks:
        event = {
            "type": "assistant/chunk",
            "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": chunk}},
        }
        start = time.perf_counter()
        transcript.show_event(event)
        samples.append((time.perf_counter() - start) * 1000)
    message = {"role": "assistant", "content": [{"type": "text", "text": REPLY}]}
    start = time.perf_counter()
    transcript.show_event({"type": "assistant/message", "data": {"turn": 1, "step": 1, "message": message}})
    samples.append((time.perf_counter() - start) * 1000)
    return samples, sum(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    rounds = parser.parse_args().rounds
    markdown_lines(PARAGRAPH, WIDTH)  # warm imports and pygments
    print(f"Markdown rendering at {WIDTH} columns, {rounds} rounds\n")
    print("| what | p50 ms | p99 ms | max ms |\n|---|---|---|---|")
    for name, block in (
        ("paragraph (~60 words)", PARAGRAPH),
        ("list (10 items)", LIST),
        ("code block (30 lines)", CODE),
        ("table (10 rows)", TABLE),
    ):
        print(row(f"one block: {name}", timed(lambda block=block: markdown_lines(block, WIDTH), rounds)))
    chunk_samples: list[float] = []
    totals: list[float] = []
    for _ in range(max(rounds // 20, 3)):
        samples, total = stream_reply()
        chunk_samples += samples
        totals.append(total)
    print(row(f"streaming a {len(REPLY)}-character reply: per chunk", chunk_samples))
    print(row("streaming that reply: total", totals))


if __name__ == "__main__":
    main()
