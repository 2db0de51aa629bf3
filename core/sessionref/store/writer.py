"""Writing session logs: creating a session's files, appending whole events and deleting, under its lock.

Every write follows one protocol, whichever sessionref process makes it:

1. enter the session folder without following links (`paths.Folder`);
2. take the session's exclusive lock (`locking.SessionLock`; readers never take it);
3. read the log's real tail: whether its last line is complete, and the last seq;
4. an incomplete last line means someone died or is writing: in a log sessionref created, every
   writer holds this lock while it writes, so it is a fragment left by a crash and is moved to
   `session.jsonl.torn` (or given its newline when it already parses); in another program's log
   that program is writing right now, so nothing is written (`STORE_LOG_BUSY`);
5. append the new events, numbered from that last seq, in one `write` and `fsync`. If the write
   fails half way the log is cut back to its size before, so it only ever holds whole lines.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sessionref.contract.log_values import is_seq
from sessionref.store.errors import (
    STORE_INVALID_LOG,
    STORE_LOG_BUSY,
    STORE_LOG_LINKED,
    STORE_SESSION_EXISTS,
    STORE_SESSION_NOT_FOUND,
    StoreError,
    shown_id,
)
from sessionref.store.events import build_events
from sessionref.store.fold import fold_surface
from sessionref.store.layout import LOG_NAME, ZSTD_LOG_NAME
from sessionref.store.locking import (
    FOREIGN_LOCK_DIR,
    LOCK_FILE_NAME,
    OWNER_NOTE,
    SessionLock,
    foreign_lock_name,
)
from sessionref.store.logfile import (
    TORN_SUFFIX,
    LogReport,
    encode_line,
    is_header,
    parse_line,
    parse_log_report,
    record_last_seq,
)
from sessionref.store.paths import Folder, pread_exact

log = logging.getLogger("sessionref.store")

_CREATE_ATTEMPTS = 3
_SEQ_PREFIX = re.compile(rb'\{"type":"[^"\\]{1,200}","seq":(\d{1,16})[,}]')
TAIL_WINDOW = 64 * 1024
"""Bytes read per step when looking backwards for the log's last line (doubles for long lines)."""


@dataclass(frozen=True, slots=True)
class LogTarget:
    """A log to write: the store root, its `project/session/name` path, whether sessionref created it."""

    root: str
    relative: str
    own: bool

    @property
    def folder_parts(self) -> tuple[str, str]:
        """The project and session folder names."""
        project, session, _name = self.relative.split("/")
        return project, session

    @property
    def name(self) -> str:
        """The log's file name."""
        return self.relative.rsplit("/", 1)[1]


@contextmanager
def locked_folder(target: LogTarget) -> Iterator[Folder]:
    """The session folder of `target`, opened, with the session's write lock held."""
    with Folder(target.root, target.folder_parts) as folder:
        if target.own:
            with SessionLock(folder, LOCK_FILE_NAME, must_exist=True):
                yield folder
        else:
            name = foreign_lock_name("/".join(target.folder_parts))
            with (
                Folder(target.root, (FOREIGN_LOCK_DIR,), create=True) as locks,
                SessionLock(locks, name, must_exist=False),
            ):
                yield folder


# -- reading the tail --------------------------------------------------------------------------


def _complete_end(fd: int, size: int) -> int:
    """Offset just past the last newline of the file (`size` when it ends with one, 0 without any)."""
    if size == 0 or pread_exact(fd, 1, size - 1) == b"\n":
        return size
    end, window = size, TAIL_WINDOW
    while end > 0:
        start = max(0, end - window)
        newline = pread_exact(fd, end - start, start).rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        end, window = start, window * 2
    return 0


def _line_seq(line: bytes) -> int | None:
    record = parse_line(line)
    if record is not None:
        return record_last_seq(record)
    # A line readers skip (e.g. nested too deep) may still hold a seq other programs read:
    # continue after it rather than repeat it.
    match = _SEQ_PREFIX.match(line)
    seq = int(match.group(1)) if match else None
    return seq if is_seq(seq) else None  # a seq readers refuse is no place to continue from


def last_event_seq(fd: int, end: int) -> int | None:
    """The seq of the last event before offset `end` (a line boundary); None if there is none."""
    position, window, carry = end, TAIL_WINDOW, b""
    while position > 0:
        start = max(0, position - window)
        lines = (pread_exact(fd, position - start, start) + carry).split(b"\n")
        carry = lines.pop(0) if start > 0 else b""
        for line in reversed(lines):
            seq = _line_seq(line)
            if seq is not None:
                return seq
        position, window = start, window * 2
    return None


def _first_line(fd: int) -> bytes:
    window, data = TAIL_WINDOW, b""
    while True:
        data = pread_exact(fd, window, 0)
        newline = data.find(b"\n")
        if newline >= 0:
            return data[:newline]
        if len(data) < window:
            return data
        window *= 2


def _check_header(fd: int, session_id: str) -> None:
    header = parse_line(_first_line(fd))
    if not is_header(header) or header is None or header.get("id") != session_id:
        shown = shown_id(session_id)
        raise StoreError(STORE_INVALID_LOG, f'the log of session "{shown}" does not carry its header')


def _settle_tail(folder: Folder, target: LogTarget, fd: int, session_id: str) -> int:
    """The log's size once its last line is complete; repairs an own log, refuses a busy foreign one."""
    size = os.fstat(fd).st_size
    complete = _complete_end(fd, size)
    if complete == size:
        return size
    if not target.own:
        raise StoreError(
            STORE_LOG_BUSY,
            f'another program is writing session "{shown_id(session_id)}" (its last line is incomplete); '
            "nothing was appended",
        )
    fragment = pread_exact(fd, size - complete, complete)
    if parse_line(fragment) is not None:  # a whole event that only lacks its newline
        _write_all(fd, b"\n", size, own=True)
        return size + 1
    torn = folder.open(target.name + TORN_SUFFIX, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(torn, fragment + b"\n")
        os.fsync(torn)
    finally:
        os.close(torn)
    os.ftruncate(fd, complete)
    os.fsync(fd)
    log.warning(
        "moved an incomplete last line of %s (%d bytes, left by an interrupted write) to %s",
        folder.path,
        len(fragment),
        target.name + TORN_SUFFIX,
    )
    return complete


def _refuse_hard_links(fd: int, session_id: str) -> None:
    """`STORE_LOG_LINKED` when the log has another name: an append would change that file too.

    A hard link is not a symbolic link, so `O_NOFOLLOW` lets it through; its other name may be
    outside the root (docs/reliability.md, "Links").
    """
    if os.fstat(fd).st_nlink != 1:
        raise StoreError(
            STORE_LOG_LINKED,
            f'the log of session "{shown_id(session_id)}" has more than one hard link, so it is only read; '
            "copy it to a file of its own to write it",
        )


def _write_all(fd: int, data: bytes, size_before: int, *, own: bool) -> None:
    view = memoryview(data)
    try:
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except OSError:
        if own:  # nobody else writes an own log while we hold its lock: undo the partial line
            try:
                os.ftruncate(fd, size_before)
            except OSError:
                log.exception("cannot cut an interrupted append back out of %s", fd)
        raise


# -- the writes --------------------------------------------------------------------------------


def append_events(
    target: LogTarget, session_id: str, events: Sequence[dict[str, Any]], *, time_ms: int
) -> list[dict[str, Any]]:
    """Append `events` with the next seqs from the log's real tail, under the session lock; returns them.

    Replace surface ops are checked against the fold of the log as it is on disk.
    """
    with locked_folder(target) as folder:
        fd = folder.open(target.name, os.O_RDWR | os.O_APPEND)
        try:
            _refuse_hard_links(fd, session_id)
            _check_header(fd, session_id)
            size = _settle_tail(folder, target, fd, session_id)
            last = last_event_seq(fd, size)
            written = build_events(events, first_seq=0 if last is None else last + 1, time_ms=time_ms)
            if not written:
                return []
            if any(isinstance(event.get("surfaceOp"), dict) for event in written):
                report = parse_log_report(pread_exact(fd, size, 0))
                _check_replaces(report, written)
            _write_all(fd, b"".join(encode_line(event) for event in written), size, own=target.own)
            return written
        finally:
            os.close(fd)


def _check_replaces(report: LogReport, written: list[dict[str, Any]]) -> None:
    """Raise `STORE_INVALID_LOG` when a written replace does not apply to the log as readers fold it.

    An event already in the log that the fold cannot apply is left out, as readers leave it out.
    """
    unfolded: list[int] = []
    lenient = bool(report.skipped_lines)
    fold_surface(report.header, report.events, lenient=lenient, skipped=unfolded)
    left_out = set(unfolded)
    kept = [event for event in report.events if event["seq"] not in left_out]
    fold_surface(report.header, [*kept, *written], lenient=lenient or bool(left_out))


def create_session_files(root: str, folder_parts: tuple[str, str], header: dict[str, Any]) -> None:
    """Create a session folder with our lock file and a log holding only `header`, durably.

    Raises `StoreError(STORE_SESSION_EXISTS)` when the folder already holds a log.
    """
    exists = StoreError(STORE_SESSION_EXISTS, f'session "{shown_id(header["id"])}" already exists')
    with Folder(root, folder_parts, create=True) as folder:
        for _attempt in range(_CREATE_ATTEMPTS):
            if folder.exists(LOG_NAME) or folder.exists(ZSTD_LOG_NAME):
                raise exists
            _create_marker(folder)
            try:
                with SessionLock(folder, LOCK_FILE_NAME, must_exist=True):
                    try:
                        fd = folder.open(LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
                    except FileExistsError:
                        raise exists from None
                    try:
                        _write_all(fd, encode_line(header), 0, own=True)
                    finally:
                        os.close(fd)
                break
            except StoreError as error:
                if error.code != STORE_SESSION_NOT_FOUND:
                    raise
                # A delete of the same id removed the lock file while we waited: make it again.
        else:
            raise exists
        folder.fsync()
    with Folder(root, folder_parts[:1]) as project:
        project.fsync()


def _create_marker(folder: Folder) -> None:
    try:
        marker = folder.open(LOCK_FILE_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        return  # a deleted session's lock file, or another process creating the same id right now
    try:
        os.write(marker, OWNER_NOTE)
    finally:
        os.close(marker)


def delete_session_files(target: LogTarget) -> None:
    """Remove a session's log and side files under its lock, then its folders if they are empty."""
    with locked_folder(target) as folder:
        folder.unlink(target.name)
        folder.unlink(target.name + TORN_SUFFIX)
        if target.own and os.name != "nt":
            folder.unlink(LOCK_FILE_NAME)  # waiting writers then find the session gone
    project, session = target.folder_parts
    if target.own and os.name == "nt":  # pragma: no cover - Windows cannot remove a locked file
        with Folder(target.root, (project, session)) as folder:
            folder.unlink(LOCK_FILE_NAME)
    with Folder(target.root, (project,)) as parent:
        parent.remove_folder(session)
    with Folder(target.root, ()) as top:
        top.remove_folder(project)
