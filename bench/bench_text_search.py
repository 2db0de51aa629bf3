"""Benchmark: the conversation search engine (issue 10) on a realistic DSH corpus.

Writes `--sessions` real `session.jsonl` logs (default 100,000 sessions, about 2M projected
messages: mixed sizes, Zipf vocabulary, accented words, some Chinese, tool traffic, packed chunk
rows, injected context, compactions; see `text_corpus.py`), then measures:

* reading every log once, three ways: the discovery scan of the store's first open (every byte
  read, a few lines parsed), the projection reader the index is fed with
  (`read_log_conversation`: surface events decoded and folded) and the store's full parse
  (`read_log_bytes` + `parse_log` + `fold_surface`, timed on a sample and extrapolated);
* the first build: `TextIndex.update(bulk=True)` fed by `read_log_conversation` over every log
  (oldest activity first; it ends by optimizing every shard); wall and CPU time, size on disk;
* catch-up after `--grow` sessions grew outside (a new turn each, one in ten compacted):
  re-read those logs and feed their whole projection (`SessionRows`, diffed by seq);
* query latency for 1-3 word queries typed one character at a time (every prefix; 1-2
  character prefixes answer `too_short` without touching the index): p50 / p99 / max, wall and
  CPU, per query shape, with the share of keystrokes that were ranked and complete.

Run: `.venv/bin/python bench/bench_text_search.py [--sessions 10000] [--corpus DIR] [--keep]`.
`--corpus DIR` reuses (or creates and keeps) a corpus there. Prints markdown tables. The logs are
in the page cache when read (they were just written), as on a machine in daily use.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_report import markdown_table, percentile
from sessionref.store.conversation_log import read_log_conversation
from sessionref.store.fold import fold_surface
from sessionref.store.logfile import parse_log, read_log_bytes
from sessionref.store.store import open_store
from sessionref.textsearch import (
    ConversationRequest,
    SessionFacts,
    SessionRows,
    TextIndex,
    schema,
)
from text_corpus import TECH_WORDS, TextMaker, Vocabulary, build_corpus, build_vocabulary

STORE_PARSE_SAMPLE = 5_000
GROWN_COMPACTED_EVERY = 10


@dataclass
class Corpus:
    """A written corpus: its logs and what the searches need to know about it."""

    root: Path
    paths: list[Path]
    facts: dict[str, tuple[str | None, int]]
    samples: list[str]
    cwds: list[str]
    log_bytes: int
    written_s: float


def load_or_build(root: Path, sessions: int) -> Corpus:
    """The corpus under `root`, written first when `root` holds none."""
    manifest = root / "corpus.json"
    if manifest.exists():
        data = json.loads(manifest.read_text("utf-8"))
        paths = sorted(root.glob("*/*/session.jsonl"))
        facts = {key: (value[0], value[1]) for key, value in data["facts"].items()}
        return Corpus(root, paths, facts, data["samples"], data["cwds"], data["log_bytes"], data["written_s"])
    start = time.perf_counter()
    _, stats = build_corpus(root, sessions)
    written = time.perf_counter() - start
    manifest.write_text(
        json.dumps(
            {
                "facts": stats.sessions_facts,
                "samples": stats.samples,
                "cwds": stats.cwds,
                "log_bytes": stats.log_bytes,
                "written_s": written,
            }
        ),
        "utf-8",
    )
    return Corpus(
        root, stats.paths, stats.sessions_facts, stats.samples, stats.cwds, stats.log_bytes, written
    )


@dataclass
class Timing:
    """Wall and CPU seconds of one measured step."""

    wall: float = 0.0
    cpu: float = 0.0

    def __str__(self) -> str:
        return f"{self.wall:.1f} / {self.cpu:.1f}"


class Timer:
    """`with Timer() as t:` measures wall time and this process's CPU time (all threads)."""

    def __enter__(self) -> Timing:
        self.timing = Timing()
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self.timing

    def __exit__(self, *_: object) -> None:
        self.timing.wall = time.perf_counter() - self._wall
        self.timing.cpu = time.process_time() - self._cpu


def read_store_way(paths: Sequence[Path]) -> int:
    """Read, parse and fold every log the way `SessionStore.read_surface` does; returns events folded."""
    surfaced = 0
    for path in paths:
        header, events = parse_log(read_log_bytes(path))
        surfaced += len(fold_surface(header, events)["events"])
    return surfaced


def discovery_scan(root: Path) -> None:
    """The store's first open of `root`: its discovery index reads every log once (then removed)."""
    open_store(root).close()
    for name in os.listdir(root):
        if name.startswith(".sessionref-index"):
            os.remove(root / name)


def read_projection_way(paths: Sequence[Path]) -> int:
    """Read every log with the projection reader; returns the projected message count."""
    return sum(len(read_log_conversation(path).rows) for path in paths)


def changes(paths: Sequence[Path], skipped: list[Path]) -> Iterator[SessionRows]:
    """`SessionRows` of whole projections for `paths`; logs that cannot be read are counted in `skipped`."""
    for path in paths:
        try:
            conversation = read_log_conversation(path)
        except Exception:
            skipped.append(path)
            continue
        stat = path.stat()
        yield SessionRows(
            conversation.header["id"],
            conversation.rows,
            conversation.through_seq,
            f"{stat.st_size}:{stat.st_mtime_ns}",
        )


def index_size(path: Path) -> int:
    """Bytes on disk of the index and its WAL."""
    return sum(
        os.path.getsize(str(path) + suffix) for suffix in ("", "-wal") if os.path.exists(str(path) + suffix)
    )


# -- growth ------------------------------------------------------------------------------------


@dataclass
class _Appended:
    """Events appended to one log, with seqs and times following its last event."""

    seq: int
    now: int
    lines: list[dict] = field(default_factory=list)

    def add(self, kind: str, data: dict, **extra: object) -> int:
        self.now += 5
        self.lines.append({"type": kind, "seq": self.seq, "time": self.now, "data": data, **extra})
        self.seq += 1
        return self.seq - 1


def grow(corpus: Corpus, count: int, rng: random.Random, maker: TextMaker) -> list[Path]:
    """Append a turn to `count` logs as another process would; every tenth also compacts."""
    grown = rng.sample(corpus.paths, min(count, len(corpus.paths)))
    for number, path in enumerate(grown):
        header, events = parse_log(read_log_bytes(path))
        surface = [event["seq"] for event in fold_surface(header, events)["events"]]
        start = max(event["time"] for event in events) + 60_000 if events else header["createdAt"]
        log = _Appended(events[-1]["seq"] + 1 if events else 0, start)
        prompt = maker.latin(rng.randrange(5, 40))
        answer = maker.latin(rng.randrange(40, 300))
        log.add("turn/start", {"turn": 999})
        message = {"source": {"kind": "user"}, "content": [{"type": "text", "text": prompt}], "role": "user"}
        surface.append(log.add("user/message", message, surfaceOp="append"))
        content = [{"type": "text", "text": answer}]
        reply = {
            "turn": 999,
            "step": 1,
            "message": {"role": "assistant", "content": content, "source": {"kind": "model"}},
        }
        surface.append(log.add("assistant/message", reply, surfaceOp="append"))
        log.add("turn/end", {"turn": 999, "reason": "done"})
        if number % GROWN_COMPACTED_EVERY == 0:
            summary = {
                "source": {"kind": "plugin", "plugin": "compact", "compactionId": f"grow{number}"},
                "content": [{"type": "text", "text": "Summary. " + maker.latin(80)}],
                "role": "user",
            }
            span = {"op": "replace", "start": surface[0], "end": surface[-1]}
            log.add("user/message", summary, sourceEventSeqs=surface, surfaceOp=span)
        with open(path, "a", encoding="utf-8") as file:
            file.writelines(
                json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in log.lines
            )
        session_id = header["id"]
        corpus.facts[session_id] = (corpus.facts[session_id][0], log.now)
    return grown


# -- queries -------------------------------------------------------------------------------------


@dataclass
class Query:
    """A query typed one character at a time, and what kind of query it is."""

    text: str
    shape: str


def make_queries(
    vocabulary: Vocabulary, samples: Sequence[str], rng: random.Random, per_shape: int
) -> list[Query]:
    """1-3 word queries of several shapes, drawn from the vocabulary and from sampled messages."""
    words = [word for word in vocabulary.words if re.fullmatch(r"[a-z]{3,}", word)]
    queries: list[Query] = []
    bands = {
        "1 word, top 60": (0, 60),
        "1 word, rank 60-3k": (60, 3_000),
        "1 word, rank 3k+": (3_000, 60_000),
    }
    for shape, (low, high) in bands.items():
        queries += [Query(rng.choice(words[low:high]), shape) for _ in range(per_shape)]
    latin = [sample for sample in samples if sample.isascii()]
    for length in (2, 3):
        for _ in range(per_shape):
            tokens = re.findall(r"[A-Za-z]+", rng.choice(latin))
            start = rng.randrange(max(1, len(tokens) - length))
            queries.append(
                Query(" ".join(tokens[start : start + length]).lower(), f"{length} words from a message")
            )
    for _ in range(per_shape):
        queries.append(
            Query(f"{rng.choice(words[300:20_000])} {rng.choice(words[300:20_000])}", "2 random words")
        )
    for _ in range(max(1, per_shape // 2)):
        tokens = re.findall(r"[A-Za-z]+", rng.choice(latin))
        start = rng.randrange(max(1, len(tokens) - 2))
        queries.append(Query('"' + " ".join(tokens[start : start + 2]).lower() + '"', "quoted phrase"))
    chinese = [run for sample in samples for run in re.findall(r"[\u4e00-\u9fff]{4,}", sample)]
    for _ in range(per_shape if chinese else 0):
        run = rng.choice(chinese)
        start = rng.randrange(len(run) - 3)
        queries.append(Query(run[start : start + rng.choice((2, 3, 4))], "CJK 2-4 characters"))
    queries += [
        Query(text, "special")
        for text in (
            "zurich",
            "Müller",
            "cafe",
            "pg_dump",
            "max_connections",
            "--no-owner",
            "nosuchwordzq",
            "NEAR(pg_dump",
        )
    ]
    queries.append(
        Query(f"{rng.choice(TECH_WORDS)} {rng.choice(TECH_WORDS)} {rng.choice(TECH_WORDS)}", "3 tech words")
    )
    return queries


@dataclass
class Sample:
    """One keystroke's measurement."""

    text: str
    shape: str
    wall_ms: float
    cpu_ms: float
    status: str
    ranked: bool
    complete: bool
    matches: int


@dataclass
class Latency:
    """All keystroke samples of a run."""

    samples: list[Sample] = field(default_factory=list)
    gc_pauses: list[float] = field(default_factory=list)


def type_queries(index: TextIndex, queries: Sequence[Query], corpus: Corpus, rounds: int) -> Latency:
    """Search every prefix of every query, `rounds` times; the current session is a random one."""
    facts_table = {key: SessionFacts(cwd, last) for key, (cwd, last) in corpus.facts.items()}

    def facts(ids: Sequence[str]) -> dict[str, SessionFacts]:
        return {key: facts_table[key] for key in ids if key in facts_table}

    rng = random.Random(3)
    current = rng.choice(list(corpus.facts))
    cwd = corpus.facts[current][0]
    latency = Latency()
    # As the app does once its start-up heap is built: without it, a full collection over the
    # benchmark's own 100,000-entry tables lands on some keystrokes (tens of ms each).
    gc.collect()
    gc.freeze()
    pauses: list[float] = []
    started: list[float] = []

    def watch(phase: str, info: dict) -> None:
        if info.get("generation") == 2:
            if phase == "start":
                started.append(time.perf_counter())
            elif started:
                pauses.append((time.perf_counter() - started.pop()) * 1000)

    gc.callbacks.append(watch)
    latency.gc_pauses = pauses
    for _ in range(rounds):
        for query in queries:
            for end in range(1, len(query.text) + 1):
                text = query.text[:end]
                start_wall, start_cpu = time.perf_counter(), time.thread_time()
                result = index.search(
                    ConversationRequest(text, limit=20, exclude_session_id=current, cwd=cwd), facts=facts
                )
                cpu = (time.thread_time() - start_cpu) * 1000
                wall = (time.perf_counter() - start_wall) * 1000
                latency.samples.append(
                    Sample(
                        text,
                        query.shape,
                        wall,
                        cpu,
                        result.status,
                        result.ranked,
                        result.complete,
                        len(result.matches),
                    )
                )
    return latency


def latency_rows(latency: Latency) -> list[dict[str, str]]:
    """One table row per query shape plus the totals, for searched keystrokes (3+ characters)."""
    searched = [sample for sample in latency.samples if sample.status == "ok"]
    groups: dict[str, list[Sample]] = {"all searched keystrokes": searched}
    for sample in searched:
        groups.setdefault(sample.shape, []).append(sample)
    rows = []
    for name, samples in groups.items():
        walls = [sample.wall_ms for sample in samples]
        cpus = [sample.cpu_ms for sample in samples]
        rows.append(
            {
                "queries typed": name,
                "keystrokes": f"{len(samples):,}",
                "p50 ms": f"{percentile(walls, 0.5):.2f}",
                "p99 ms": f"{percentile(walls, 0.99):.2f}",
                "max ms": f"{max(walls):.1f}",
                "CPU p99 ms": f"{percentile(cpus, 0.99):.2f}",
                "ranked": f"{sum(s.ranked for s in samples) / len(samples):.0%}",
                "complete": f"{sum(s.complete for s in samples) / len(samples):.0%}",
                "with matches": f"{sum(s.matches > 0 for s in samples) / len(samples):.0%}",
            }
        )
    short = [sample for sample in latency.samples if sample.status != "ok"]
    if short:
        walls = [sample.wall_ms for sample in short]
        rows.append(
            {
                "queries typed": "1-2 characters (too short, not searched)",
                "keystrokes": f"{len(short):,}",
                "p50 ms": f"{percentile(walls, 0.5):.3f}",
                "p99 ms": f"{percentile(walls, 0.99):.3f}",
                "max ms": f"{max(walls):.2f}",
                "CPU p99 ms": "",
                "ranked": "",
                "complete": "",
                "with matches": "",
            }
        )
    return rows


def report_latency(latency: Latency, report: Callable[[str], None]) -> None:
    """The latency table, the slowest keystrokes and the full collections seen while typing."""
    report(markdown_table(latency_rows(latency)))
    worst = sorted(latency.samples, key=lambda sample: sample.wall_ms)[-10:]
    report("slowest keystrokes: " + ", ".join(f"{s.text!r} {s.wall_ms:.1f} ms" for s in reversed(worst)))
    pauses = latency.gc_pauses
    report(
        f"full garbage collections while typing: {len(pauses)}"
        + (f" (max {max(pauses):.1f} ms)" if pauses else "")
    )


def run(args: argparse.Namespace, root: Path, report: Callable[[str], None]) -> None:
    """Every measurement on the corpus under `root`, printed as markdown as it completes."""
    corpus = load_or_build(root / "logs", args.sessions)
    size = f"{corpus.log_bytes / 1e9:.2f} GB"
    report(f"corpus: {len(corpus.paths):,} sessions, {size} of logs, written in {corpus.written_s:.0f} s")
    if args.queries_only:
        index = TextIndex(root / args.index_name / ".sessionref-text.sqlite", verify=False)
        queries = make_queries(
            build_vocabulary(random.Random(10)), corpus.samples, random.Random(5), args.per_shape
        )
        latency = type_queries(index, queries, corpus, args.rounds)
        report_latency(latency, report)
        index.close()
        return
    rng = random.Random(7)
    sample = rng.sample(corpus.paths, min(args.store_sample, len(corpus.paths)))
    with Timer() as store_way:
        read_store_way(sample)
    scale = len(corpus.paths) / len(sample)
    store_way.wall *= scale
    store_way.cpu *= scale
    with Timer() as discovery_way:
        discovery_scan(corpus.root)
    with Timer() as projection_way:
        messages = read_projection_way(corpus.paths)
    report(f"projected messages: {messages:,}")
    index_path = root / args.index_name / ".sessionref-text.sqlite"
    index_path.parent.mkdir(parents=True, exist_ok=True)
    TextIndex(index_path).close()  # creation is not part of the build
    os.remove(index_path)
    ordered = sorted(corpus.paths, key=lambda path: path.stat().st_mtime_ns)
    skipped: list[Path] = []
    with Timer() as build:
        index = TextIndex(index_path)
        index.update(changes(ordered, skipped), total=len(ordered), bulk=True)
    size = index_size(index_path)
    maker = TextMaker(build_vocabulary(random.Random(10)), random.Random(11))
    sizes = {path: path.stat().st_size for path in corpus.paths}
    grown = grow(corpus, args.grow, random.Random(12), maker)
    try:
        with Timer() as catch_up:
            catch = index.update(changes(grown, skipped))
    finally:
        for path in grown:  # a reused corpus stays as it was written
            os.truncate(path, sizes[path])
    first_build = build.wall
    build_rows = [
        {
            "sessions": f"{len(corpus.paths):,}",
            "messages indexed": f"{messages:,}",
            "logs": f"{corpus.log_bytes / 1e9:.2f} GB",
            "read every log: discovery scan (s, wall / CPU)": str(discovery_way),
            "read every log: projection reader (s, wall / CPU)": str(projection_way),
            "read every log: store full parse (s, wall / CPU)": f"{store_way} (sampled)",
            "first build (s, wall / CPU)": str(build),
            "first build ÷ projection read (wall)": f"{first_build / projection_way.wall:.2f}×",
            "first build ÷ discovery scan (wall)": f"{first_build / discovery_way.wall:.2f}×",
            "index size": f"{size / 1e9:.2f} GB",
            f"catch-up, {len(grown):,} grown (s, wall / CPU)": f"{catch_up.wall:.2f} / {catch_up.cpu:.2f}",
            "catch-up rows (in / out)": f"{catch.inserted:,} / {catch.deleted:,}",
        }
    ]
    report(markdown_table(build_rows))
    if skipped:
        report(f"unreadable logs skipped: {len(skipped)}")
    queries = make_queries(
        build_vocabulary(random.Random(10)), corpus.samples, random.Random(5), args.per_shape
    )
    latency = type_queries(index, queries, corpus, args.rounds)
    report_latency(latency, report)
    index.close()


def main() -> None:
    """Parse arguments, run, clean up."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--corpus", type=Path, help="reuse (or create and keep) the corpus in this directory")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--grow", type=int, default=1_000, help="sessions grown before the catch-up")
    parser.add_argument("--per-shape", type=int, default=12, help="queries per query shape")
    parser.add_argument("--rounds", type=int, default=1, help="times every keystroke is searched")
    parser.add_argument(
        "--store-sample",
        type=int,
        default=STORE_PARSE_SAMPLE,
        help="logs read the store's way (extrapolated)",
    )
    parser.add_argument(
        "--queries-only", action="store_true", help="only type the queries, on the index a --keep run left"
    )
    parser.add_argument(
        "--prefix-indexes", default=schema.PREFIX_INDEXES, help="FTS5 prefix index lengths (an experiment)"
    )
    parser.add_argument("--shard-bits", type=int, default=schema.SHARD_BITS, help="log2 rows per shard")
    parser.add_argument("--index-name", default="index", help="folder of the index under the corpus")
    args = parser.parse_args()
    schema.PREFIX_INDEXES = args.prefix_indexes
    schema.SHARD_BITS = args.shard_bits
    base = args.corpus if args.corpus is not None else Path(tempfile.mkdtemp(prefix="sessionref-textbench-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        run(args, base, lambda text: print(text + "\n", flush=True))
    finally:
        if not args.keep:
            shutil.rmtree(base / args.index_name, ignore_errors=True)
        if args.corpus is None and not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
