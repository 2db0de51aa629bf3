"""Live discovery: a change on disk re-walks the store once per batch; a writer process's sessions appear.

The watch covers only the top folders of each root (a bounded number, whatever the store's size);
grown sessions below them are found by probing the recently active ones, and folders created below
them by probing the young ones. Fake watchers report batches, and each of their idle ticks probes
(`probe_seconds=0`), so every step here is an event, never a pause.
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from sessionref.host.live_discovery import RESCANNING, WATCHING, LiveDiscovery
from sessionref.store import SessionStore, StoreError, open_store
from sessionref.store.foreign_state import ForeignRoot

WAIT = 60
"""Seconds a test waits for an event before it fails (a bound, never a pause: events end the wait)."""


class FakeWatcher:
    """Yields one batch per item put in `batches`; None ends the watch; an exception is raised from it.

    Each watch it sets up puts the folders it was given in `calls`; the first `failing_starts` fail
    to set up."""

    def __init__(self, failing_starts: int = 0) -> None:
        self.batches: queue.Queue[object] = queue.Queue()
        self.calls: queue.Queue[list[Path]] = queue.Queue()
        self.failing_starts = failing_starts

    def __call__(self, folders: Sequence[Path], stop: threading.Event) -> Iterable[Collection[object]]:
        if self.failing_starts:
            self.failing_starts -= 1
            raise OSError("inotify watch limit reached")
        self.calls.put(list(folders))
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


def test_a_watch_that_cannot_be_set_up_falls_back_to_rescanning(tmp_path: Path) -> None:
    walked = threading.Event()
    live = LiveDiscovery(
        lambda: walked.set() or False,
        [tmp_path],
        lambda: None,
        watcher=FakeWatcher(failing_starts=1),
        poll_seconds=0.01,
    )
    live.start()
    assert walked.wait(WAIT)
    live.stop()
    assert live.mode == RESCANNING


def test_a_watch_failing_once_in_place_is_planned_again_and_keeps_watching(tmp_path: Path) -> None:
    walks: queue.Queue[str] = queue.Queue()
    watcher = FakeWatcher()
    live = LiveDiscovery(lambda: walks.put("everything") or False, [tmp_path], lambda: None, watcher=watcher)
    live.start()
    assert walks.get(timeout=WAIT) == "everything" and watcher.calls.get(timeout=WAIT) == [tmp_path]
    watcher.batches.put(OSError("a folder it watched is gone"))
    assert watcher.calls.get(timeout=WAIT) == [tmp_path]  # set up again, from a new plan
    assert walks.get(timeout=WAIT) == "everything"  # what happened meanwhile
    watcher.batches.put(None)
    live.stop()
    assert live.mode == WATCHING


def dsh_store_tree(root: Path, projects: int, sessions: int) -> None:
    """Folders shaped like a store's: `<root>/<project>/<session>/session.jsonl`."""
    for project in range(projects):
        for session in range(sessions):
            folder = root / f"-home-ana-p{project}" / f"s{session}"
            folder.mkdir(parents=True)
            (folder / "session.jsonl").write_text("{}\n")


def test_only_the_top_folders_are_watched_and_their_number_stays_bounded(tmp_path: Path) -> None:
    store, claude, crowded = tmp_path / "store", tmp_path / "claude", tmp_path / "crowded"
    dsh_store_tree(store, projects=20, sessions=30)  # 600 session folders
    for project in range(5):
        (claude / "projects" / f"-home-ana-p{project}").mkdir(parents=True)
        (claude / "projects" / f"-home-ana-p{project}" / "a.jsonl").write_text("{}\n")
    for project in range(120):
        (crowded / f"p{project}").mkdir(parents=True)
    watcher = FakeWatcher()
    live = LiveDiscovery(
        lambda: False, [store, claude, crowded], lambda: None, watcher=watcher, max_watched=100
    )
    live.start()
    watched = set(watcher.calls.get(timeout=WAIT))
    watcher.batches.put(None)
    live.stop()
    # The store: its root and project folders (where new sessions' folders show up), not the 600 below.
    assert {store, *(store / f"-home-ana-p{n}" for n in range(20))} <= watched
    assert not any(folder.parent.parent == store for folder in watched)
    # Claude Code: down to the project folders, where its session files are.
    assert {
        claude,
        claude / "projects",
        *(claude / "projects" / f"-home-ana-p{n}" for n in range(5)),
    } <= watched
    # 120 folders do not fit a budget of 100: only their parent is watched.
    assert crowded in watched and not any(folder.parent == crowded for folder in watched)
    assert len(watched) == 1 + 20 + 2 + 5 + 1 <= 3 * 100
    assert live.watched == sorted(watched)


def test_a_root_inside_another_is_watched_with_its_own_budget(tmp_path: Path) -> None:
    gemini = tmp_path / ".gemini"
    antigravity = gemini / "antigravity-cli"
    for number in range(30):
        (gemini / "tmp" / f"project-{number}" / "chats").mkdir(parents=True)
    (antigravity / "brain" / "c1").mkdir(parents=True)
    watcher = FakeWatcher()
    live = LiveDiscovery(lambda: False, [gemini, antigravity], lambda: None, watcher=watcher, max_watched=20)
    live.start()
    watched = set(watcher.calls.get(timeout=WAIT))
    watcher.batches.put(None)
    live.stop()
    # Gemini's 30 project folders do not fit its 20; Antigravity's folders are its own, all watched.
    assert {antigravity, antigravity / "brain", antigravity / "brain" / "c1"} <= watched
    assert {gemini, gemini / "tmp"} <= watched and gemini / "tmp" / "project-0" not in watched


def test_a_new_project_folder_is_watched_from_then_on_and_a_deleted_one_is_dropped(tmp_path: Path) -> None:
    projects = tmp_path / "claude" / "projects"
    (projects / "-home-ana-p0").mkdir(parents=True)
    walks: queue.Queue[object] = queue.Queue()
    watcher = FakeWatcher()
    live = LiveDiscovery(
        lambda: walks.put("everything") or False,
        [tmp_path / "claude"],
        lambda: None,
        refresh_changed=lambda paths: walks.put(sorted(paths)) or False,
        watcher=watcher,
    )
    live.start()
    assert watcher.calls.get(timeout=WAIT) == [tmp_path / "claude", projects, projects / "-home-ana-p0"]
    assert walks.get(timeout=WAIT) == "everything"
    new = projects / "-home-ana-new"
    new.mkdir()
    watcher.batches.put({(1, str(new))})  # watchfiles' Change.added
    assert walks.get(timeout=WAIT) == [new]  # the batch: its parent is walked
    assert new in watcher.calls.get(timeout=WAIT)  # the watch restarted with it
    assert walks.get(timeout=WAIT) == [new / "*"]  # what was written in it before its watch was in place
    new.rmdir()
    watcher.batches.put({(3, str(new))})  # Change.deleted
    assert walks.get(timeout=WAIT) == [new]
    assert new not in watcher.calls.get(timeout=WAIT)
    watcher.batches.put(None)
    live.stop()


def test_a_folder_created_below_the_watched_levels_is_probed_until_its_files_appear(tmp_path: Path) -> None:
    store = tmp_path / "store"
    dsh_store_tree(store, projects=2, sessions=60)  # the session folders do not fit: not watched
    walks: queue.Queue[object] = queue.Queue()
    watcher = FakeWatcher()
    live = LiveDiscovery(
        lambda: walks.put("everything") or False,
        [store],
        lambda: None,
        refresh_changed=lambda paths: walks.put(sorted(paths)) or False,
        watcher=watcher,
        probe_seconds=0,
        max_watched=10,
    )
    live.start()
    assert walks.get(timeout=WAIT) == "everything"
    young = store / "-home-ana-p0" / "s-new"
    young.mkdir()
    watcher.batches.put({(1, str(young))})
    assert walks.get(timeout=WAIT) == [young]
    (young / "deep" / "logs").mkdir(parents=True)
    (young / "deep" / "logs" / "transcript.jsonl").write_text("{}\n")
    watcher.batches.put(set())  # an idle tick: a probe
    assert walks.get(timeout=WAIT) == [young / "deep" / "logs" / "transcript.jsonl"]
    watcher.batches.put(None)
    live.stop()
    assert young not in live.watched


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
    folder.mkdir(parents=True, exist_ok=True)
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


def watching(
    store: SessionStore, claude: Path, changed: threading.Semaphore, **options: Any
) -> LiveDiscovery:
    """Live discovery of `store` and its Claude Code home `claude`, wired as the workspace wires it
    (`changed` released after each re-walk); not started."""
    return LiveDiscovery(
        store.refresh,
        [store.root, claude],
        changed.release,
        refresh_changed=store.refresh_changed,
        **options,
    )


def test_sessions_another_process_creates_and_grows_appear_while_watching(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    project = claude / "projects" / "-home-ana-live"
    project.mkdir(parents=True)
    changed = threading.Semaphore(0)
    writer = Writer(project)
    native = "5e551011-0000-4000-8000-000000000001"
    session = f"claude-code:{native}"
    with closing(open_store(tmp_path / "store", sources=[ForeignRoot.of("claude-code", claude)])) as store:
        live = watching(store, claude, changed)
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


def test_a_session_in_a_new_project_folder_appears_and_its_growth_is_seen_while_watching(
    tmp_path: Path,
) -> None:
    claude = tmp_path / "claude"
    (claude / "projects").mkdir(parents=True)
    changed = threading.Semaphore(0)
    writer = Writer(claude / "projects" / "-home-ana-new")  # the folder does not exist yet
    native = "5e551011-0000-4000-8000-000000000002"
    session = f"claude-code:{native}"
    with closing(open_store(tmp_path / "store", sources=[ForeignRoot.of("claude-code", claude)])) as store:
        live = watching(store, claude, changed, recent_files=store.recent_files)
        live.start()
        assert live.ready.wait(WAIT)
        try:
            writer.write(native, "Start the new project")
            wait_until(changed, lambda: title(store, session) == "Start the new project")
            writer.write(native, "title:New project")
            wait_until(changed, lambda: title(store, session) == "New project")
        finally:
            live.stop()
            writer.close()


def test_a_grown_session_inside_an_unwatched_project_folder_is_noticed(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    projects = claude / "projects"
    for name in ("-home-ana-a", "-home-ana-b", "-home-ana-c"):
        (projects / name).mkdir(parents=True)
    native = "5e551011-0000-4000-8000-000000000003"
    session = f"claude-code:{native}"
    writer = Writer(projects / "-home-ana-b")
    writer.write(native, "An old session")
    changed = threading.Semaphore(0)
    watcher = FakeWatcher()
    with closing(open_store(tmp_path / "store", sources=[ForeignRoot.of("claude-code", claude)])) as store:
        assert title(store, session) == "An old session"
        live = watching(
            store,
            claude,
            changed,
            recent_files=store.recent_files,
            watcher=watcher,
            probe_seconds=0,
            max_watched=2,  # the store and `claude/projects/`, not the project folders below it
        )
        live.start()
        try:
            assert projects / "-home-ana-b" not in watcher.calls.get(timeout=WAIT)
            assert live.ready.wait(WAIT)
            writer.write(native, "title:Resumed today")  # the session grows where no watch sees it
            watcher.batches.put(set())  # an idle tick: the probe of the recently active sessions
            wait_until(changed, lambda: title(store, session) == "Resumed today")
            assert 0 < live.probed <= 4  # its file and folder (the only session), not the whole home
        finally:
            watcher.batches.put(None)
            live.stop()
            writer.close()


def test_what_neither_the_watch_nor_the_probe_sees_is_swept_by_a_whole_walk_now_and_then(
    tmp_path: Path,
) -> None:
    walks: queue.Queue[object] = queue.Queue()
    watcher = FakeWatcher()
    live = LiveDiscovery(
        lambda: walks.put("everything") or False,
        [tmp_path],
        lambda: None,
        refresh_changed=lambda paths: walks.put(sorted(paths)) or False,
        watcher=watcher,
        sweep_seconds=0,  # every tick is due (the default is minutes)
    )
    live.start()
    assert walks.get(timeout=WAIT) == "everything"  # the start
    watcher.batches.put(set())  # an idle tick with nothing reported
    assert walks.get(timeout=WAIT) == "everything"
    watcher.batches.put(None)
    live.stop()
    assert walks.empty()  # one whole walk per tick, nothing else
