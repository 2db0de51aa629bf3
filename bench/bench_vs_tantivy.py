"""Benchmark: our conversation search side by side with a Tantivy index of the same messages.

One run, one corpus (`bench_text_search`'s generator, `--sessions`): both first builds from the same
projected rows, then the same typed prefixes (every prefix of `bench_text_search.make_queries`'
queries from 3 characters on) interleaved keystroke by keystroke, `--rounds` times — first with
the other core idle, then with it busy (a spinning child process). Ours is `TextIndex.search` as
a keystroke asks it (20 sessions with snippets); Tantivy's (`tantivy` on PyPI, a bench-only
dependency) is its top 200 hits for the same words (each finished word required, the last one a
prefix through a regular expression, quoted phrases as phrases) grouped to 20 sessions, each with
a snippet. Prints markdown tables. Run:
`.venv/bin/python bench/bench_vs_tantivy.py [--sessions 5000] [--rounds 3] [--corpus DIR]`.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_report import markdown_table, percentile
from bench_text_search import Timer, changes, load_or_build, make_queries, read_projection_way
from sessionref.service.protocols import ConversationRequest
from sessionref.textsearch import TextIndex
from sessionref.textsearch.protocol import SessionFacts
from text_corpus import build_vocabulary

HITS = 200
SESSIONS_SHOWN = 20


def _spin(stop: Any) -> None:
    while not stop.is_set():
        sum(range(10_000))


def build_tantivy(folder: Path, rows: Sequence[tuple[str, int, str]]) -> Any:
    """A Tantivy index of `(session id, seq, text)` rows in `folder`."""
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("session", stored=True, tokenizer_name="raw")
    builder.add_integer_field("seq", stored=True)
    builder.add_text_field("body", stored=True)
    schema = builder.build()
    index = tantivy.Index(schema, path=str(folder))
    writer = index.writer(heap_size=200_000_000)
    for session_id, seq, text in rows:
        writer.add_document(tantivy.Document(session=session_id, seq=seq, body=text))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def tantivy_search(index: Any, text: str) -> int:
    """Sessions found for `text` as typed (top `HITS` hits grouped to `SESSIONS_SHOWN`, with snippets)."""
    import tantivy

    schema = index.schema
    clauses = []
    for quoted, bare in re.findall(r'"([^"]*)"?|(\S+)', text):
        words = re.findall(r"[^\W_]+", (quoted or bare).lower())
        if not words:
            continue
        if len(words) > 1:
            clauses.append((tantivy.Occur.Must, tantivy.Query.phrase_query(schema, "body", words)))
        else:
            clauses.append((tantivy.Occur.Must, tantivy.Query.term_query(schema, "body", words[0])))
    if not clauses:
        return 0
    if not text.endswith((" ", '"')):
        last = re.findall(r"[^\W_]+", text.lower())[-1]
        clauses[-1] = (tantivy.Occur.Must, tantivy.Query.regex_query(schema, "body", re.escape(last) + ".*"))
    query = tantivy.Query.boolean_query(clauses)
    searcher = index.searcher()
    hits = searcher.search(query, HITS).hits
    snippets = tantivy.SnippetGenerator.create(searcher, query, schema, "body")
    shown: dict[str, str] = {}
    for _score, address in hits:
        document = searcher.doc(address)
        session = document["session"][0]
        if session not in shown:
            shown[session] = snippets.snippet_from_doc(document).to_html()
            if len(shown) == SESSIONS_SHOWN:
                break
    return len(shown)


def keystrokes(queries: Sequence[Any]) -> list[str]:
    """Every prefix of every query from 3 characters on (shorter ones are not searched by either)."""
    return [query.text[:end] for query in queries for end in range(3, len(query.text) + 1)]


def measure(
    ours: Callable[[str], object], theirs: Callable[[str], object], typed: Sequence[str], rounds: int
) -> dict[str, list[float]]:
    """Milliseconds per keystroke of each engine, interleaved."""
    times: dict[str, list[float]] = {"ours": [], "tantivy": []}
    for _ in range(rounds):
        for text in typed:
            for name, search in (("ours", ours), ("tantivy", theirs)):
                started = time.perf_counter()
                search(text)
                times[name].append((time.perf_counter() - started) * 1000)
    return times


def _row(phase: str, name: str, samples: list[float]) -> dict[str, str]:
    return {
        "other core": phase,
        "engine": name,
        "keystrokes": f"{len(samples):,}",
        "p50 (ms)": f"{percentile(samples, 0.5):.2f}",
        "p99 (ms)": f"{percentile(samples, 0.99):.2f}",
        "max (ms)": f"{max(samples):.1f}",
        "over 50 ms": str(sum(1 for sample in samples if sample > 50)),
    }


def main() -> None:
    """Build both, type the prefixes idle then busy, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-shape", type=int, default=3)
    parser.add_argument("--corpus", type=Path)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="sessionref-vs-tantivy-"))
    try:
        corpus = load_or_build((args.corpus or folder) / "logs", args.sessions)
        with Timer() as read_once:
            read_projection_way(corpus.paths)
        ordered = sorted(corpus.paths, key=lambda path: path.stat().st_mtime_ns)
        index_path = folder / "ours" / ".sessionref-text.sqlite"
        index_path.parent.mkdir(parents=True)
        with Timer() as ours_build:
            index = TextIndex(index_path)
            index.update(changes(ordered, []), total=len(ordered), bulk=True)
        rows = [
            (change.session_id, row.seq, row.text) for change in changes(ordered, []) for row in change.rows
        ]
        (folder / "tantivy").mkdir()
        with Timer() as tantivy_build:
            tantivy_index = build_tantivy(folder / "tantivy", rows)
        print(
            markdown_table(
                [
                    {
                        "sessions": f"{len(corpus.paths):,}",
                        "messages": f"{len(rows):,}",
                        "read every log once (s)": f"{read_once.wall:.1f}",
                        "ours: first build (s)": f"{ours_build.wall:.1f}",
                        "tantivy: first build (s, from rows in memory)": f"{tantivy_build.wall:.1f}",
                    }
                ]
            )
        )
        facts_table = {key: SessionFacts(cwd, last) for key, (cwd, last) in corpus.facts.items()}

        def facts(ids: Sequence[str]) -> dict[str, SessionFacts]:
            return {key: facts_table[key] for key in ids if key in facts_table}

        def ours(text: str) -> object:
            return index.search(ConversationRequest(text, limit=SESSIONS_SHOWN), facts=facts)

        queries = make_queries(
            build_vocabulary(random.Random(10)), corpus.samples, random.Random(5), args.per_shape
        )
        typed = keystrokes(queries)
        table = []
        for phase in ("idle", "busy"):
            stop = multiprocessing.Event()
            spinner = multiprocessing.Process(target=_spin, args=(stop,)) if phase == "busy" else None
            if spinner is not None:
                spinner.start()
            try:
                times = measure(ours, lambda text: tantivy_search(tantivy_index, text), typed, args.rounds)
            finally:
                if spinner is not None:
                    stop.set()
                    spinner.join()
            table += [_row(phase, name, samples) for name, samples in times.items()]
        print()
        print(markdown_table(table))
        index.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
