"""Benchmark: mention parsing (`parse_session_reference_text`, `find_mention_spans`) over adversarial text.

Run: `.venv/bin/python bench/bench_parse.py` (add `--sizes 8192,32768` to pick sizes,
`--budget 5` to change when a shape stops growing). Prints a markdown table.

Each shape repeats one unit up to the size (whole units only). Once one call takes
longer than the budget, larger sizes of that shape are skipped for that function:
the quadratic scan this replaced would otherwise run for hours at 1 MiB.

To measure another checkout on the same machine (e.g. the code before a change),
put its `core` first on the path; the header says which code was measured:

    PYTHONPATH=/path/to/checkout/core .venv/bin/python bench/bench_parse.py
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import sessionref
from sessionref.contract.uri import find_mention_spans, parse_session_reference_text

VALID = "dsh-session:ImFiYyI"  # the id "abc"
SHAPES: dict[str, str] = {
    "`@[` repeated": "@[",
    "`@[\\` repeated": "@[\\",
    "`@[\\\\` repeated": "@[\\\\",
    "`@[]` repeated": "@[]",
    "`@[` + label, no `](`": "@[" + "label text " * 40,
    "`dsh-session:` repeated": "dsh-session:",
    "`](dsh-session:` repeated": "](dsh-session:",
    "`@[](dsh-session:` unclosed": "@[](dsh-session:",
    "backslashes, `]`, newlines": "\\\\\\]\n\\\n]\u2028",
    "mix of all": "@[\\](dsh-session:@[x\n\\\u2028dsh-session:Im)@[]\\\\](",
    "valid mentions": f"@[label]({VALID}) ",
    "valid bare URIs": f"{VALID} ",
    "prose, one mention per 2 KB": "lorem ipsum dolor sit amet " * 75 + f"see @[it]({VALID}). ",
}
DEFAULT_SIZES = (8 * 1024, 32 * 1024, 128 * 1024, 1024 * 1024)
DEFAULT_BUDGET = 5.0
FAST_REPEATS = 3  # calls under FAST_SECONDS are repeated and the best time kept
FAST_SECONDS = 0.2


def build(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


def outcome(function: Callable[[str], Any], text: str) -> tuple[float, str]:
    """(seconds, what came out) for one call; the best of a few when it is fast."""
    best = float("inf")
    result = ""
    for _ in range(FAST_REPEATS):
        started = time.perf_counter()
        try:
            value = function(text)
        except Exception as error:  # the parse fails on the first invalid URI: that is an outcome too
            result = f"error {getattr(error, 'code', type(error).__name__)}"
        else:
            count = len(value) if isinstance(value, list) else len(value.references)
            result = f"{count} found"
        best = min(best, time.perf_counter() - started)
        if best >= FAST_SECONDS:
            break
    return best, result


def size_label(size: int) -> str:
    return f"{size // 1024} KiB" if size < 1024 * 1024 else f"{size // (1024 * 1024)} MiB"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(str(size) for size in DEFAULT_SIZES))
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET)
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"code measured: {sessionref.__file__}  (Python {sys.version.split()[0]})\n")
    print("| shape | size | parse (s) | parse result | spans (s) | spans result |")
    print("|---|---:|---:|---|---:|---|")
    functions = {"parse": parse_session_reference_text, "spans": find_mention_spans}
    for shape, unit in SHAPES.items():
        over_budget = {name: False for name in functions}
        for size in sizes:
            text = build(unit, size)
            cells = []
            for name, function in functions.items():
                if over_budget[name]:
                    cells += ["skipped", f"(> {args.budget:g} s at a smaller size)"]
                    continue
                seconds, result = outcome(function, text)
                over_budget[name] = seconds > args.budget
                cells += [f"{seconds:.3f}", result]
            print(f"| {shape} | {size_label(size)} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
