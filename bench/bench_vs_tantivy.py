"""Benchmark: our conversation search side by side with a Tantivy index of the same messages.

One run, one corpus (`bench_text_search`'s generator, `--sessions`): both first builds from the same
projected rows, then the same typed prefixes (every prefix of `bench_text_search.make_queries`'
queries from 3 characters on) interleaved keystroke by keystroke, `--rounds` times — first with
the other core idle, then with it busy (a spinning child process). Ours is `TextIndex.search` as
a keystroke asks it (20 sessions with snippets); Tantivy's (`tantivy` on PyPI, a bench-only
dependency) is its top 200 hits for the same words (each finished word required, the last one a
prefix through a regular expression, quoted phrases as phrases) grouped to 20 sessions, each with
a snippet. Each first build runs in a fresh process reading every log (so its peak RSS is its
own), and so do our word lists after it (`list_ours`: computed in the background once a build
has ended, see `sessionref.textsearch.list_worker`). The ranking's completeness: each distinct
keystroke's first screen against the one a brute-force ranking of every match shows
(`full_ranking.py`: equal, ≥ 18 of 20 sessions shared, same top 5), besides the share answered
`complete` (every match examined); the slowest of ours are listed. Prints markdown tables. Run:
`.venv/bin/python bench/bench_vs_tantivy.py [--sessions 5000] [--rounds 3] [--corpus DIR] [--keep DIR]`;
`--keep DIR` keeps both indexes there and reuses them on the next run (then not timed).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import re
import resource
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
from full_ranking import compare
from sessionref.service.protocols import ConversationRequest, ConversationSearchResult
from sessionref.textsearch import TextIndex
from sessionref.textsearch.protocol import SessionFacts
from text_corpus import build_vocabulary

HITS = 200
SESSIONS_SHOWN = 20


def _spin(stop: Any) -> None:
    while not stop.is_set():
        sum(range(10_000))


def _tantivy_schema() -> Any:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("session", stored=True, tokenizer_name="raw")
    builder.add_integer_field("seq", stored=True)
    builder.add_text_field("body", stored=True)
    return builder.build()


def build_tantivy(folder: Path, paths: Sequence[Path]) -> int:
    """A Tantivy index in `folder` of every projected message of the logs at `paths`; returns the
    message count."""
    import tantivy

    index = tantivy.Index(_tantivy_schema(), path=str(folder))
    writer = index.writer(heap_size=200_000_000)
    messages = 0
    for change in changes(paths, []):
        for row in change.rows:
            writer.add_document(tantivy.Document(session=change.session_id, seq=row.seq, body=row.text))
            messages += 1
    writer.commit()
    writer.wait_merging_threads()
    return messages


def build_ours(index_path: Path, paths: Sequence[Path]) -> int:
    """Our index at `index_path` of the logs at `paths`, as the first build makes it; returns the
    message count."""
    index = TextIndex(index_path)
    messages = 0

    def counted() -> Any:
        nonlocal messages
        for change in changes(paths, []):
            messages += len(change.rows)
            yield change

    index.update(counted(), total=len(paths), bulk=True)
    index.close()  # before its word lists are computed: they come after a build (`list_ours`)
    return messages


def list_ours(index_path: Path, _paths: Sequence[Path]) -> int:
    """The word lists of our index at `index_path`, as the first update after a build makes them
    (in the background); returns 0."""
    index = TextIndex(index_path)
    index.update([])
    index.wait_for_lists()
    index.close()
    return 0


def _build_in_child(
    build: Callable[[Path, Sequence[Path]], int], target: Path, paths: list[Path], out: Any
) -> None:
    started = time.perf_counter()
    messages = build(target, paths)
    wall = time.perf_counter() - started
    out.send((messages, wall, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


def build_apart(
    build: Callable[[Path, Sequence[Path]], int], target: Path, paths: list[Path]
) -> tuple[int, float, float]:
    """`build(target, paths)` in a fresh process: (messages, wall seconds, peak RSS in MB)."""
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_build_in_child, args=(build, target, paths, send))
    child.start()
    result: tuple[int, float, float] = receive.recv()
    child.join()
    return result


def _against(seconds: float, read_once: float) -> str:
    return f"{seconds:.1f} ({seconds / read_once:.1f}×)"


def _size_mb(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 1e6


def _usable(index_path: Path) -> bool:
    """Whether a kept index of ours opens as it is (not of another schema: then it is built again)."""
    index = TextIndex(index_path)
    index.close()
    return not index.rebuilt


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
) -> tuple[dict[str, list[float]], list[tuple[float, str, object]]]:
    """Milliseconds per keystroke of each engine, interleaved; and ours as (ms, text, answer)."""
    times: dict[str, list[float]] = {"ours": [], "tantivy": []}
    answers: list[tuple[float, str, object]] = []
    for _ in range(rounds):
        for text in typed:
            for name, search in (("ours", ours), ("tantivy", theirs)):
                started = time.perf_counter()
                answer = search(text)
                times[name].append((time.perf_counter() - started) * 1000)
                if name == "ours":
                    answers.append((times[name][-1], text, answer))
    return times, answers


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
    import tantivy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-shape", type=int, default=3)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--keep", type=Path, help="keep both indexes here, reuse them when there")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="sessionref-vs-tantivy-"))
    kept = args.keep or folder
    try:
        corpus = load_or_build((args.corpus or folder) / "logs", args.sessions)
        # Oldest activity first, as the store's first build feeds them (`catch_up.py`): the logs'
        # mtimes here are when the generator wrote them, not their sessions' last activity.
        ordered = sorted(corpus.paths, key=lambda path: (corpus.facts[path.parent.name][1], path.parent.name))
        index_path = kept / "ours" / ".sessionref-text.sqlite"
        tantivy_path = kept / "tantivy"
        if not (index_path.exists() and (tantivy_path / "meta.json").exists() and _usable(index_path)):
            shutil.rmtree(index_path.parent, ignore_errors=True)
            shutil.rmtree(tantivy_path, ignore_errors=True)
            index_path.parent.mkdir(parents=True)
            tantivy_path.mkdir(parents=True)
            load = os.getloadavg()[0]
            with Timer() as read_once:
                read_projection_way(corpus.paths)
            messages, ours_wall, ours_rss = build_apart(build_ours, index_path, ordered)
            _, lists_wall, lists_rss = build_apart(list_ours, index_path, [])
            _, tantivy_wall, tantivy_rss = build_apart(build_tantivy, tantivy_path, ordered)
            print(
                markdown_table(
                    [
                        {
                            "sessions": f"{len(corpus.paths):,}",
                            "messages": f"{messages:,}",
                            "read every log once (s)": f"{read_once.wall:.1f}",
                            "ours: first build (s, × one read)": _against(ours_wall, read_once.wall),
                            "ours: then word lists (s)": f"{lists_wall:.1f}",
                            "ours: peak RSS (MB)": f"{max(ours_rss, lists_rss):.0f}",
                            "ours: on disk (MB)": f"{_size_mb(index_path.parent):.0f}",
                            "tantivy: first build (s, × one read)": _against(tantivy_wall, read_once.wall),
                            "tantivy: peak RSS (MB)": f"{tantivy_rss:.0f}",
                            "tantivy: on disk (MB)": f"{_size_mb(tantivy_path):.0f}",
                            "load average": f"{load:.1f}–{os.getloadavg()[0]:.1f}",
                        }
                    ]
                )
            )
        index = TextIndex(index_path)
        tantivy_index = tantivy.Index.open(str(tantivy_path))
        tantivy_index.reload()
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
        slowest: list[tuple[float, str, object]] = []
        for phase in ("idle", "busy"):
            stop = multiprocessing.Event()
            spinner = multiprocessing.Process(target=_spin, args=(stop,)) if phase == "busy" else None
            if spinner is not None:
                spinner.start()
            load = os.getloadavg()[0]
            try:
                times, answers = measure(
                    ours, lambda text: tantivy_search(tantivy_index, text), typed, args.rounds
                )
            finally:
                if spinner is not None:
                    stop.set()
                    spinner.join()
            rows = [_row(phase, name, samples) for name, samples in times.items()]
            incomplete = sum(1 for _ms, _text, answer in answers if not getattr(answer, "complete", True))
            unranked = sum(1 for _ms, _text, answer in answers if not getattr(answer, "ranked", True))
            rows[0]["not complete / not ranked"] = (
                f"{incomplete / len(answers):.0%} / {unranked / len(answers):.0%}"
            )
            rows[1]["not complete / not ranked"] = "—"
            for row in rows:
                row["load average"] = f"{load:.1f}–{os.getloadavg()[0]:.1f}"
            table += rows
            slowest += answers
        print()
        print(markdown_table(table))
        answered = [
            (text, answer) for _ms, text, answer in slowest if isinstance(answer, ConversationSearchResult)
        ]
        with Timer() as brute:
            completeness, differed = compare(index, answered, facts, SESSIONS_SHOWN)
        print(f"\nFirst screens against a ranking of every match ({brute.wall:.0f} s of brute force):\n")
        print(markdown_table([completeness.row()]))
        if differed:
            print("Differed: " + ", ".join(repr(text) for text in differed[:20]))
        print("\nOur slowest keystrokes (ms, text):")
        for ms, text, _answer in sorted(slowest, key=lambda entry: entry[0], reverse=True)[:12]:
            print(f"  {ms:7.1f}  {text!r}")
        index.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
