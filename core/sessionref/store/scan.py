"""Incremental scanning of one log for discovery: header, titles, last seq and byte offset.

Only the bytes past the recorded offset are read for a plain log; a zstd log is re-read whole
when its size or mtime changes. Scanning never modifies a file and never follows a symbolic link
(a linked log is recorded with a `problem`, so discovery skips it with one warning).
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sessionref.contract.log_values import is_epoch_ms
from sessionref.contract.titles import (
    fallback_title,
    is_direct_user_message,
    normalize_title,
    reference_labels,
)
from sessionref.sources import SOURCE_NAMES, source_kind_of
from sessionref.store.errors import StoreError, shown_id
from sessionref.store.logfile import (
    is_compressed,
    is_packed_row,
    packed_row_last_time,
    parse_line,
    read_log_fd,
    record_last_seq,
    split_lines,
)
from sessionref.store.paths import is_link, open_log_nofollow

log = logging.getLogger("sessionref.store")


@dataclass(slots=True)
class LogState:
    """What the discovery index knows about one log file (path relative to the store root)."""

    path: str
    session_id: str | None = None
    cwd: str | None = None
    created_at: int = 0
    header_json: str | None = None
    title: str | None = None
    fallback: str | None = None
    offset: int = 0
    size: int = -1
    mtime_ns: int = -1
    last_seq: int | None = None
    problem: str | None = None
    last_time: int | None = None
    updated_at: int = 0
    """Last activity: `last_time`, else `created_at` (derived, not stored; see `settle_activity`)."""

    def settle_activity(self) -> LogState:
        """Derive `updated_at` from `last_time` and `created_at` (kept as a field: sorts read it often)."""
        self.updated_at = self.created_at if self.last_time is None else self.last_time
        return self

    @property
    def label_title(self) -> str | None:
        """The title shown for this session: the latest `session/title`, else the fallback title."""
        return self.title if self.title is not None else self.fallback


def _is_text(value: str) -> bool:
    """False for a string holding a lone surrogate (JSON allows `\\ud800`; UTF-8 and SQLite do not)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _header_fields(state: LogState, line: bytes) -> None:
    header = parse_line(line)
    if header is None or header.get("type") != "session":
        state.problem = "the first line is not a session header"
        return
    session_id = header.get("id")
    if not isinstance(session_id, str) or session_id == "":
        state.problem = "the session header has no id"
        return
    if not _is_text(session_id):
        state.problem = "the session id holds a lone surrogate (not valid Unicode text)"
        return
    if (reserved := reserved_id_problem(session_id)) is not None:
        state.problem = reserved
        return
    state.session_id = session_id
    state.header_json = line.decode("utf-8").strip()
    cwd = header.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        log.warning("session %r: ignoring a cwd that is not a string", session_id)
        cwd = None
    elif cwd is not None and not _is_text(cwd):
        log.warning("session %r: ignoring a cwd that is not valid Unicode text", session_id)
        cwd = None
    state.cwd = cwd
    created_at = header.get("createdAt")
    if not is_epoch_ms(created_at):
        log.warning(
            "session %r: createdAt %r is not valid epoch milliseconds; using 0", session_id, created_at
        )
        created_at = 0
    state.created_at = created_at


def reserved_id_problem(session_id: str) -> str | None:
    """Why a log may not carry `session_id`: ids starting `claude-code:`, `codex:` or `gemini:` name
    other agents' sessions (`sessionref.sources`), so a mention of one always means that session."""
    kind = source_kind_of(session_id)
    if kind is None:
        return None
    shown = shown_id(session_id)
    return f'the session id "{shown}" starts with "{kind}:", which names {SOURCE_NAMES[kind]} sessions'


def _event_time(record: dict[str, Any]) -> int | None:
    time = packed_row_last_time(record) if is_packed_row(record) else record.get("time")
    if not is_epoch_ms(time):
        return None
    return time


def _title_of(record: dict[str, Any] | None) -> str | None:
    if record is None or record.get("type") != "session/title":
        return None
    data = record.get("data")
    return normalize_title(data.get("title")) if isinstance(data, dict) else None


def _user_messages(lines: list[bytes]) -> Iterator[dict[str, Any]]:
    """The data of each `user/message` in `lines`, parsed one at a time as asked for."""
    for line in lines:
        if b"user/message" in line:
            record = parse_line(line)
            data = record.get("data") if record is not None and record.get("type") == "user/message" else None
            if isinstance(data, dict):
                yield data


def _first_prompt_title(lines: list[bytes]) -> str | None:
    """The fallback title of the first direct user message in `lines` that has one.

    A prompt that mentions sessions was sent as `@label` text, and its snapshot is the user
    message just before or after it: the labels it lists are shown without their `@`. Messages
    are parsed only as far as the one after the prompt that gives the title.
    """
    messages = _user_messages(lines)
    before: dict[str, Any] | None = None
    current = next(messages, None)
    while current is not None:
        after = next(messages, None)
        if is_direct_user_message(current):
            beside = [other for other in (before, after) if other is not None]
            title = fallback_title(current, [label for other in beside for label in reference_labels(other)])
            if title is not None:
                return title
        before, current = current, after
    return None


def _consume_lines(state: LogState, lines: list[bytes], *, at_start: bool) -> None:
    rest = lines
    if at_start:
        while rest and not rest[0].strip():
            rest = rest[1:]
        if not rest:
            return
        _header_fields(state, rest[0])
        if state.problem is not None:
            return
        rest = rest[1:]
    # The latest title wins, so look for it from the end; a fallback only matters without one.
    for line in reversed(rest):
        if b"session/title" in line:
            title = _title_of(parse_line(line))
            if title is not None:
                state.title = title
                break
    if state.title is None and state.fallback is None:
        state.fallback = _first_prompt_title(rest)
    for line in reversed(rest):
        record = parse_line(line)
        seq = record_last_seq(record) if record is not None else None
        if record is not None and seq is not None:
            state.last_seq = seq
            time = _event_time(record)
            if time is not None:
                state.last_time = time
            break


def scan_log(root: Path | str, relative: str, previous: LogState | None) -> LogState | None:
    """Bring the state of one log up to date; returns None when the file is gone.

    Unchanged files (same size and mtime) cost one stat. A problem reading or parsing the file
    is recorded in `problem` (the session is then skipped by discovery) instead of raised.
    """
    # Plain strings (`relative` is a relative POSIX path): this runs once per log on every refresh.
    path = f"{os.fspath(root)}/{relative}"
    try:
        status = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as error:
        return LogState(path=relative, problem=f"cannot stat the log: {error.strerror or error}")
    if previous is not None and previous.size == status.st_size and previous.mtime_ns == status.st_mtime_ns:
        return previous
    if is_link(status) or not stat.S_ISREG(status.st_mode):
        kind = "a symbolic link (not followed)" if is_link(status) else "not a regular file"
        problem = f"the log is {kind}"
        return LogState(path=relative, size=status.st_size, mtime_ns=status.st_mtime_ns, problem=problem)
    incremental = (
        previous is not None
        and previous.problem is None
        and previous.session_id is not None
        and not is_compressed(path)
        and status.st_size >= previous.offset
    )
    state = replace(previous) if incremental and previous is not None else LogState(path=relative)
    state.size, state.mtime_ns = status.st_size, status.st_mtime_ns
    try:
        fd = open_log_nofollow(path)
        try:
            if incremental:
                os.lseek(fd, state.offset, os.SEEK_SET)
            data = read_log_fd(fd, relative, compressed=is_compressed(path))
        finally:
            os.close(fd)
    except FileNotFoundError:
        return None
    except (OSError, StoreError) as error:
        reason = error.message if isinstance(error, StoreError) else (error.strerror or str(error))
        return LogState(path=relative, size=status.st_size, mtime_ns=status.st_mtime_ns, problem=reason)
    split = split_lines(data, base=state.offset)
    lines = split.lines
    # An unterminated last line that does not parse yet is not there yet: read again next time.
    if split.tail.strip() and (is_compressed(path) or parse_line(split.tail) is not None):
        lines = [*lines, split.tail]
        split.consumed += len(split.tail)
    _consume_lines(state, lines, at_start=not incremental)
    if state.session_id is None and state.problem is None:
        state.problem = "the log has no header yet"
    state.offset = split.consumed
    return state.settle_activity()
