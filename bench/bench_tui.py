"""Benchmark: the Textual app on a large store — keystroke → updated `@` popup, and cold start to first paint.

* **keystroke → popup**: with Pilot, type `@` and then queries one character at a time, each
  key after the previous one's results are on screen, with the composer's real debounce. For each
  key: from sending it to the first frame written out after the popup's rows and status line were
  redrawn with the new results (headless, but each frame is still turned into terminal output),
  minus `LOOKUP_DEBOUNCE`: what the user waits *beyond* the debounce. Beside it: the same frame
  measured from the moment the debounce ended, the candidate lookup alone (the reference service
  call inside the worker), keystroke → the typed character drawn in the input, and the full
  (generation 2) garbage collections that ran while typing (each one stalls the event loop).
  Keys come at most every `--key-interval-ms` (120: a fast typist); back to back, the echo would
  mostly measure Textual's 60 fps frame cap. The app freezes its start-up heap (`gc.freeze()`) once the
  first session is shown, so full collections stay short; the GC row shows any that still ran. It
  also rehearses the picker then, unseen (`SessionrefApp.rehearse_picker`), so the first key
  measured, the first `@`, costs what later ones do; every `@` still opens the popup (a layout pass).
* **first paint, in process**: `SessionrefApp` constructed and run headless until its first
  frame is drawn (store already indexed, imports warm).
* **cold process** (as `sessionref chat` starts): a fresh `python` imports the CLI
  (`sessionref_tui.cli`, the console script's module) and the launcher
  (`sessionref_tui.launch`), reads the settings and runs the app with launch's `WorkspaceOpener`
  (no other agents' histories; `OPENAI_*`/`SESSIONREF_*` variables removed). The app paints first;
  the opener imports the store, workspace and model client and opens the store in a thread
  (`open_store(catch_up=False)`, then `refresh()` in the background). Reported from the process
  start: first frame drawn, sessions on screen, whole process (it waits for the background
  catch-up before exiting). Run on the indexed store and on a copy of it without an index (the
  first-time indexing, with its progress bar).

Targets (issue 12): ≤ 16 ms beyond the debounce at p99, the first `@` included; a cold process's
first frame ≤ 0.45 s; first paint in process ≤ 1 s.

With `--text-search` the workspace also searches what was said (the picker's second group, issue 10):
the store's conversation index is built or caught up first (timed), then every keystroke also runs
the conversation search beside the title lookup, as in the app. The title rows' figures are then
the ones to compare with a run without it; the conversation search's own time is reported too.
`--while-walking` types while another thread walks the whole store back to back, the worst case of live
discovery's five-minute sweep (issue 18: a keystroke during a re-scan stays within the title completion's
budget); it prints the keystroke table only. `--root DIR` reuses a store (any DSH sessions directory, e.g. the
corpus `bench_text_search.py --corpus` writes under `logs/`), `--queries` and `--cwd` fit the queries to it.

Run: `.venv/bin/python bench/bench_tui.py [--sessions 100000] [--text-search]`. Prints a
markdown table. The store is generated with `bench_discovery.build_root` (DSH-layout logs written
directly).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_discovery import build_root
from bench_report import percentile
from sessionref.host.workspace import Workspace
from sessionref.models import DemoModel
from sessionref.store import open_store
from sessionref.textsearch.store_index import StoreConversationIndex
from sessionref_tui.app import SessionrefApp
from sessionref_tui.lookup import LOOKUP_DEBOUNCE
from sessionref_tui.textual_compat import filter_frames
from sessionref_tui.widgets.composer import Composer
from sessionref_tui.widgets.mention_popup import MentionPopup
from textual import events
from textual._compositor import CompositorUpdate
from textual.keys import _character_to_key
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import WorkerCancelled

QUERIES = ["parser", "proj-1", "zzz-none", "widget"]
"""Typed after `@`, one character at a time (no spaces: a space ends the mention token)."""
CWD = "/home/dev/proj-1"
SIZE = (120, 40)

COLD_START_SCRIPT = """
import asyncio, sys, time
from pathlib import Path
import sessionref_tui.cli  # the console script's module: its parser and commands load first
from sessionref_tui.launch import SessionrefApp, WorkspaceOpener  # what `sessionref chat` imports next
from sessionref_tui.textual_compat import filter_frames
from sessionref_tui.widgets.sidebar import Sidebar

marks = {}

def painted(screen, renderable):
    marks.setdefault("painted", time.time())  # the first frame written to the (headless) terminal
    return True

async def sessions_shown(pilot):
    app = pilot.app
    while not (app.chat.workspace_ready and app.query_one(Sidebar).entries):
        await asyncio.sleep(0.005)  # polling: waiting on the workers would include the background catch-up
    marks["ready"] = time.time()
    app.exit()

from sessionref.host.settings import load_settings  # as run_chat: settings are read before the app starts

opener = WorkspaceOpener(load_settings(store_root=Path(sys.argv[1])), sys.argv[2])  # no agents' histories
try:
    app = SessionrefApp(open_workspace=opener, owns_workspace=True)
    filter_frames(app, painted)
    app.run(headless=True, size=(120, 40), auto_pilot=sessions_shown)
finally:
    opener.close()
print(marks["painted"], marks["ready"])
"""


@dataclass
class KeystrokeTimes:
    """Milliseconds per typed character (see the module docstring)."""

    echoed: list[float] = field(default_factory=list)
    painted: list[float] = field(default_factory=list)
    after_debounce: list[float] = field(default_factory=list)
    lookups: list[float] = field(default_factory=list)
    said_lookups: list[float] = field(default_factory=list)
    """The conversation search of each key that ran to its end (with `--text-search`)."""
    full_gc_pauses: list[float] = field(default_factory=list)
    """Every full (generation 2) garbage collection while typing."""


class FrameWatch:
    """Sees every frame the app displays, and which watched widgets were drawn into it.

    Wraps, on this one app only, the frame writer (`textual_compat.filter_frames`) and the
    `render_lines` of each watched widget (the compositor calls it when it draws
    that widget's new content). Headless Textual skips turning a frame into
    terminal output; the watch does that itself so its cost stays in the numbers.
    """

    def __init__(self, app: SessionrefApp) -> None:
        self.probes: list[PaintProbe] = []

        def written(screen: Any, renderable: Any) -> bool:
            if isinstance(renderable, CompositorUpdate):
                renderable.render_segments(app.console)
            now = time.perf_counter()
            for probe in self.probes:
                probe.frame_out(now)
            return True

        filter_frames(app, written)

    def watch(self, widget: Widget) -> None:
        """Report every draw of `widget` to the probes."""
        real_render_lines = widget.render_lines

        def render_lines(crop: Any) -> Any:
            for probe in self.probes:
                probe.widget_drawn(widget)
            return real_render_lines(crop)

        widget.render_lines = render_lines  # type: ignore[method-assign]


class PaintProbe:
    """`expect(widgets)` arms it; `drawn` is set by the first frame out after all of them were drawn."""

    def __init__(self, frames: FrameWatch) -> None:
        self.drawn = asyncio.Event()
        self.drawn_at = 0.0
        self._waiting: set[Widget] | None = None
        frames.probes.append(self)

    def expect(self, widgets: set[Widget]) -> None:
        """Arm for `widgets`; with none, nothing on screen changes and `drawn` is set at once."""
        self.drawn.clear()
        self._waiting = set(widgets) if widgets else None
        if not widgets:
            self.drawn_at = time.perf_counter()
            self.drawn.set()

    def widget_drawn(self, widget: Widget) -> None:
        """Called by the watch when `widget` is drawn."""
        if self._waiting is not None:
            self._waiting.discard(widget)

    def frame_out(self, now: float) -> None:
        """Called by the watch after each frame."""
        if self._waiting is not None and not self._waiting:
            self._waiting = None
            self.drawn_at = now
            self.drawn.set()


class FullCollections:
    """Times every full (generation 2) garbage collection while in use (`with`)."""

    def __init__(self, pauses: list[float]) -> None:
        self.pauses = pauses
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses.append((time.perf_counter() - self._started) * 1000)

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *_exc: object) -> None:
        gc.callbacks.remove(self._callback)


class WholeWalks:
    """While in effect, a thread walks the whole store again and again (`SessionStore.refresh`), as
    live discovery's periodic sweep does once every few minutes: the worst case for a keystroke."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.done = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="whole-walks", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.store.refresh()
            self.done += 1

    def __enter__(self) -> WholeWalks:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()


async def settled(pilot: Pilot[Any]) -> None:
    """Until no worker of the app runs, including those a finished one started (the start-up's
    picker rehearsal and lookup preparation come after the first frames); a worker the app
    replaced (cancelled) counts as done."""
    app = pilot.app
    for _ in range(50):
        await pilot.pause()
        running = [worker for worker in app.workers if worker.is_running]
        if not running:
            return
        for worker in running:
            with contextlib.suppress(WorkerCancelled):
                await worker.wait()


async def measure_keystrokes(
    app: SessionrefApp, rounds: int, *, key_interval: float = 0.0, queries: list[str] | None = None
) -> KeystrokeTimes:
    """Type every query `rounds` times, one character at a time, with the real debounce.

    A key is sent once the previous key's results are on screen and at least
    `key_interval` seconds after the previous key (a typing cadence).
    """
    times = KeystrokeTimes()
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)  # the start-up's work done, as before a person types
        composer = app.query_one(Composer)
        popup = app.query_one(MentionPopup)
        rows = popup.candidate_list
        status = popup.query_one("#mention-status", Static)
        source = composer.source
        assert source is not None
        frames = FrameWatch(app)
        for widget in (rows, status, composer.input):
            frames.watch(widget)
        results = PaintProbe(frames)
        echo = PaintProbe(frames)

        real_candidates = source.candidates

        async def timed_candidates(query: str, signal: Any) -> Any:
            start = time.perf_counter()
            try:
                return await real_candidates(query, signal)
            finally:
                times.lookups.append((time.perf_counter() - start) * 1000)

        source.candidates = timed_candidates  # type: ignore[method-assign]

        real_conversations = source.conversations

        async def timed_conversations(query: str, signal: Any) -> Any:
            start = time.perf_counter()
            found = await real_conversations(query, signal)
            if query.strip() and app.workspace.conversations is not None:
                times.said_lookups.append((time.perf_counter() - start) * 1000)
            return found

        source.conversations = timed_conversations  # type: ignore[method-assign]

        debounce_ends: list[float] = []
        real_sleep = composer._sleep

        async def timed_sleep(seconds: float) -> None:
            await real_sleep(seconds)
            if seconds == LOOKUP_DEBOUNCE:
                debounce_ends.append(time.perf_counter())

        composer._sleep = timed_sleep  # the real wait, only timestamped

        real_show = popup.show_results

        def show_results(query: str, candidates: Any) -> None:
            shown_before = status.content
            real_show(query, candidates)
            expected: set[Widget] = {rows} if rows.row_count else set()
            if status.content is not shown_before:
                expected.add(status)
            results.expect(expected)

        popup.show_results = show_results  # type: ignore[method-assign]

        with FullCollections(times.full_gc_pauses):
            typed = queries or QUERIES
            await type_queries(pilot, rounds, key_interval, times, debounce_ends, results, echo, typed)
    return times


async def type_queries(
    pilot: Pilot[Any],
    rounds: int,
    key_interval: float,
    times: KeystrokeTimes,
    debounce_ends: list[float],
    results: PaintProbe,
    echo: PaintProbe,
    queries: list[str],
) -> None:
    """The typing itself (see `measure_keystrokes`)."""
    app = pilot.app
    composer = app.query_one(Composer)
    for _ in range(rounds):
        for query in queries:
            for char in "@" + query:
                results.drawn.clear()
                echo.expect({composer.input})
                start = time.perf_counter()
                # The key goes through the app's normal dispatch, without Pilot's wait-for-idle.
                app.post_message(events.Key(_character_to_key(char), char))
                await asyncio.wait_for(results.drawn.wait(), timeout=30)
                await asyncio.wait_for(echo.drawn.wait(), timeout=30)
                times.echoed.append((echo.drawn_at - start) * 1000)
                total = (results.drawn_at - start) * 1000
                times.painted.append(total - LOOKUP_DEBOUNCE * 1000)
                times.after_debounce.append((results.drawn_at - debounce_ends[-1]) * 1000)
                await asyncio.sleep(max(0.0, start + key_interval - time.perf_counter()))
            await pilot.press("escape", "ctrl+a", "ctrl+k")
            await settled(pilot)


async def first_paint_in_process(root: Path) -> tuple[float, float]:
    """Milliseconds to open the indexed store, then from constructing the app to its first drawn frame."""
    start = time.perf_counter()
    store = open_store(root)
    opened = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    workspace = Workspace(store, DemoModel(pace=0), cwd=CWD)
    app = SessionrefApp(workspace, owns_workspace=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        return opened, (time.perf_counter() - start) * 1000


def first_paint_cold(root: Path) -> tuple[float, float, float]:
    """Milliseconds from a fresh process start to its first frame, to its sessions shown, to its exit."""
    own = ("OPENAI_", "SESSIONREF_")  # the user's model and settings must not change what is measured
    env = {name: value for name, value in os.environ.items() if not name.startswith(own)}
    start = time.time()
    done = subprocess.run(
        [sys.executable, "-c", COLD_START_SCRIPT, str(root), CWD],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    ended = time.time()
    painted, ready = (float(value) for value in done.stdout.split()[-2:])
    return (painted - start) * 1000, (ready - start) * 1000, (ended - start) * 1000


def without_index(root: Path, copy: Path) -> Path:
    """A copy of `root` with no discovery index: the next open indexes every log."""
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".sessionref-index.sqlite*"))
    return copy


def print_keystroke_rows(keys: KeystrokeTimes) -> None:
    """The keystroke rows of the markdown table."""
    debounce = f"{LOOKUP_DEBOUNCE * 1000:.0f} ms"
    for label, samples, target in (
        (f"keystroke → popup painted, beyond the {debounce} debounce", keys.painted, "≤ 16"),
        ("… the same frame, from the end of the debounce", keys.after_debounce, ""),
        ("… of which the candidate lookup", keys.lookups, ""),
        ("keystroke → typed character drawn", keys.echoed, ""),
        *(
            (("conversation search beside it (not awaited by the rows)", keys.said_lookups, ""),)
            if keys.said_lookups
            else ()
        ),
    ):
        print(
            f"| {label} (ms) | {percentile(samples, 0.5):.1f} | {percentile(samples, 0.99):.1f} | "
            f"{max(samples):.1f} | {target} |"
        )
    pauses = keys.full_gc_pauses
    longest = f"{max(pauses):.1f}" if pauses else "–"
    print(f"| full (gen 2) GC pauses while typing: {len(pauses)}, longest (ms) | | | {longest} | |")


def print_keystroke_note(keys: KeystrokeTimes, args: argparse.Namespace) -> None:
    """What the keystroke rows were measured on."""
    search = "with" if args.text_search else "without"
    print(
        f"\n{len(keys.painted)} keystrokes over queries {args.queries} at {SIZE[0]}×{SIZE[1]}, Pilot, "
        "headless; "
        f"a key at most every {args.key_interval_ms:.0f} ms and only after the previous results were drawn; "
        f"{search} conversation search."
    )


def print_keystrokes(keys: KeystrokeTimes, args: argparse.Namespace) -> None:
    """The table with the keystroke rows only."""
    print("| measure | p50 | p99 | max | target |")
    print("|---|---|---|---|---|")
    print_keystroke_rows(keys)
    print_keystroke_note(keys, args)


def main() -> None:
    """Build a store of `--sessions` logs, index it once, then print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--root", type=Path, help="reuse (or build and keep) the store at this path")
    parser.add_argument("--rounds", type=int, default=3, help="times each query is typed")
    parser.add_argument("--keystrokes-only", action="store_true", help="skip the start-up measures")
    parser.add_argument(
        "--key-interval-ms", type=float, default=120, help="typing cadence: least time between two keys"
    )
    parser.add_argument("--text-search", action="store_true", help="search what was said too (issue 10)")
    parser.add_argument(
        "--queries",
        type=lambda text: text.split(","),
        default=QUERIES,
        help="comma-separated queries typed after @ (default: %(default)s)",
    )
    parser.add_argument("--cwd", default=CWD, help="the workspace folder (ranks sessions of it first)")
    parser.add_argument(
        "--while-walking",
        action="store_true",
        help="type while another thread walks the whole store back to back (live discovery's sweep)",
    )
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="sessionref-bench-tui-"))
    try:
        root = args.root or base / "store"
        started = time.perf_counter()
        if not root.exists():
            build_root(root, args.sessions, random.Random(7))
        built = time.perf_counter() - started
        started = time.perf_counter()
        open_store(root).close()
        indexed = time.perf_counter() - started

        store = open_store(root)
        conversations = None
        if args.text_search:
            conversations = StoreConversationIndex(store)
            started = time.perf_counter()
            report = conversations.catch_up_now()
            print(
                f"Conversation index {'built' if report.build else 'caught up'} in "
                f"{time.perf_counter() - started:.1f} s ({report.fed:,} sessions read).\n"
            )
        workspace = Workspace(store, DemoModel(pace=0), cwd=args.cwd, conversations=conversations)
        with WholeWalks(store) if args.while_walking else contextlib.nullcontext() as walks:
            keys = asyncio.run(
                measure_keystrokes(
                    SessionrefApp(workspace, owns_workspace=True),
                    args.rounds,
                    key_interval=args.key_interval_ms / 1000,
                    queries=args.queries,
                )
            )
        if walks is not None:
            print(f"While typing, another thread walked the whole store {walks.done} times, back to back.\n")
        if args.keystrokes_only or args.while_walking:
            print_keystrokes(keys, args)
            return
        in_process = asyncio.run(first_paint_in_process(root))
        cold = [first_paint_cold(root) for _ in range(3)]
        unindexed = first_paint_cold(without_index(root, base / "unindexed"))
    finally:
        shutil.rmtree(base, ignore_errors=True)

    print(f"Store: {args.sessions:,} sessions (built in {built:.1f} s, opened in {indexed:.1f} s).\n")
    print("| measure | p50 | p99 | max | target |")
    print("|---|---|---|---|---|")
    print_keystroke_rows(keys)
    print(f"| open the indexed store (ms) | {in_process[0]:.0f} | | | |")
    print(f"| first paint once the store is open, in process (ms) | {in_process[1]:.0f} | | | ≤ 1000 |")
    for label, column, target in (
        ("first frame painted", 0, "≤ 450"),
        ("sessions on screen", 1, ""),
        ("process exit (after the background catch-up)", 2, ""),
    ):
        values = [run[column] for run in cold]
        print(
            f"| cold process, indexed store: {label} (ms) | {percentile(values, 0.5):.0f} | | "
            f"{max(values):.0f} | {target} |"
        )
    for label, column in (("first frame painted", 0), ("sessions on screen (indexing done)", 1)):
        print(f"| cold process, no index yet: {label} (ms) | {unindexed[column]:.0f} | | | |")
    print_keystroke_note(keys, args)


if __name__ == "__main__":
    main()
