"""Scanning many session folders seen for the first time, on every core.

The first walk of a big store (a DSH sessions folder with 100k logs) is CPU-bound Python: reading
each log's header, latest title and last line. Past `PARALLEL_MIN_FOLDERS` new folders, helper
processes scan chunks of folders while this thread scans chunks too: helpers take chunks from the
front of the list, this thread from the back, so a core that is busy with other work slows the
scan down instead of stalling it. Results are assembled in folder order: exactly what a serial
scan gives. Warnings a helper logs are logged here again.

A helper is a plain `python -m sessionref.store.scan_helper` child speaking length-prefixed pickles
on its stdin and stdout (multiprocessing's spawn would re-run the caller's main script in it, and
fork would copy this process's threads' locks). If a helper cannot start or dies, the chunks it
held are scanned here; without helpers (one core, a frozen build) the scan runs here alone.
"""

from __future__ import annotations

import contextlib
import logging
import operator
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import IO, Any

from sessionref.store.layout import LOG_NAME, ZSTD_LOG_NAME
from sessionref.store.scan import LogState, scan_log

log = logging.getLogger("sessionref.store")

PARALLEL_MIN_FOLDERS = 4_000
"""Below this many new folders a helper process costs more (~0.2 s to start) than it saves."""
CHUNK_FOLDERS = 1_000
"""Folders per chunk: small enough to balance two busy cores, big enough to amortise a round trip."""
MAX_HELPERS = 3
"""Helpers past this add start-up time and memory for little: the rest of an open is serial."""
_AS_ROW = operator.attrgetter(*(field.name for field in fields(LogState)))
_FRAME = struct.Struct("<Q")


def scan_folder(root: str, folder: str) -> list[LogState]:
    """The logs (plain, then compressed) found in one `project/session` folder seen for the first time."""
    found: list[LogState] = []
    for name in (LOG_NAME, ZSTD_LOG_NAME):
        state = scan_log(root, f"{folder}/{name}", None)
        if state is not None:
            found.append(state)
    return found


def scan_chunk(root: str, folders: Sequence[str]) -> list[LogState]:
    """`scan_folder` over `folders`, in order."""
    return [state for folder in folders for state in scan_folder(root, folder)]


def helper_count() -> int:
    """How many helper processes a big first scan starts: one fewer than the usable cores."""
    if getattr(sys, "frozen", False) or not sys.executable:
        return 0
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(0, min(cores - 1, MAX_HELPERS))


def scan_new_folders(
    root: str, folders: Sequence[str], progress: Callable[[int], None], *, helpers: int | None = None
) -> list[LogState]:
    """`scan_folder` over every folder, in folder order, with helper processes for a big scan.

    `progress(done)` reports how many folders are scanned (an exception raised in it stops the scan).
    """
    count = helper_count() if helpers is None else helpers
    if count <= 0 or len(folders) < PARALLEL_MIN_FOLDERS:
        states: list[LogState] = []
        for done, folder in enumerate(folders, start=1):
            states.extend(scan_folder(root, folder))
            progress(done)
        return states
    chunks = [folders[start : start + CHUNK_FOLDERS] for start in range(0, len(folders), CHUNK_FOLDERS)]
    with _Helpers(count) as pool:
        results = pool.scan(root, chunks, progress)
    return [state for chunk in results for state in chunk]


# -- the helpers, seen from this process --------------------------------------------------------


@dataclass(eq=False)
class _Helper:
    process: subprocess.Popen[bytes]
    chunk: int | None = None


class _Helpers:
    """Helper processes and the loop that shares chunks between them and this thread."""

    def __init__(self, count: int) -> None:
        self._replies: queue.Queue[tuple[_Helper, Any]] = queue.Queue()
        self._helpers: list[_Helper] = []
        for _ in range(count):
            try:
                process = subprocess.Popen(
                    [sys.executable, "-m", "sessionref.store.scan_helper"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            except OSError as error:
                log.info("scanning without a helper process: %s", error)
                break
            helper = _Helper(process)
            self._helpers.append(helper)
            threading.Thread(target=self._read, args=(helper,), daemon=True, name="sessionref-scan").start()

    def __enter__(self) -> _Helpers:
        return self

    def __exit__(self, *exc_info: object) -> None:
        for helper in self._helpers:
            stdin = helper.process.stdin
            if stdin is not None:
                with contextlib.suppress(OSError):
                    stdin.close()  # the helper exits at the end of its input
        for helper in self._helpers:
            try:
                helper.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                helper.process.kill()
                helper.process.wait()

    def _read(self, helper: _Helper) -> None:
        stdout = helper.process.stdout
        while stdout is not None:
            try:
                reply = _read_frame(stdout)
            except (OSError, EOFError, pickle.UnpicklingError) as error:
                self._replies.put((helper, error))
                return
            self._replies.put((helper, reply))

    def _give(self, helper: _Helper, index: int, root: str, chunk: Sequence[str]) -> bool:
        helper.chunk = index
        try:
            assert helper.process.stdin is not None
            _write_frame(helper.process.stdin, (root, list(chunk)))
        except OSError:
            return False
        return True

    def scan(
        self, root: str, chunks: list[Sequence[str]], progress: Callable[[int], None]
    ) -> list[list[LogState]]:
        results: list[list[LogState] | None] = [None] * len(chunks)
        waiting = deque(range(len(chunks)))
        busy: set[_Helper] = set()
        done = 0

        def next_for(helper: _Helper) -> None:
            while waiting:
                index = waiting.popleft()
                if self._give(helper, index, root, chunks[index]):
                    busy.add(helper)
                    return
                waiting.appendleft(index)  # its stdin is gone: this thread scans that chunk
                return

        for helper in self._helpers:
            next_for(helper)
        while waiting or busy:
            try:
                helper, reply = self._replies.get(block=not waiting)
            except queue.Empty:  # every helper is busy: scan a chunk here, from the back
                index = waiting.pop()
                results[index] = scan_chunk(root, chunks[index])
                done += len(chunks[index])
                progress(done)
                continue
            busy.discard(helper)
            held, helper.chunk = helper.chunk, None
            if held is None:
                continue
            index = held
            if isinstance(reply, BaseException) or not isinstance(reply, tuple):
                log.info("a scan helper stopped (%s); its folders are scanned here", reply)
                waiting.append(index)
                continue
            rows, warnings = reply
            for message in warnings:
                log.warning("%s", message)
            results[index] = [LogState(*row) for row in rows]
            done += len(chunks[index])
            progress(done)
            next_for(helper)
        return [chunk if chunk is not None else [] for chunk in results]


def _write_frame(stream: IO[bytes], value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_FRAME.pack(len(data)) + data)
    stream.flush()


def _read_frame(stream: IO[bytes]) -> Any:
    head = stream.read(_FRAME.size)
    if len(head) < _FRAME.size:
        raise EOFError("the stream ended")
    (size,) = _FRAME.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the stream ended inside a frame")
    return pickle.loads(data)  # our own helper, over a pipe we created


# -- the helper process --------------------------------------------------------------------------


class _Collected(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def serve(requests: IO[bytes], replies: IO[bytes]) -> None:
    """The helper's loop: scan each `(root, folders)` request; reply `(state rows, warnings)`."""
    collected = _Collected()
    store_log = logging.getLogger("sessionref.store")
    store_log.addHandler(collected)
    store_log.propagate = False  # the parent logs them, through its own logging setup
    while True:
        try:
            root, folders = _read_frame(requests)
        except EOFError:
            return
        collected.messages = []
        rows = [_AS_ROW(state) for state in scan_chunk(root, folders)]
        _write_frame(replies, (rows, collected.messages))
