"""GitHub Copilot CLI histories: `~/.copilot/session-state/<session id>/events.jsonl` + `workspace.yaml`.

Read-only; a closed format (docs/sources/copilot.md says what the reader relies on). A session is
its folder: `events.jsonl` (the conversation) and `workspace.yaml` (cwd and titles), walked as one
group so a rename in `workspace.yaml` is seen like a new event.

* **Projected**: `user.message` and `assistant.message` events' `data.content`; tool requests,
  reasoning, tool executions, model changes and every other event are left out.
* **Title**: `workspace.yaml`'s `name` when `user_named: true` (a rename), else its `summary`,
  else the first prompt. **cwd**: `workspace.yaml`'s `cwd`, else `session.start`'s
  `data.context.cwd`. **Times**: the events' `timestamp`s, else the file's mtime.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from sessionref.contract.events import SurfaceEvent
from sessionref.contract.titles import prompt_title
from sessionref.sources.foreign import (
    ForeignSession,
    ForeignSourceError,
    ForeignSourceErrorCode,
    ForeignSummary,
    assistant_event,
    build_snapshot,
    is_valid_native_id,
    user_event,
)
from sessionref.sources.lines import open_inside, parse_timestamp, read_records, read_small_text
from sessionref.sources.reader import SessionFiles, WalkContext
from sessionref.sources.registry import registered
from sessionref.sources.scan import FileScan, scan_file
from sessionref.sources.session_file import SessionScan, tool_title
from sessionref.sources.walking import list_dirs, list_files, real_root

__all__ = ["KIND", "READER", "CopilotReader", "CopilotScan", "parse_workspace"]

KIND: Final = "copilot"
INFO: Final = registered(KIND)
PROVIDER: Final = "github"
UNKNOWN_MODEL: Final = "unknown"
EVENTS: Final = "events.jsonl"
WORKSPACE: Final = "workspace.yaml"
WORKSPACE_MAX_BYTES: Final = 64 << 10


def default_root(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """`~/.copilot` (or `[sources] copilot_root`)."""
    return (Path.home() if home is None else home) / ".copilot"


def _scalar(value: str) -> str:
    """One YAML scalar as text: quotes removed (with their escapes), else an inline comment cut."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return value.split(" #", 1)[0].strip()


def parse_workspace(text: str) -> dict[str, str]:
    """The top-level `key: value` scalars of a `workspace.yaml` (nested keys, lists, blocks are ignored)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line[0] in " \t#-" or ":" not in line:
            continue
        key, _, value = line.partition(":")
        if value.strip() and value.strip()[0] not in "|>#":
            values[key.strip()] = _scalar(value)
    return values


def _content(event: Mapping[str, Any]) -> str:
    data = event.get("data")
    content = data.get("content") if isinstance(data, dict) else None
    return content.strip() if isinstance(content, str) else ""


@dataclass(slots=True)
class CopilotScan(SessionScan):
    """Discovery state of one file of a session folder: its `events.jsonl` or its `workspace.yaml`."""

    KIND: ClassVar[str] = KIND

    workspace: bool = False
    """Whether this is the scan of `workspace.yaml` (then only `cwd` and `named` are set)."""

    def wants(self, raw: bytes) -> bool:
        return self.created_at is None or self.cwd is None or self.prompt is None or not self.conversation

    def take(self, number: int, record: dict[str, Any]) -> None:
        if self.created_at is None:
            self.created_at = parse_timestamp(record.get("timestamp"))
        kind = record.get("type")
        data = record.get("data")
        if kind == "session.start" and isinstance(data, dict):
            context = data.get("context")
            cwd = context.get("cwd") if isinstance(context, dict) else None
            if self.cwd is None and isinstance(cwd, str) and cwd:
                self.cwd = cwd
        elif kind in ("user.message", "assistant.message") and (text := _content(record)):
            self.conversation = True
            if kind == "user.message" and self.prompt is None:
                self.prompt = prompt_title(text)

    def record_time(self, record: dict[str, Any]) -> int | None:
        return parse_timestamp(record.get("timestamp"))


def _scan_workspace(root: Path, path: Path, previous: CopilotScan | None) -> CopilotScan:
    """`workspace.yaml` read whole (it is small): its cwd and the title it gives."""
    handle, info = open_inside(root, path)
    handle.close()
    if previous is not None and (previous.path, previous.size, previous.mtime_ns) == (
        str(path),
        info.st_size,
        info.st_mtime_ns,
    ):
        return previous
    scan = CopilotScan(path=str(path), size=info.st_size, mtime_ns=info.st_mtime_ns, workspace=True)
    text = read_small_text(root, path, WORKSPACE_MAX_BYTES)
    values = parse_workspace(text) if text is not None else {}
    cwd = values.get("cwd", "")
    scan.cwd = cwd if cwd.startswith("/") else None
    renamed = values.get("user_named", "").lower() == "true"
    scan.named = (tool_title(values.get("name")) if renamed else None) or tool_title(values.get("summary"))
    return scan


class CopilotConversation:
    """The prompts and answers of `events.jsonl`, in order."""

    def __init__(self) -> None:
        self.events: list[SurfaceEvent] = []

    def take(self, number: int, record: dict[str, Any]) -> None:
        """Keep a user or assistant message's content; leave out every other event."""
        kind = record.get("type")
        text = _content(record)
        if not text:
            return
        time = parse_timestamp(record.get("timestamp")) or 0
        event_id = record.get("id")
        message_id = event_id if isinstance(event_id, str) and event_id else f"line-{number}"
        if kind == "user.message":
            self.events.append(user_event(number, time, message_id, [text]))
        elif kind == "assistant.message":
            self.events.append(assistant_event(number, time, message_id, [text], PROVIDER, UNKNOWN_MODEL))


def _summary(native_id: str, events: CopilotScan, workspace: CopilotScan | None) -> ForeignSummary:
    summary = events.summary(KIND, native_id, workspace.cwd if workspace is not None else None)
    paths = (Path(events.path),) + ((Path(workspace.path),) if workspace is not None else ())
    title = (workspace.named if workspace is not None else None) or summary.title
    return ForeignSummary(
        summary.session_id,
        KIND,
        native_id,
        summary.cwd,
        summary.created_at,
        summary.updated_at,
        title,
        paths,
    )


class CopilotReader:
    """GitHub Copilot CLI as a `SourceReader`: a session folder's two files, grouped by its id."""

    info: Final = INFO
    scan_type: Final = CopilotScan
    title_index: Final = None
    database: Final = None

    def default_root(self, env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
        """`~/.copilot`."""
        return default_root(env, home)

    def walk(self, root: Path) -> Iterator[SessionFiles]:
        """Every session folder with an `events.jsonl` (and its `workspace.yaml` when there is one)."""
        inside = real_root(root)
        for folder in list_dirs(root / "session-state", inside):
            if not is_valid_native_id(folder.name):
                continue
            files = {path.name: path for path in list_files(folder, inside, "", (EVENTS, WORKSPACE))}
            if EVENTS in files:
                paths = (files[EVENTS],) + ((files[WORKSPACE],) if WORKSPACE in files else ())
                yield SessionFiles(folder.name, paths)

    def scan(self, root: Path, path: Path, previous: FileScan | None) -> CopilotScan:
        """The resumable scan of `events.jsonl`, or `workspace.yaml` read whole."""
        kept = previous if isinstance(previous, CopilotScan) else None
        if path.name == WORKSPACE:
            return _scan_workspace(root, path, kept)
        return scan_file(root, path, kept, CopilotScan)

    def summarize(
        self, root: Path, native_id: str | None, scans: Sequence[FileScan], context: WalkContext
    ) -> ForeignSummary | None:
        """The session's facts; None without a prompt or an answer."""
        events = next((s for s in scans if isinstance(s, CopilotScan) and not s.workspace), None)
        workspace = next((s for s in scans if isinstance(s, CopilotScan) and s.workspace), None)
        if native_id is None or events is None or not events.conversation:
            return None
        return _summary(native_id, events, workspace)

    def read(self, root: Path, native_id: str, paths: Sequence[Path]) -> ForeignSession:
        """The session's events read in full, titled by its `workspace.yaml`."""
        events_path = next((path for path in paths if path.name == EVENTS), None)
        if events_path is None:
            raise ForeignSourceError(
                ForeignSourceErrorCode.INVALID_SESSION, f"copilot session {native_id!r} has no events"
            )
        handle, info = open_inside(root, events_path)
        scan = CopilotScan(path=str(events_path), size=info.st_size, mtime_ns=info.st_mtime_ns)
        conversation = CopilotConversation()

        def take(number: int, record: dict[str, Any]) -> None:
            scan.note(number, record)
            conversation.take(number, record)

        with handle:
            read = read_records(handle, take)
        workspace_path = next((path for path in paths if path.name == WORKSPACE), None)
        workspace = None
        if workspace_path is not None:
            try:
                workspace = _scan_workspace(root, workspace_path, None)
            except ForeignSourceError:
                workspace = None
        summary = _summary(native_id, scan, workspace)
        return ForeignSession(
            summary=summary,
            snapshot=build_snapshot(summary, conversation.events),
            skipped_lines=len(read.skipped) + (1 if read.pending else 0),
            lines_read=read.lines_read,
            skipped_at=tuple(read.skipped),
        )


READER: Final = CopilotReader()
