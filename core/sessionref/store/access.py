"""What the store may do with one log: read it safely, and whether (and why not) to write it.

Reading goes through `paths.Folder` (no symbolic link below the root is followed) and takes the
log as it is on disk; it never writes anything. Writing is refused, with a message that says what
to do instead, for DSH's compressed logs, for sessions another program created and for logs the
file system will not let us write. (`write_foreign`, the store's own switch for a caller that knows
no other program writes those logs — a test, an offline import — lifts the second; no host sets it:
a line another program writes in two `write` calls can be torn by our append whatever we check
first, docs/reliability.md.)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sessionref.service.protocols import SurfaceSnapshot
from sessionref.store.errors import (
    STORE_INVALID_LOG,
    STORE_READ_ONLY,
    STORE_SESSION_NOT_FOUND,
    STORE_UNREADABLE,
    STORE_UNSAFE_PATH,
    StoreError,
    shown_id,
)
from sessionref.store.fold import fold_surface
from sessionref.store.lean_surface import SurfaceStubs
from sessionref.store.locking import LOCK_FILE_NAME
from sessionref.store.logfile import LogLines, LogReport, is_compressed, parse_log_report, read_log_fd
from sessionref.store.paths import Folder, checked_log_path
from sessionref.store.writer import LogTarget

NEXT_STEP = "start a new session and mention it with @ to continue from it"
"""The way forward offered by every read-only refusal."""


@dataclass(frozen=True, slots=True)
class SurfaceReport:
    """A folded surface and the log lines skipped while reading it (1-based line numbers)."""

    snapshot: SurfaceSnapshot
    skipped_lines: tuple[int, ...] = ()


def not_found(session_id: str) -> StoreError:
    """`STORE_SESSION_NOT_FOUND` with the contract's message, `session "<id>" not found`."""
    return StoreError(STORE_SESSION_NOT_FOUND, f'session "{shown_id(session_id)}" not found')


def read_log_data(root: str, relative: str, session_id: str) -> bytes:
    """The decoded bytes of the log of `session_id` at `root/relative` (errors as `read_report`)."""
    if checked_log_path(relative) is None:
        raise not_found(session_id)
    project, session, name = relative.split("/")
    try:
        with Folder(root, (project, session)) as folder:
            fd = folder.open(name, os.O_RDONLY)
            try:
                return read_log_fd(fd, name, compressed=is_compressed(name))
            finally:
                os.close(fd)
    except FileNotFoundError:
        raise not_found(session_id) from None
    except OSError as error:
        raise StoreError(STORE_UNREADABLE, f"cannot read {name}: {error.strerror or error}") from error


def _check_id(header: dict[str, Any], session_id: str) -> None:
    if header.get("id") != session_id:
        raise StoreError(STORE_INVALID_LOG, f'the log of session "{shown_id(session_id)}" carries another id')


def read_report(root: str, relative: str, session_id: str) -> LogReport:
    """The log of `session_id` at `root/relative` as a reader sees it (see `LogReport`).

    `STORE_SESSION_NOT_FOUND` when it is gone, `STORE_UNSAFE_PATH` for a link on the way,
    `STORE_UNREADABLE`/`STORE_LOG_TOO_LARGE` when it cannot be read, `STORE_INVALID_LOG` when it
    has no header or carries another session's id.
    """
    report = parse_log_report(read_log_data(root, relative, session_id))
    _check_id(report.header, session_id)
    return report


def read_lean_surface(root: str, relative: str, session_id: str) -> SurfaceReport:
    """The folded surface of the log of `session_id`, as `fold_report(read_report(...))` gives it,
    holding the log's bytes and a stub per surface event instead of every parsed event
    (`lean_surface`); its events are parsed again each time they are read."""
    data = read_log_data(root, relative, session_id)
    reader = LogLines(data)
    stubs = SurfaceStubs(data)
    for start, end, readable in reader.lines():
        stubs.add(start, end, readable[-1])
    assert reader.header is not None  # `lines()` raised otherwise
    _check_id(reader.header, session_id)
    unfolded: list[int] = []
    snapshot = stubs.fold(reader.header, lenient=bool(reader.skipped), unfolded=unfolded)
    return SurfaceReport(snapshot, _skipped_lines(reader.skipped, reader.replace_lines, unfolded))


def _skipped_lines(
    skipped: Sequence[int], replace_lines: Mapping[int, int], unfolded: list[int]
) -> tuple[int, ...]:
    """The lines the parse skipped and those of the events the fold could not apply, in order."""
    if not unfolded:
        return tuple(skipped)
    return tuple(sorted({*skipped, *(replace_lines.get(seq, 0) for seq in unfolded)} - {0}))


def fold_report(report: LogReport) -> SurfaceReport:
    """The surface of a read log; a log with skipped lines is folded leniently (see `fold_surface`).

    An event the fold cannot apply (a replace of seqs not on the surface, say) is skipped and its
    line counted with the unreadable ones: it never costs the rest of the session.
    """
    lenient = bool(report.skipped_lines)
    unfolded: list[int] = []
    snapshot = fold_surface(report.header, report.events, lenient=lenient, skipped=unfolded)
    return SurfaceReport(snapshot, _skipped_lines(report.skipped_lines, report.replace_lines, unfolded))


def write_target(root: str, relative: str, session_id: str, *, write_foreign: bool) -> LogTarget:
    """Where to write session `session_id`, or the error saying why it cannot be.

    `STORE_READ_ONLY` (with the next step) for a compressed log, another program's session without
    the opt-in or a file we may not write; `STORE_UNSAFE_PATH` when a link stands on the way.
    """
    if checked_log_path(relative) is None:
        raise not_found(session_id)
    shown = shown_id(session_id)
    if is_compressed(relative):
        compressed = f'session "{shown}" is a compressed DSH log and is only read; {NEXT_STEP}'
        raise StoreError(STORE_READ_ONLY, compressed)
    project, session, name = relative.split("/")
    try:
        with Folder(root, (project, session)) as folder:
            if not folder.exists(name):
                if folder.inode(name) is None:
                    raise not_found(session_id)
                raise StoreError(STORE_UNSAFE_PATH, f'the log of session "{shown}" is not a plain file')
            own = folder.exists(LOCK_FILE_NAME)
    except FileNotFoundError:
        raise not_found(session_id) from None
    except OSError as error:
        reason = error.strerror or error
        raise StoreError(
            STORE_READ_ONLY, f'the folder of session "{shown}" cannot be opened ({reason}); {NEXT_STEP}'
        ) from error
    if not own and not write_foreign:
        raise StoreError(
            STORE_READ_ONLY,
            f'session "{shown}" was not created by sessionref (another program, such as DSH, '
            f"writes it), so it is only read; {NEXT_STEP}",
        )
    if not os.access(os.path.join(root, relative), os.W_OK):
        raise StoreError(
            STORE_READ_ONLY,
            f'the log of session "{shown}" is not writable (file permissions); {NEXT_STEP}',
        )
    return LogTarget(root, relative, own)
