"""Benchmark: the conversation index of a store, as the app and the CLI keep it (issue 10, integration).

`bench_text_search.py` measures the engine fed directly; this measures what a user waits for or
pays through `StoreConversationIndex` on a store opened like the app opens it:

* **first build** through the catch-up (the store's `conversation_sources`, the plan, the
  projection reader, the bulk update): wall and CPU, index size;
* **catch-up, nothing changed**: what every app start and every `sessionref search` pays to learn
  that the index is current (listing every session and comparing versions);
* **catch-up after `--grow` sessions grew** (a turn appended by another process, one in ten
  compacted), after the store's own refresh;
* **`sessionref search`** as a process (open the store, catch up, search, print): p50 / max;
* **a keystroke through the service** (`SessionReferences.search_conversations`, the worker
  thread hop included) for the queries of the engine bench typed one character at a time: p50 /
  p99 / max.

Run: `.venv/bin/python bench/bench_conversation_catch_up.py --corpus DIR [--sessions 10000]`
(the corpus of `bench_text_search.py --corpus DIR`: its logs are under `DIR/logs`, reused when
there). The logs that grew are truncated back afterwards; the store's index files are left in
`DIR/logs` (delete them to measure a first open again). Prints markdown tables.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_report import markdown_table, percentile
from bench_text_search import Timer, grow, index_size, load_or_build, make_queries
from sessionref.service.references import SessionReferences
from sessionref.store import open_store
from sessionref.textsearch.store_index import StoreConversationIndex, text_index_path
from text_corpus import TextMaker, build_vocabulary


async def typed_latency(references: SessionReferences, queries: list[str], cwd: str) -> list[float]:
    """Milliseconds of each `search_conversations` call for every prefix of `queries` (3+ characters)."""

    class Vantage:
        id = ""

    vantage = Vantage()
    vantage.cwd = cwd  # type: ignore[attr-defined]
    samples: list[float] = []
    for query in queries:
        for end in range(3, len(query) + 1):
            start = time.perf_counter()
            await references.search_conversations(vantage, query[:end], 20)
            samples.append((time.perf_counter() - start) * 1000)
    return samples


def cli_search(root: Path, word: str, runs: int) -> list[float]:
    """Seconds of `sessionref search WORD --limit 5` as a fresh process, `runs` times."""
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "sessionref_tui.cli",
                "search",
                word,
                "--store",
                str(root),
                "--limit",
                "5",
            ],
            check=True,
            capture_output=True,
        )
        walls.append(time.perf_counter() - start)
    return walls


def main() -> None:
    """Build or reuse the corpus, then measure and print the tables."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, required=True, help="corpus directory (logs under DIR/logs)")
    parser.add_argument("--sessions", type=int, default=10_000, help="sessions to write if none are there")
    parser.add_argument("--grow", type=int, default=1_000, help="sessions grown before the catch-up")
    parser.add_argument("--cli-runs", type=int, default=5)
    parser.add_argument("--per-shape", type=int, default=4, help="queries per shape for the keystroke rows")
    args = parser.parse_args()
    corpus = load_or_build(args.corpus / "logs", args.sessions)
    root = corpus.root
    for name in os.listdir(root):
        if name.startswith(".sessionref-text"):
            os.remove(root / name)  # a first build each run
    store = open_store(root)
    conversations = StoreConversationIndex(store)
    try:
        with Timer() as build:
            built = conversations.catch_up_now()
        size = index_size(text_index_path(root))
        with Timer() as idle:
            conversations.catch_up_now()
        sizes = {path: path.stat().st_size for path in corpus.paths}
        grown = grow(
            corpus,
            args.grow,
            random.Random(12),
            TextMaker(build_vocabulary(random.Random(10)), random.Random(11)),
        )
        try:
            with Timer() as refresh:
                store.refresh()
            with Timer() as catch:
                caught = conversations.catch_up_now()
            cli = cli_search(root, "function", args.cli_runs)
            queries = make_queries(
                build_vocabulary(random.Random(10)), corpus.samples, random.Random(5), args.per_shape
            )
            references = SessionReferences(store, conversations=conversations)
            typed = asyncio.run(typed_latency(references, [query.text for query in queries], corpus.cwds[0]))
        finally:
            for path in grown:  # a reused corpus stays as it was written
                os.truncate(path, sizes[path])
    finally:
        conversations.close()
        store.close()
    print(
        markdown_table(
            [
                {
                    "sessions": f"{len(corpus.paths):,}",
                    "first build through the store (s, wall / CPU)": str(build),
                    "sessions read": f"{built.fed:,}",
                    "index size": f"{size / 1e9:.2f} GB",
                    "catch-up, nothing changed (s, wall / CPU)": f"{idle.wall:.2f} / {idle.cpu:.2f}",
                    f"store refresh + catch-up, {len(grown):,} grown (s, wall)": (
                        f"{refresh.wall:.2f} + {catch.wall:.2f}"
                    ),
                    "sessions re-read": f"{caught.fed:,}",
                }
            ]
        )
        + "\n"
    )
    print(
        markdown_table(
            [
                {
                    "measure": "`sessionref search function --limit 5`, a fresh process (s)",
                    "p50": f"{percentile(cli, 0.5):.2f}",
                    "p99": "",
                    "max": f"{max(cli):.2f}",
                },
                {
                    "measure": f"one keystroke through the service, {len(typed):,} typed prefixes (ms)",
                    "p50": f"{percentile(typed, 0.5):.2f}",
                    "p99": f"{percentile(typed, 0.99):.2f}",
                    "max": f"{max(typed):.1f}",
                },
            ]
        )
    )


if __name__ == "__main__":
    main()
