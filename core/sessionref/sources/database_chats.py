"""What the readers of agents that keep their chats in SQLite (OpenCode, Cursor, Crush) share.

Each of them lists the sessions inside a database by the database's own update times, reads one
session's messages with a query of its own, and projects them the same way: the visible texts of
user and assistant messages, nothing else. This module holds the parts that do not depend on a
schema: a stored message, its surface events and first-prompt title, the summary of a session
and the session read in full, the listing split by version, and lenient decoding of the values a
row holds. The queries, the schemas and what counts as visible text stay in each reader.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from sessionref.contract.events import SurfaceEvent
from sessionref.contract.titles import prompt_title
from sessionref.sources.foreign import (
    ForeignSession,
    ForeignSourceError,
    ForeignSourceErrorCode,
    ForeignSummary,
    assistant_event,
    build_snapshot,
    foreign_session_id,
    is_valid_native_id,
    user_event,
)
from sessionref.sources.reader import DatabaseSessions
from sessionref.sources.session_file import tool_title

Row = TypeVar("Row")


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One stored message: its role (`user`, `assistant`; any other is never projected), its time
    in epoch ms, its visible texts, and for an assistant the provider and model that wrote it."""

    message_id: str
    role: str
    time_ms: int
    texts: tuple[str, ...]
    provider: str
    model: str


def chat_events(messages: Sequence[ChatMessage]) -> list[SurfaceEvent]:
    """The surface events of `messages`: one per user or assistant message with text, seq = its place."""
    events: list[SurfaceEvent] = []
    for seq, message in enumerate(messages, start=1):
        if not message.texts:
            continue
        texts = list(message.texts)
        if message.role == "user":
            events.append(user_event(seq, message.time_ms, message.message_id, texts))
        elif message.role == "assistant":
            events.append(
                assistant_event(
                    seq, message.time_ms, message.message_id, texts, message.provider, message.model
                )
            )
    return events


def first_prompt_title(messages: Sequence[ChatMessage]) -> str | None:
    """The fallback title of the first user message with text (`prompt_title`), or None."""
    for message in messages:
        if message.role == "user" and message.texts:
            return prompt_title("\n".join(message.texts))
    return None


def chat_summary(
    kind: str,
    native_id: str,
    path: Path,
    *,
    cwd: str | None,
    created_ms: int,
    updated_ms: int,
    title: object,
    prompt: str | None,
) -> ForeignSummary:
    """A database session's facts; its version is its own update time (never before its creation).

    `title` is the agent's own (a placeholder counts as none: `tool_title`), else `prompt`.
    """
    updated = max(created_ms, updated_ms)
    return ForeignSummary(
        session_id=foreign_session_id(kind, native_id),
        source_kind=kind,
        native_id=native_id,
        cwd=cwd,
        created_at=created_ms,
        updated_at=updated,
        title=tool_title(title) or prompt,
        paths=(path,),
        version=database_version(updated),
    )


def database_version(updated_ms: int) -> str:
    """The version the store keeps for a database session: its update time, marked as such."""
    return f"db:{updated_ms}"


def split_by_version(
    rows: Iterable[tuple[object, int, Row]],
    known: Mapping[str, str],
    summarize: Callable[[str, Row], ForeignSummary],
) -> DatabaseSessions:
    """Rows of (native id, update time in ms, row) as a listing: ids the store knows at that
    version are unchanged, the others are summarized (only they cost a further read); a row whose
    id is not a valid native id is skipped."""
    unchanged: list[str] = []
    changed: list[ForeignSummary] = []
    for native_id, updated_ms, row in rows:
        if not isinstance(native_id, str) or not is_valid_native_id(native_id):
            continue
        if known.get(native_id) == database_version(updated_ms):
            unchanged.append(native_id)
        else:
            changed.append(summarize(native_id, row))
    return DatabaseSessions(tuple(unchanged), tuple(changed))


def chat_session(summary: ForeignSummary, messages: Sequence[ChatMessage]) -> ForeignSession:
    """One database session in full: its summary and the snapshot of its messages."""
    return ForeignSession(
        summary=summary,
        snapshot=build_snapshot(summary, chat_events(messages)),
        skipped_lines=0,
        lines_read=len(messages),
    )


def no_session_files(name: str, path: Path) -> ForeignSourceError:
    """The error for a file handed to a reader whose every session lives in a database."""
    return ForeignSourceError(ForeignSourceErrorCode.UNREADABLE, f"{str(path)!r} is not a {name} database")


def gone(kind: str, native_id: str) -> ForeignSourceError:
    """The error for a session the database no longer holds."""
    return ForeignSourceError(ForeignSourceErrorCode.INVALID_SESSION, f"{kind} session {native_id!r} is gone")


def json_value(value: object) -> Any:
    """A column holding JSON text (or UTF-8 bytes of it) decoded, or None when it is not JSON."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        return None
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return None


def json_object(value: object) -> dict[str, Any]:
    """`json_value` when it is an object, else an empty one."""
    decoded = json_value(value)
    return decoded if isinstance(decoded, dict) else {}


def count(value: object) -> int:
    """`value` when it is a non-negative integer (not a bool), else 0: a time or a number in a row."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def xdg_data_folder(name: str, env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """`$XDG_DATA_HOME/<name>` when that variable is set and not empty, else `~/.local/share/<name>`."""
    environment = os.environ if env is None else env
    data = environment.get("XDG_DATA_HOME", "")
    base = Path(data) if data else (Path.home() if home is None else home) / ".local" / "share"
    return base / name
