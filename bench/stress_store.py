"""Stress: several processes write, list and read one store at once; nothing confirmed may be lost.

* **writers** (sessionref processes) append events of 100 B to 4 MB through the public store API
  (`SessionStore.append`) to a few shared sessions, and note every append the store confirmed;
* **foreign writers** play DSH: each appends to a log of its own with `O_APPEND` in two pieces (a
  40-byte head, then the rest), the way a streaming writer leaves a half line on disk between
  two writes, and notes every line it finished;
* **listers** loop `open_store` (with the full walk, or from the index and then `refresh()`),
  `list_sessions`, read one session, `close()`, until the writers are done.

Afterwards every session is read back: every confirmed event must be there exactly once, seqs
strictly increasing, no line skipped, no `.torn` file anywhere (nothing crashed, so nothing may
have been moved aside). The test suite runs this bounded (`tests/core/store/test_stress.py`);
run it for minutes from the command line:

    .venv/bin/python bench/stress_store.py --seconds 180 --writers 4 --listers 2 --sessions 3

Prints a markdown table. Exit status 1 when anything was lost, duplicated or unreadable.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sessionref.store import StoreError, open_store
from sessionref.store.locking import lock_backend

SIZES = (100, 2_000, 60_000, 1_000_000, 4_000_000)
"""Payload sizes in bytes; each writer uses every one at least once, then draws by `WEIGHTS`."""
WEIGHTS = (40, 30, 20, 8, 2)
HEAD_BYTES = 40
"""What a foreign writer writes of a line before the rest (the issue's reproduction)."""
PROBE = "stress/probe"


@dataclass
class StressConfig:
    """One run: who does what, for how many appends (or seconds), with which sizes."""

    root: str
    writers: int = 3
    foreign_writers: int = 1
    listers: int = 2
    sessions: int = 3
    appends: int | None = 12
    seconds: float | None = None
    sizes: tuple[int, ...] = SIZES
    seed: int = 1
    rotate_seconds: float | None = None
    """Start fresh sessions every so often (long runs), so no log grows past what a reader holds."""


@dataclass
class StressResult:
    """What a run did and what it found afterwards."""

    processes: int
    seconds: float
    confirmed: int
    bytes_confirmed: int
    smallest: int
    largest: int
    lister_rounds: int
    lost: int
    duplicated: int
    unreadable_sessions: int
    skipped_lines: int
    torn_files: int
    reader_errors: list[str] = field(default_factory=list)
    writer_errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing lost, duplicated, unreadable, moved aside, and no process failed."""
        return not (
            self.lost
            or self.duplicated
            or self.unreadable_sessions
            or self.skipped_lines
            or self.torn_files
            or self.reader_errors
            or self.writer_errors
        )


def _size_plan(rng: random.Random, sizes: tuple[int, ...], count: int | None) -> Any:
    """Payload sizes: every size once (shuffled), then weighted draws; endless when `count` is None."""
    first = list(sizes)
    rng.shuffle(first)
    weights = WEIGHTS[: len(sizes)] if len(sizes) <= len(WEIGHTS) else None
    produced = 0
    while count is None or produced < count:
        yield first[produced] if produced < len(first) else rng.choices(sizes, weights)[0]
        produced += 1


def _until(config: StressConfig, started: float) -> bool:
    return config.seconds is not None and time.monotonic() - started >= config.seconds


def _generation(config: StressConfig) -> int:
    """Which set of sessions writers use now (always 0 without rotation); the same in every process."""
    return 0 if config.rotate_seconds is None else int(time.time() / config.rotate_seconds)


def _own_id(generation: int, number: int) -> str:
    return f"own-{generation}-{number}"


def _foreign_log(config: StressConfig, number: int, generation: int) -> Path:
    """The log a foreign writer appends to, created (header only, no lock file) when first needed."""
    folder = Path(config.root) / "--foreign--" / f"dsh-{number}-{generation}"
    log = folder / "session.jsonl"
    if not log.exists():
        folder.mkdir(parents=True, exist_ok=True)
        header = {"type": "session", "version": 0, "id": folder.name, "createdAt": 1, "delegationDepth": 0}
        log.write_text(json.dumps(header) + "\n", encoding="utf-8")
    return log


def _own_session(store: Any, config: StressConfig, rng: random.Random) -> str:
    """A session of the current generation, created by whichever writer needs it first."""
    session_id = _own_id(_generation(config), rng.randrange(config.sessions))
    try:
        store.record(session_id)
    except StoreError:
        try:
            store.create_session(cwd="/stress", session_id=session_id)
        except StoreError as error:
            if error.code != "STORE_SESSION_EXISTS":
                raise
            store.refresh()  # another writer created it a moment ago
    return session_id


# -- workers (each runs in its own process) -------------------------------------------------------


def _writer(config: StressConfig, number: int, out: Path) -> None:
    rng = random.Random(config.seed * 1000 + number)
    store = open_store(config.root)
    started = time.monotonic()
    with open(out, "w", encoding="utf-8") as notes:
        for index, size in enumerate(_size_plan(rng, config.sizes, config.appends)):
            if _until(config, started):
                break
            tag = f"w{number}-{index}"
            event = {"type": PROBE, "data": {"tag": tag, "pad": "x" * size}}
            try:
                session_id = _own_session(store, config, rng)
                written = store.append(session_id, [event])
            except StoreError as error:
                notes.write(json.dumps({"error": f"{error.code}: {error.message}"}) + "\n")
                break
            note = {"session": session_id, "tag": tag, "seq": written[0]["seq"], "size": size}
            notes.write(json.dumps(note) + "\n")
            notes.flush()
    store.close()


def _foreign_writer(config: StressConfig, number: int, out: Path) -> None:
    rng = random.Random(config.seed * 2000 + number)
    started = time.monotonic()
    generation, seq = -1, 0
    fd = -1
    with open(out, "w", encoding="utf-8") as notes:
        for index, size in enumerate(_size_plan(rng, config.sizes, config.appends)):
            if _until(config, started):
                break
            if _generation(config) != generation:
                if fd >= 0:
                    os.close(fd)
                generation, seq = _generation(config), 0
                fd = os.open(_foreign_log(config, number, generation), os.O_WRONLY | os.O_APPEND)
            tag = f"f{number}-{index}"
            event = {"type": PROBE, "seq": seq, "time": 1, "data": {"tag": tag, "pad": "y" * size}}
            line = (json.dumps(event, separators=(",", ":")) + "\n").encode()
            os.write(fd, line[:HEAD_BYTES])
            os.write(fd, line[HEAD_BYTES:])
            os.fsync(fd)
            seq += 1
            note = {"session": f"dsh-{number}-{generation}", "tag": tag, "size": size}
            notes.write(json.dumps(note) + "\n")
            notes.flush()
    if fd >= 0:
        os.close(fd)


def _lister(config: StressConfig, number: int, out: Path, stop: Path) -> None:
    rng = random.Random(config.seed * 3000 + number)
    rounds, errors = 0, []
    while rounds == 0 or not stop.exists():  # at least one round, however fast the writers are
        rounds += 1
        try:
            store = open_store(config.root, catch_up=rounds % 2 == 0)
            try:
                if not store.caught_up:
                    store.refresh()
                records = _run(store.list_sessions())
                if records:
                    report = store.read_log_report(rng.choice(records).id)
                    if report.skipped_lines:
                        errors.append(f"round {rounds}: skipped lines {report.skipped_lines[:5]}")
            finally:
                store.close()
        except StoreError as error:
            errors.append(f"round {rounds}: {error.code}: {error.message}")
    out.write_text(json.dumps({"rounds": rounds, "errors": errors[:20]}), encoding="utf-8")


def _run(coroutine: Any) -> Any:
    import asyncio

    return asyncio.run(coroutine)


# -- the run --------------------------------------------------------------------------------------


def _prepare(config: StressConfig) -> None:
    """Index the (empty) root once, so workers never race to build the index file itself."""
    open_store(config.root).close()


def _spawn(config: StressConfig, role: str, number: int, work: Path) -> subprocess.Popen[bytes]:
    settings = json.dumps(asdict(config))
    return subprocess.Popen([sys.executable, __file__, "--worker", role, str(number), str(work), settings])


def _read_notes(paths: list[Path]) -> tuple[list[dict[str, Any]], list[str]]:
    notes, errors = [], []
    for path in paths:
        if not path.exists():
            errors.append(f"{path.name}: the process left no notes")
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if "error" in entry:
                errors.append(f"{path.name}: {entry['error']}")
            else:
                notes.append(entry)
    return notes, errors


def _check(config: StressConfig, notes: list[dict[str, Any]]) -> tuple[int, int, int, int]:
    """(lost, duplicated, unreadable sessions, skipped lines) found by reading every session back."""
    store = open_store(config.root)
    present: Counter[str] = Counter()
    unreadable = skipped = 0
    for record in _run(store.list_sessions()):
        try:
            report = store.read_log_report(record.id)
        except StoreError:
            unreadable += 1
            continue
        seqs = [event["seq"] for event in report.events]
        if report.skipped_lines or any(b <= a for a, b in itertools.pairwise(seqs)):
            unreadable += 1
        skipped += len(report.skipped_lines)
        present.update(event["data"]["tag"] for event in report.events if event.get("type") == PROBE)
    store.close()
    confirmed = Counter(note["tag"] for note in notes)
    lost = sum(1 for tag in confirmed if present[tag] == 0)
    duplicated = sum(1 for tag, count in present.items() if count > 1)
    return lost, duplicated, unreadable, skipped


def run(config: StressConfig) -> StressResult:
    """Run one stress round in `config.root` (must be empty or missing) and check the store after it."""
    Path(config.root).mkdir(parents=True, exist_ok=True)
    _prepare(config)
    work = Path(tempfile.mkdtemp(prefix="sessionref-stress-"))
    try:
        stop = work / "stop"
        started = time.monotonic()
        writers = [_spawn(config, "writer", n, work) for n in range(config.writers)]
        writers += [_spawn(config, "foreign", n, work) for n in range(config.foreign_writers)]
        listers = [_spawn(config, "lister", n, work) for n in range(config.listers)]
        failed = [f"writer exited with {p.wait()}" for p in writers if p.wait() != 0]
        stop.touch()
        failed += [f"lister exited with {p.wait()}" for p in listers if p.wait() != 0]
        seconds = time.monotonic() - started
        notes, writer_errors = _read_notes(
            [work / f"writer-{n}.jsonl" for n in range(config.writers)]
            + [work / f"foreign-{n}.jsonl" for n in range(config.foreign_writers)]
        )
        rounds, reader_errors = 0, []
        for n in range(config.listers):
            path = work / f"lister-{n}.json"
            if path.exists():
                summary = json.loads(path.read_text(encoding="utf-8"))
                rounds += summary["rounds"]
                reader_errors += summary["errors"]
        lost, duplicated, unreadable, skipped = _check(config, notes)
        sizes = [note["size"] for note in notes] or [0]
        return StressResult(
            processes=len(writers) + len(listers),
            seconds=seconds,
            confirmed=len(notes),
            bytes_confirmed=sum(sizes),
            smallest=min(sizes),
            largest=max(sizes),
            lister_rounds=rounds,
            lost=lost,
            duplicated=duplicated,
            unreadable_sessions=unreadable,
            skipped_lines=skipped,
            torn_files=sum(1 for _ in Path(config.root).rglob("*.torn")),
            reader_errors=reader_errors,
            writer_errors=writer_errors + failed,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _worker(role: str, number: int, work: Path, config: StressConfig) -> None:
    if role == "writer":
        _writer(config, number, work / f"writer-{number}.jsonl")
    elif role == "foreign":
        _foreign_writer(config, number, work / f"foreign-{number}.jsonl")
    else:
        _lister(config, number, work / f"lister-{number}.json", work / "stop")


def _table(config: StressConfig, result: StressResult) -> str:
    def mb(size: int) -> str:
        return f"{size / 1_000_000:.1f} MB" if size >= 1_000_000 else f"{size:,} B"

    header = (
        "| processes (writers + DSH-like + listers) | seconds | events confirmed | event sizes "
        "| MB confirmed | lister rounds | confirmed events lost | duplicated | sessions unreadable "
        "| lines skipped "
        "| .torn files | process errors |"
    )
    row = (
        f"| {result.processes} ({config.writers} + {config.foreign_writers} + {config.listers}) "
        f"| {result.seconds:.0f} | {result.confirmed:,} | {mb(result.smallest)} - {mb(result.largest)} "
        f"| {result.bytes_confirmed / 1_000_000:,.0f} | {result.lister_rounds:,} | {result.lost} "
        f"| {result.duplicated} | {result.unreadable_sessions} | {result.skipped_lines} "
        f"| {result.torn_files} | {len(result.reader_errors) + len(result.writer_errors)} |"
    )
    return "\n".join([header, "|" + "---|" * 12, row])


def main(argv: list[str] | None = None) -> int:
    """Command line: run for `--seconds` (or `--appends` per writer) and print the table."""
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["--worker"]:
        role, number, work, config = arguments[1], int(arguments[2]), Path(arguments[3]), arguments[4]
        values = json.loads(config)
        values["sizes"] = tuple(values["sizes"])
        _worker(role, number, work, StressConfig(**values))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long writers keep appending")
    parser.add_argument("--appends", type=int, default=None, help="appends per writer instead of --seconds")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--foreign-writers", type=int, default=1)
    parser.add_argument("--listers", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--max-size", type=int, default=SIZES[-1], help="largest event payload in bytes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--rotate", type=float, default=10.0, help="seconds before writers move on to new sessions"
    )
    parser.add_argument("--root", type=Path, default=None, help="store root (default: a temporary one)")
    args = parser.parse_args(arguments)
    root = args.root or Path(tempfile.mkdtemp(prefix="sessionref-stress-root-")) / "store"
    config = StressConfig(
        root=str(root),
        writers=args.writers,
        foreign_writers=args.foreign_writers,
        listers=args.listers,
        sessions=args.sessions,
        appends=args.appends,
        seconds=None if args.appends is not None else args.seconds,
        sizes=tuple(size for size in SIZES if size <= args.max_size) or (args.max_size,),
        seed=args.seed,
        rotate_seconds=None if args.appends is not None else args.rotate,
    )
    try:
        result = run(config)
    finally:
        if args.root is None:
            shutil.rmtree(root.parent, ignore_errors=True)
    print(_table(config, result))
    print(f"\nlock: {lock_backend()}; platform: {sys.platform}; python {sys.version.split()[0]}")
    for error in (result.writer_errors + result.reader_errors)[:10]:
        print(f"error: {error}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
