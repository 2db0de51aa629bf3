"""Live discovery: a change on disk re-walks the store once per batch; a writer process's sessions appear."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from contextlib import closing
from pathlib import Path

from sessionref.host.live_discovery import RESCANNING, WATCHING, LiveDiscovery
from sessionref.store import SessionStore, StoreError, open_store
from sessionref.store.foreign_state import ForeignRoot

WAIT = 60
"""Seconds a test waits for an event before it fails (a bound, never a pause: events end the wait)."""


class FakeWatcher:
    """Yields one batch per item put in `batches`; None ends the watch; an exception is raised from it."""

    def __init__(self) -> None:
        self.batches: queue.Queue[object] = queue.Queue()

    def __call__(self, folders: Sequence[Path], stop: threading.Event) -> Iterable[Collection[object]]:
        yield set()  # the watch is in place
        while (item := self.batches.get()) is not None:
            if isinstance(item, Exception):
                raise item
            assert isinstance(item, set)
            yield item


def test_each_batch_of_changes_is_one_rewalk_and_only_news_is_told(tmp_path: Path) -> None:
    walks: queue.Queue[int] = queue.Queue()
    told: queue.Queue[int] = queue.Queue()
    answers = iter([False, True, False, True])  # the first walk covers the start: nothing new
    count = iter(range(1, 100))

    def refresh() -> bool:
        walks.put(next(count))
        return next(answers)

    watcher = FakeWatcher()
    live = LiveDiscovery(refresh, [tmp_path], lambda: told.put(1), watcher=watcher)
    assert live.mode == WATCHING
    live.start()
    assert live.ready.wait(WAIT) and walks.get(timeout=WAIT) == 1
    for batch in ({"a", "b", "c"}, set(), {"d"}, {"e"}):  # many writes, a few batches; an idle tick
        watcher.batches.put(batch)
    assert [walks.get(timeout=WAIT) for _ in range(3)] == [2, 3, 4]
    assert [told.get(timeout=WAIT) for _ in range(2)] == [1, 1]  # the second walk found nothing new
    watcher.batches.put(None)
    live.stop()
    assert told.empty()


def test_a_batch_of_paths_rewalks_only_them_and_anything_else_walks_everything(tmp_path: Path) -> None:
    walks: queue.Queue[object] = queue.Queue()

    def refresh() -> bool:
        walks.put("everything")
        return False

    def refresh_changed(paths: Collection[Path]) -> bool:
        walks.put(sorted(paths))
        return False

    watcher = FakeWatcher()
    live = LiveDiscovery(refresh, [tmp_path], lambda: None, refresh_changed=refresh_changed, watcher=watcher)
    live.start()
    assert live.ready.wait(WAIT) and walks.get(timeout=WAIT) == "everything"  # the start: what came before
    watcher.batches.put({(1, str(tmp_path / "a.jsonl")), (2, str(tmp_path / "b" / "c.jsonl"))})
    assert walks.get(timeout=WAIT) == [tmp_path / "a.jsonl", tmp_path / "b" / "c.jsonl"]
    watcher.batches.put({"no path here"})  # a watch that cannot say where
    assert walks.get(timeout=WAIT) == "everything"
    watcher.batches.put(None)
    live.stop()


def test_a_failing_watch_falls_back_to_rescanning(tmp_path: Path) -> None:
    walked = threading.Event()
    watcher = FakeWatcher()
    watcher.batches.put(OSError("inotify watch limit reached"))
    live = LiveDiscovery(
        lambda: walked.set() or False, [tmp_path], lambda: None, watcher=watcher, poll_seconds=0.01
    )
    live.start()
    assert walked.wait(WAIT)
    live.stop()
    assert live.mode == RESCANNING


WRITER = r"""
import json, sys
from pathlib import Path
folder = Path(sys.argv[1])
for number, line in enumerate(sys.stdin):
    name, _, text = line.strip().partition(" ")
    if text.startswith("title:"):
        record = {"type": "custom-title", "customTitle": text[len("title:"):], "sessionId": name}
    else:
        record = {"type": "user", "uuid": f"{name}-{number}", "parentUuid": None, "cwd": "/home/ana/live",
                  "timestamp": "2026-03-20T10:00:00.000Z", "message": {"role": "user", "content": text}}
    with (folder / f"{name}.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    print("wrote", flush=True)
"""


class Writer:
    """Another process appending Claude Code lines; `write` returns once the line is on disk."""

    def __init__(self, folder: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(folder)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def write(self, native_id: str, text: str) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{native_id} {text}\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().strip() == "wrote"

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=WAIT)


def wait_until(changed: threading.Semaphore, condition: Callable[[], bool]) -> None:
    """Wait for live discovery's changes until `condition` holds (each change is an event, not a pause)."""
    while not condition():
        assert changed.acquire(timeout=WAIT), "live discovery never saw the change"


def title(store: SessionStore, session_id: str) -> str | None:
    """The session's title, None while the store does not list it."""
    try:
        return store.title(session_id)
    except StoreError:
        return None


def test_sessions_another_process_creates_and_grows_appear_while_watching(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    project = claude / "projects" / "-home-ana-live"
    project.mkdir(parents=True)
    changed = threading.Semaphore(0)
    writer = Writer(project)
    native = "5e551011-0000-4000-8000-000000000001"
    session = f"claude-code:{native}"
    with closing(open_store(tmp_path / "store", sources=[ForeignRoot.of("claude-code", claude)])) as store:
        live = LiveDiscovery(
            store.refresh,
            [tmp_path / "store", claude],
            changed.release,
            refresh_changed=store.refresh_changed,
        )
        live.start()
        assert live.ready.wait(WAIT)
        try:
            writer.write(native, "Tail the deploy log")
            wait_until(changed, lambda: title(store, session) == "Tail the deploy log")
            writer.write(native, "title:Deploy log tail")  # the session grows: a rename line
            wait_until(changed, lambda: title(store, session) == "Deploy log tail")
            assert store.record(session).cwd == "/home/ana/live"
        finally:
            live.stop()
            writer.close()
