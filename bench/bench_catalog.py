"""Benchmark: the shared session catalog on PostgreSQL (issue 22, docs/catalog.md).

Starts its own PostgreSQL (initdb in a temporary folder, Unix socket only, durable settings:
fsync on), creates the catalog with `migrate`, and loads `--sessions` sessions with
`--messages-per-session` messages each through COPY (the search indexes are dropped for the load
and rebuilt after it, as a restore would). Four people own the sessions (ann half of them); ann
is a member of `team`, with which 1 % of the others' sessions are shared, so every query is held
to row-level security over rows ann may and may not see. Then, connected as ann:

* **title completion**: needles typed one character at a time (common and rare words, a folder
  name, an id prefix, a needle matching nothing), every keystroke one `find_sessions` call for
  the first screen (50 rows, ranked from a project folder): p50 / p99 / max per keystroke;
* **conversation search**: 1-3 word queries typed one character at a time from the third
  character on, each keystroke one `search_messages` call (20 sessions): p50 / p99 / max;
* **publish rate**: a real store of `--publish-sessions` sessions (25 messages each) published
  into the loaded catalog by `Publisher` (indexes in place): messages per second.

Run: `.venv/bin/python bench/bench_catalog.py [--sessions 1000000] [--messages-per-session 20]`.
Prints markdown tables, the slowest keystrokes of each search, and the load average before and after.
`--keep DIR` keeps the loaded server's folder in DIR (stopped at the end) and, when DIR already
holds one loaded with the same sizes, starts it again, upgrades its schema with `migrate` and skips
the load: load once, then time only (`--parts titles,search` leaves out the publish run, which
would find its sessions already published).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "core" / "catalog"))

import psycopg
from bench_report import markdown_table, percentile
from pg_server import PostgresServer
from sessionref.catalog.conversation_search import search_messages
from sessionref.catalog.discovery import find_sessions
from sessionref.catalog.publisher import Publisher
from sessionref.catalog.schema import FILL_SESSION_WORDS, migrate
from sessionref.store import open_store

BENCH_SETTINGS = (
    "-c shared_buffers=2GB -c maintenance_work_mem=1GB -c max_wal_size=16GB -c checkpoint_timeout=30min"
    " -c work_mem=32MB -c effective_cache_size=8GB -c max_parallel_maintenance_workers=1"
)
PEOPLE = ("ann", "bob", "cho", "dev")
FIRST_SCREEN = 50
SEARCH_SCREEN = 20
TEXT_POOL = 200_000
PROJECTS = 2_000
SEED = 22


def zipf_words(count: int, rng: random.Random) -> list[str]:
    """`count` distinct pronounceable words (the vocabulary; rank 0 is the most common)."""
    consonants, vowels = "bcdfghklmnprstvz", "aeiou"
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < count:
        length = rng.choice((2, 2, 3, 3, 3, 4))
        word = "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(length))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


class Vocabulary:
    """Words drawn with Zipf-like frequencies (a few very common, a long tail of rare ones)."""

    def __init__(self, words: list[str], rng: random.Random) -> None:
        self.words = words
        self.rng = rng
        self.weights = [1.0 / (rank + 1) for rank in range(len(words))]
        self.cumulative: list[float] = []
        total = 0.0
        for weight in self.weights:
            total += weight
            self.cumulative.append(total)

    def sample(self, count: int) -> list[str]:
        """`count` words drawn with replacement."""
        return self.rng.choices(self.words, cum_weights=self.cumulative, k=count)


def start_server(folder: Path | None = None) -> PostgresServer:
    """A new durable server for the benchmark (in `folder`, default a temporary one), with the roles
    and a database owned by `owner`."""
    server = PostgresServer.create(folder)
    server.start(settings=BENCH_SETTINGS)
    with psycopg.connect(server.conninfo(), autocommit=True) as connection:
        connection.execute("CREATE ROLE owner LOGIN")
        connection.execute("CREATE ROLE team NOLOGIN")
        for person in PEOPLE:
            connection.execute(f"CREATE ROLE {person} LOGIN")
        connection.execute("GRANT team TO ann")
        connection.execute("CREATE DATABASE bench OWNER owner")
    with psycopg.connect(server.conninfo("owner", "bench")) as connection:
        migrate(connection)
    return server


def _lines(rows: Iterator[str], chunk: int = 5_000) -> Iterator[bytes]:
    batch: list[str] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= chunk:
            yield "".join(batch).encode()
            batch = []
    if batch:
        yield "".join(batch).encode()


def load(server: PostgresServer, sessions: int, per_session: int, rng: random.Random) -> dict[str, float]:
    """COPY `sessions` sessions and their messages in; rebuild the search indexes; seconds per step."""
    vocabulary = Vocabulary(zipf_words(6_000, rng), rng)
    projects = [f"{word}-{number}" for number, word in enumerate(vocabulary.sample(PROJECTS))]
    texts = [" ".join(vocabulary.sample(rng.randint(4, 24))) for _ in range(TEXT_POOL)]
    now = 1_750_000_000_000
    timings: dict[str, float] = {}
    with psycopg.connect(server.conninfo(database="bench"), autocommit=True) as connection:
        indexes = connection.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'sessionref'"
            " AND tablename IN ('sessions', 'messages', 'session_words')"
            " AND indexname NOT IN (SELECT conname FROM pg_constraint)"
        ).fetchall()
        for name, _ in indexes:
            connection.execute(f"DROP INDEX sessionref.{name}")
        started = time.monotonic()

        def session_rows() -> Iterator[str]:
            for number in range(sessions):
                owner = "ann" if rng.random() < 0.5 else rng.choice(PEOPLE[1:])
                title = " ".join(vocabulary.sample(rng.randint(2, 6)))
                project = projects[min(int(rng.paretovariate(0.6)) - 1, PROJECTS - 1)]
                cwd = f"/home/{owner}/src/{project}" if rng.random() > 0.02 else "\\N"
                created = now - (sessions - number) * 30_000 - rng.randint(0, 20_000)
                updated = created + rng.randint(0, 3_600_000)
                session_id = f"{rng.getrandbits(128):032x}"
                machine = f"{owner}-{rng.choice(('laptop', 'desk', 'ci'))}"
                yield (
                    f"{session_id}\t{owner}\t{machine}\tstore\t{title}\t{cwd}\t{created}\t{updated}"
                    f"\t{per_session}\t1\t{per_session}\n"
                )

        with connection.cursor() as cursor:
            with cursor.copy(
                "COPY sessionref.sessions (id, owner, machine, source, title, cwd, created_at, updated_at,"
                " through_seq, format_version, messages) FROM STDIN"
            ) as copy:
                for block in _lines(session_rows()):
                    copy.write(block)
            timings["sessions COPY"] = time.monotonic() - started
            keys = cursor.execute(
                "SELECT key, owner, created_at FROM sessionref.sessions ORDER BY key"
            ).fetchall()
            started = time.monotonic()

            def message_rows() -> Iterator[str]:
                for key, owner, created in keys:
                    for seq in range(1, per_session + 1):
                        role = "user" if seq % 2 else "assistant"
                        text = texts[rng.randrange(TEXT_POOL)]
                        yield f"{key}\t{seq}\t{owner}\t{role}\tmessage\t{created + seq * 1_000}\t{text}\n"

            # The words' trigger would gather each COPY's 20,000,000 rows at once: gathered after.
            cursor.execute("ALTER TABLE sessionref.messages DISABLE TRIGGER messages_words_inserted")
            with cursor.copy(
                "COPY sessionref.messages (session_key, seq, owner, role, kind, time, text) FROM STDIN"
            ) as copy:
                for block in _lines(message_rows(), chunk=20_000):
                    copy.write(block)
            cursor.execute("ALTER TABLE sessionref.messages ENABLE TRIGGER messages_words_inserted")
            timings["messages COPY"] = time.monotonic() - started
            started = time.monotonic()
            cursor.execute(FILL_SESSION_WORDS)
            timings["sessions' words"] = time.monotonic() - started
            others = [key for key, owner, _ in keys if owner != "ann"]
            shared = rng.sample(others, max(1, len(others) // 100))
            team = cursor.execute("SELECT 'team'::regrole::oid").fetchone()[0]
            owners = {key: owner for key, owner, _ in keys}
            with cursor.copy("COPY sessionref.shares (session_key, shared_with, owner) FROM STDIN") as copy:
                for key in shared:
                    copy.write_row((key, team, owners[key]))
        for name, definition in indexes:
            started = time.monotonic()
            connection.execute(definition)
            timings[f"index {name}"] = time.monotonic() - started
        started = time.monotonic()
        connection.execute("VACUUM ANALYZE sessionref.sessions")
        connection.execute("VACUUM ANALYZE sessionref.messages")
        connection.execute("VACUUM ANALYZE sessionref.shares")
        connection.execute("VACUUM ANALYZE sessionref.session_words")
        timings["vacuum analyze"] = time.monotonic() - started
        sizes = connection.execute(
            "SELECT pg_size_pretty(pg_total_relation_size('sessionref.sessions')),"
            " pg_size_pretty(pg_total_relation_size('sessionref.messages'))"
        ).fetchone()
        print(f"sizes: sessions {sizes[0]}, messages {sizes[1]}")
    return timings


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A markdown table with `headers` over `rows`."""
    return markdown_table([dict(zip(headers, row, strict=True)) for row in rows])


def keystrokes(word: str, *, first: int = 1) -> list[str]:
    """Every prefix of `word` from `first` characters on: what typing it asks."""
    return [word[:end] for end in range(first, len(word) + 1)]


def timed(calls: Sequence[Callable[[], Any]]) -> list[float]:
    """Milliseconds each call took (each run once, in order)."""
    times: list[float] = []
    for call in calls:
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def _row(name: str, times: list[float], extra: str = "") -> list[str]:
    return [
        name,
        str(len(times)),
        f"{percentile(times, 0.50):.1f}",
        f"{percentile(times, 0.99):.1f}",
        f"{max(times):.1f}",
        extra,
    ]


Slowest = list[tuple[float, str]]
"""Milliseconds and what was typed, for the slowest keystrokes."""
SLOWEST_SHOWN = 8


def slowest_lines(slowest: Slowest) -> str:
    """The `SLOWEST_SHOWN` slowest keystrokes, one `ms  kind: typed` line each."""
    ranked = sorted(slowest, reverse=True)[:SLOWEST_SHOWN]
    return "\n".join(f"  {ms:7.1f} ms  {typed}" for ms, typed in ranked)


def bench_titles(connection: Any, rng: random.Random) -> tuple[list[list[str]], Slowest]:
    """Title completion per keystroke, by kind of needle; and every keystroke's time with its text."""
    common = connection.execute(
        "SELECT w FROM (SELECT unnest(string_to_array(title, ' ')) AS w FROM sessionref.sessions"
        " TABLESAMPLE SYSTEM (1) REPEATABLE (22)) words GROUP BY w ORDER BY count(*) DESC LIMIT 40"
    ).fetchall()
    words = [row[0] for row in common]
    rare = connection.execute(
        "SELECT w FROM (SELECT unnest(string_to_array(title, ' ')) AS w FROM sessionref.sessions"
        " TABLESAMPLE SYSTEM (1) REPEATABLE (22)) words GROUP BY w HAVING count(*) = 1 LIMIT 40"
    ).fetchall()
    folder, some_id = connection.execute(
        "SELECT folder, id FROM sessionref.sessions WHERE owner = 'ann' AND folder IS NOT NULL LIMIT 1"
    ).fetchone()
    cwd = f"/somewhere/{folder}"
    kinds = {
        "common words": [" ".join(rng.sample(words[:10], 2)) for _ in range(10)],
        "less common words": rng.sample(words[10:], 10),
        "rare words": [row[0] for row in rare[:10]],
        "folder name": [folder],
        "id prefix": [some_id[:12]],
        "nothing matches": ["zqxjw", "xylophonequartz"],
    }
    rows: list[list[str]] = []
    everything: list[float] = []
    typed: Slowest = []
    for kind, needles in kinds.items():
        calls: list[Callable[[], Any]] = []
        labels: list[str] = []
        for needle in needles:
            for prefix in keystrokes(needle.lower()):
                labels.append(f"{kind}: {prefix!r}")
                calls.append(
                    lambda prefix=prefix: find_sessions(
                        connection,
                        needle=prefix,
                        folder=folder_of(cwd),
                        exclude_id="",
                        exclude_machine="ann-bench",
                        limit=FIRST_SCREEN,
                    )
                )
        times = timed(calls)
        everything += times
        typed += zip(times, labels, strict=True)
        rows.append(_row(kind, times))
    rows.append(_row("**every keystroke**", everything))
    return rows, typed


def folder_of(cwd: str) -> str:
    """The folder name of `cwd`."""
    return cwd.rstrip("/").rsplit("/", 1)[-1]


def bench_search(
    connection: Any, rng: random.Random, sample_seed: int = SEED
) -> tuple[list[list[str]], Slowest]:
    """Conversation search per keystroke, by query shape; and every keystroke's time with its text.

    The queries come from a sample of the messages drawn with `sample_seed`: the same on every run
    over the same data, so that two runs time the same keystrokes."""
    sample = connection.execute(
        "SELECT text FROM sessionref.messages"
        f" TABLESAMPLE SYSTEM (0.01) REPEATABLE ({int(sample_seed)}) LIMIT 400"
    ).fetchall()
    word_lists = [row[0].split() for row in sample if len(row[0].split()) >= 3]
    shapes = {
        "1 word": [" ".join(rng.choice(word_lists)[:1]) for _ in range(12)],
        "2 words": [" ".join(rng.choice(word_lists)[:2]) for _ in range(12)],
        "3 words": [" ".join(rng.choice(word_lists)[:3]) for _ in range(12)],
        '"phrase"': ['"' + " ".join(rng.choice(word_lists)[1:3]) + '"' for _ in range(6)],
    }
    rows: list[list[str]] = []
    everything: list[float] = []
    typed: Slowest = []
    for shape, queries in shapes.items():
        calls: list[Callable[[], Any]] = []
        labels: list[str] = []
        answers: list[Any] = []
        for query in queries:
            for prefix in keystrokes(query, first=3):
                labels.append(f"{shape}: {prefix!r}")
                calls.append(
                    lambda prefix=prefix, answers=answers: answers.append(
                        search_messages(
                            connection,
                            prefix,
                            limit=SEARCH_SCREEN,
                            exclude_session_id=None,
                            folder=None,
                            exclude_machine="ann-bench",
                        )
                    )
                )
        times = timed(calls)
        complete = sum(1 for answer in answers if answer.complete)
        everything += times
        typed += zip(times, labels, strict=True)
        rows.append(_row(shape, times, f"{complete * 100 // max(1, len(answers))} % complete"))
    rows.append(_row("**every keystroke**", everything))
    return rows, typed


def bench_publish(server: PostgresServer, sessions: int, folder: Path) -> list[list[str]]:
    """Publish a real store of `sessions` sessions x 25 messages into the loaded catalog as ann."""
    store = open_store(folder / "publish-store")
    rng = random.Random(SEED + 1)
    words = zipf_words(3_000, rng)
    vocabulary = Vocabulary(words, rng)
    for number in range(sessions):
        session_id = f"pub-{number:06d}"
        store.create_session(
            cwd=f"/home/ann/src/project-{number % 40}", session_id=session_id, created_at=1_000 + number
        )
        events = []
        for seq in range(25):
            text = " ".join(vocabulary.sample(rng.randint(6, 30)))
            if seq % 2 == 0:
                data = {
                    "source": {"kind": "user"},
                    "content": [{"type": "text", "text": text}],
                    "role": "user",
                    "id": f"{session_id}-{seq}",
                }
                events.append({"type": "user/message", "data": data, "surfaceOp": "append"})
            else:
                message = {
                    "id": f"{session_id}-{seq}",
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                    "source": {"kind": "model", "provider": "demo", "model": "demo"},
                }
                events.append(
                    {"type": "assistant/message", "data": {"message": message}, "surfaceOp": "append"}
                )
        store.append(session_id, events, time_ms=2_000 + number)
    publisher = Publisher(server.conninfo("ann", "bench"), store, machine="ann-bench", sources=["store"])
    try:
        started = time.monotonic()
        report = asyncio.run(publisher.publish())
        seconds = time.monotonic() - started
        again_started = time.monotonic()
        again = asyncio.run(publisher.publish())
        again_seconds = time.monotonic() - again_started
    finally:
        publisher.close()
        store.close()
    return [
        [
            "first publish",
            f"{report.sessions:,}",
            f"{report.messages:,}",
            f"{seconds:.1f}",
            f"{report.messages / seconds:,.0f}",
        ],
        [
            "again (nothing changed)",
            f"{again.sessions:,}",
            f"{again.messages:,}",
            f"{again_seconds:.2f}",
            "-",
        ],
    ]


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


LOADED_MARK = "loaded"
"""The file in a `--keep` folder that says the load finished, and with which sizes."""
PARTS = ("titles", "search", "publish")


def kept_server(folder: Path, sizes: str) -> PostgresServer | None:
    """The server loaded earlier into `folder` with `sizes`, started and upgraded (None: no such load)."""
    mark = folder / LOADED_MARK
    if not mark.exists():
        if folder.exists():
            raise SystemExit(f"{folder} exists but holds no finished load: remove it first")
        return None
    if mark.read_text() != sizes:
        raise SystemExit(f"{folder} was loaded with {mark.read_text()}, not {sizes}: remove it first")
    server = PostgresServer(folder)
    server.start(settings=BENCH_SETTINGS)
    with psycopg.connect(server.conninfo("owner", "bench")) as connection:
        applied = migrate(connection)
    print(f"reusing {folder} ({sizes}); migrations applied: {[m.version for m in applied]}")
    return server


def main() -> None:
    """Load (or reuse a kept load), measure, print the tables, stop the server."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1_000_000)
    parser.add_argument("--messages-per-session", type=int, default=20)
    parser.add_argument("--publish-sessions", type=int, default=2_000)
    parser.add_argument("--keep", type=Path, help="keep the loaded data folder here, and reuse it")
    parser.add_argument("--parts", default=",".join(PARTS), help="which of titles,search,publish to time")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if not parts <= set(PARTS):
        parser.error(f"--parts takes some of {','.join(PARTS)}")
    rng = random.Random(SEED)
    print(f"load average before: {_load()} on {os.cpu_count()} cores")
    sizes = f"{args.sessions} sessions x {args.messages_per_session} messages"
    server = kept_server(args.keep, sizes) if args.keep else None
    try:
        if server is None:
            server = start_server(args.keep)
            started = time.monotonic()
            timings = load(server, args.sessions, args.messages_per_session, rng)
            print(
                f"loaded {args.sessions:,} sessions / {args.sessions * args.messages_per_session:,} messages "
                f"in {time.monotonic() - started:.0f} s"
            )
            print(
                table(["load step", "seconds"], [[name, f"{value:.1f}"] for name, value in timings.items()])
            )
            if args.keep:
                (args.keep / LOADED_MARK).write_text(sizes)
        measure(server, parts, args.publish_sessions)
    finally:
        if server is not None and args.keep:
            server.stop()
        elif server is not None:
            server.remove()
        print(f"load average after: {_load()}")


def measure(server: PostgresServer, parts: set[str], publish_sessions: int) -> None:
    """Time the chosen parts against the loaded catalog and print their tables."""
    with psycopg.connect(server.conninfo("ann", "bench"), autocommit=False) as connection:
        if "titles" in parts:
            for _ in range(2):  # warm the caches as a running app would have
                bench_titles(connection, random.Random(SEED))
            titles, slow_titles = bench_titles(connection, random.Random(SEED))
            print("\ntitle completion, ms per keystroke (first screen: 50 rows), as ann (row-level security)")
            print(table(["needle", "keystrokes", "p50", "p99", "max", ""], titles))
            print(f"slowest keystrokes:\n{slowest_lines(slow_titles)}")
        if "search" in parts:
            # Warm the caches with other queries (as a running app would have), then time these.
            bench_search(connection, random.Random(SEED), sample_seed=SEED - 1)
            search, slow_search = bench_search(connection, random.Random(SEED))
            print("\nconversation search, ms per keystroke (20 sessions)")
            print(table(["query", "keystrokes", "p50", "p99", "max", "complete"], search))
            print(f"slowest keystrokes:\n{slowest_lines(slow_search)}")
    if "publish" in parts:
        with tempfile.TemporaryDirectory() as folder:
            publish = bench_publish(server, publish_sessions, Path(folder))
        print("\npublish into the loaded catalog (a real store, 25 messages per session)")
        print(table(["run", "sessions", "messages", "seconds", "messages/s"], publish))


if __name__ == "__main__":
    main()
