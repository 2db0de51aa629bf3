"""Codex CLI histories: `$CODEX_HOME` or `~/.codex`: `sessions/YYYY/MM/DD/rollout-*.jsonl`, archives.

Read-only; `archived_sessions/` is read too. Each line is `{timestamp, type, payload}`; the first
is `session_meta`.

Decisions where the formats are silent:

* **One session, several files.** Rollout files are grouped by the session uuid at the end of
  their name (`rollout-<time>-<uuid>.jsonl`); a file whose name carries none is grouped by its
  `session_meta` id (its first line is read). A session's files are read in the order of
  their `session_meta` timestamp (then path), and seqs keep counting lines across them. The
  same file name under both `sessions/` and `archived_sessions/` (seen while Codex moves it)
  is one file: the larger copy is read.
* **Source of truth.** The human-visible `event_msg` records (`user_message`,
  `agent_message`) are the conversation; the model-facing `response_item` copies are ignored,
  so nothing is counted twice. Only a session with no `user_message`/`agent_message` at all
  (older rollouts) is projected from its `response_item` messages instead (user
  `input_text`, assistant `output_text`; developer/system roles dropped). Either way,
  scaffolding the tool injects is dropped: user texts starting with `<environment_context>`,
  `<user_instructions>`, `<INSTRUCTIONS>`, `# AGENTS.md instructions`, `<user_shell_command>`
  or `<turn_aborted>`, and `user_message` events whose `kind` is set to anything but `plain`.
* **Compaction.** A `compacted` record replaces everything projected before it with one
  checkpoint holding its `message`, or, when that is empty, the texts of its
  `replacement_history` messages (joined by a blank line). A `compacted` record with no text
  at all replaces nothing (nothing is dropped without a summary standing for it).
* **Titles.** The last `thread_name` for the id in `session_index.jsonl` (normalised), else
  the first user message (the store's fallback-title rule), else the first `response_item`
  user message. **cwd**: `session_meta.cwd`, else the first `turn_context.cwd`. **Model**:
  the latest `turn_context.model`; provider: `session_meta.model_provider` (else `openai`).
  **Times**: created = `session_meta.timestamp` (else the first record's), updated = the last
  record's timestamp; without any, the file's mtime.

What each kind of record means, and the projection, are in `codex_records`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

from sessionref.contract.titles import normalize_title, prompt_title
from sessionref.sources.codex_records import CodexConversation, item_texts, record_payload, typed_prompt
from sessionref.sources.foreign import (
    ForeignSession,
    ForeignSourceError,
    ForeignSourceErrorCode,
    ForeignSummary,
    build_snapshot,
    foreign_session_id,
    is_valid_native_id,
)
from sessionref.sources.lines import LineReader, open_inside, parse_record, parse_timestamp, read_records
from sessionref.sources.reader import SessionFiles, WalkContext
from sessionref.sources.registry import registered
from sessionref.sources.scan import FileScan, scan_file
from sessionref.sources.walking import env_root, list_dirs, list_files, real_root

__all__ = [
    "KIND",
    "READER",
    "CodexReader",
    "CodexScan",
    "CodexSessionFiles",
    "ThreadNames",
    "default_root",
    "read_session",
    "scan_session_file",
    "scan_thread_names",
    "summarize",
    "walk",
]

KIND: Final = "codex"
INFO: Final = registered(KIND)
ENV_VARIABLE: Final = "CODEX_HOME"
SESSION_INDEX: Final = "session_index.jsonl"
_NAME_ID: Final = re.compile(
    r"^rollout-.*?([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$"
)


def default_root(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """`$CODEX_HOME` when set, else `~/.codex`."""
    return env_root(env, ENV_VARIABLE, home, ".codex")


@dataclass(frozen=True, slots=True)
class CodexSessionFiles:
    """The rollout files of one Codex session (sorted by path; the reader orders them by time)."""

    native_id: str
    paths: tuple[Path, ...]


def _first_record(root: Path, path: Path) -> dict[str, Any] | None:
    try:
        handle, _ = open_inside(root, path)
    except ForeignSourceError:
        return None
    with handle:
        for _, raw in LineReader(handle):
            return parse_record(raw)
    return None


def _meta_id(root: Path, path: Path) -> str | None:
    record = _first_record(root, path)
    if record is None or record.get("type") != "session_meta":
        return None
    native_id = record_payload(record).get("id")
    return native_id if is_valid_native_id(native_id) else None


def walk(root: Path) -> Iterator[CodexSessionFiles]:
    """Every Codex session under `root`, its rollout files grouped by session id, by id.

    Reads only the first line of a file whose name does not carry the id.
    """
    inside = real_root(root)
    by_name: dict[str, Path] = {}
    live = root / "sessions"
    candidates = [
        path
        for year in list_dirs(live, inside)
        for month in list_dirs(year, inside)
        for day in list_dirs(month, inside)
        for path in list_files(day, inside, "rollout-", (".jsonl",))
    ]
    candidates.extend(list_files(root / "archived_sessions", inside, "rollout-", (".jsonl",)))
    for path in candidates:
        kept = by_name.get(path.name)
        if kept is None or _size(path) > _size(kept):
            by_name[path.name] = path
    groups: dict[str, list[Path]] = {}
    for name, path in by_name.items():
        matched = _NAME_ID.match(name)
        native_id = matched.group(1) if matched else _meta_id(root, path)
        if native_id is not None:
            groups.setdefault(native_id, []).append(path)
    for native_id in sorted(groups):
        yield CodexSessionFiles(native_id, tuple(sorted(groups[native_id])))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


@dataclass(slots=True)
class CodexScan(FileScan):
    """Discovery state of one rollout file (see `FileScan`); `summarize` combines a session's files."""

    KIND: ClassVar[str] = KIND

    meta_id: str | None = None
    prompt: str | None = None
    item_prompt: str | None = None

    def wants(self, raw: bytes) -> bool:
        if self.created_at is None or self.meta_id is None:
            return True
        if self.cwd is None and b'"turn_context"' in raw:
            return True
        if self.prompt is None and b'"user_message"' in raw:
            return True
        return (
            self.prompt is None
            and self.item_prompt is None
            and b'"response_item"' in raw
            and b'"user"' in raw
        )

    def take(self, number: int, record: dict[str, Any]) -> None:
        kind = record.get("type")
        payload = record_payload(record)
        if kind == "session_meta" and self.meta_id is None:
            native_id = payload.get("id")
            self.meta_id = native_id if isinstance(native_id, str) else ""
            if isinstance(payload.get("cwd"), str) and payload["cwd"]:
                self.cwd = payload["cwd"]
            started = parse_timestamp(payload.get("timestamp"))
            if started is not None:
                self.created_at = started
        if self.created_at is None:
            self.created_at = parse_timestamp(record.get("timestamp"))
        if (
            kind == "turn_context"
            and self.cwd is None
            and isinstance(payload.get("cwd"), str)
            and payload["cwd"]
        ):
            self.cwd = payload["cwd"]
        elif kind == "event_msg" and payload.get("type") == "user_message" and self.prompt is None:
            text = typed_prompt(payload)
            self.prompt = prompt_title(text) if text else None
        elif kind == "response_item" and self.item_prompt is None:
            role, texts = item_texts(payload)
            if role == "user" and texts:
                self.item_prompt = prompt_title("\n".join(texts))

    def record_time(self, record: dict[str, Any]) -> int | None:
        return parse_timestamp(record.get("timestamp"))


def scan_session_file(root: Path, path: Path, previous: CodexScan | None = None) -> CodexScan:
    """Discovery scan of one rollout file, resuming from `previous` when the file only grew."""
    return scan_file(root, path, previous, CodexScan)


@dataclass(slots=True)
class ThreadNames(FileScan):
    """Resumable scan of `session_index.jsonl`: the last normalised `thread_name` per session id."""

    KIND: ClassVar[str] = "codex-session-index"

    names: dict[str, str] = field(default_factory=dict)

    def wants(self, raw: bytes) -> bool:
        return b'"thread_name"' in raw

    def take(self, number: int, record: dict[str, Any]) -> None:
        native_id = record.get("id")
        name = normalize_title(record.get("thread_name"))
        if isinstance(native_id, str) and name is not None:
            self.names[native_id] = name

    def record_time(self, record: dict[str, Any]) -> int | None:
        return None


def scan_thread_names(root: Path, previous: ThreadNames | None = None) -> ThreadNames:
    """The rename index of a Codex home (empty when there is none), resuming from `previous`."""
    try:
        return scan_file(root, root / SESSION_INDEX, previous, ThreadNames)
    except ForeignSourceError:
        return ThreadNames(path=str(root / SESSION_INDEX))


def _file_order(scan: CodexScan) -> tuple[int, str]:
    return (scan.created_at if scan.created_at is not None else max(0, scan.mtime_ns // 1_000_000), scan.path)


def summarize(native_id: str, scans: Sequence[CodexScan], thread_names: Mapping[str, str]) -> ForeignSummary:
    """The discovery facts of one session from the scans of its files and the rename index."""
    ordered = sorted(scans, key=_file_order)
    created = _file_order(ordered[0])[0] if ordered else 0
    updated = max((scan.updated_at for scan in ordered if scan.updated_at is not None), default=created)
    title = thread_names.get(native_id)
    title = title or next((scan.prompt for scan in ordered if scan.prompt), None)
    title = title or next((scan.item_prompt for scan in ordered if scan.item_prompt), None)
    return ForeignSummary(
        session_id=foreign_session_id(KIND, native_id),
        source_kind=KIND,
        native_id=native_id,
        cwd=next((scan.cwd for scan in ordered if scan.cwd), None),
        created_at=created,
        updated_at=max(updated, created),
        title=title,
        paths=tuple(Path(scan.path) for scan in ordered),
    )


def read_session(
    root: Path, files: CodexSessionFiles, thread_names: Mapping[str, str] | None = None
) -> ForeignSession:
    """Read all rollout files of one session in full: summary and conversation as a surface snapshot.

    `thread_names` defaults to reading `session_index.jsonl`. Raises `ForeignSourceError` when
    a file cannot be opened safely or the session has no file.
    """
    if not files.paths:
        raise ForeignSourceError(
            ForeignSourceErrorCode.INVALID_SESSION, f"codex session {files.native_id!r} has no file"
        )
    names = scan_thread_names(root).names if thread_names is None else thread_names
    with contextlib.ExitStack() as stack:
        opened = []
        for path in files.paths:
            handle, info = open_inside(root, path)
            stack.enter_context(handle)
            scan = CodexScan(path=str(path), size=info.st_size, mtime_ns=info.st_mtime_ns)
            first = next(iter(LineReader(handle)), (0, None))[1]
            if (record := parse_record(first)) is not None:
                scan.take(1, record)
            opened.append((_file_order(scan), path, info, handle))
        opened.sort(key=lambda item: item[0])
        conversation = CodexConversation()
        scans: list[CodexScan] = []
        base = pending = 0
        skipped: list[int] = []
        for _, path, info, handle in opened:
            scan = CodexScan(path=str(path), size=info.st_size, mtime_ns=info.st_mtime_ns)
            scans.append(scan)

            def take(number: int, record: dict[str, Any], scan: CodexScan = scan, base: int = base) -> None:
                scan.note(number, record)
                conversation.take(base + number, record)

            read = read_records(handle, take)
            skipped.extend(base + number for number in read.skipped)
            pending += 1 if read.pending else 0
            base += read.lines_read
    summary = summarize(files.native_id, scans, names)
    return ForeignSession(
        summary=summary,
        snapshot=build_snapshot(summary, conversation.projected),
        skipped_lines=len(skipped) + pending,
        lines_read=base,
        skipped_at=tuple(skipped),
    )


class CodexTitleIndex:
    """`session_index.jsonl` as a `TitleIndex`: the names `codex` renames give sessions."""

    scan_type: Final = ThreadNames

    def path(self, root: Path) -> Path:
        """`<root>/session_index.jsonl`."""
        return root / SESSION_INDEX

    def scan(self, root: Path, previous: FileScan | None) -> ThreadNames:
        """The rename index scanned, resuming from `previous`."""
        return scan_thread_names(root, previous if isinstance(previous, ThreadNames) else None)

    def names(self, scan: FileScan) -> dict[str, str]:
        """The last name per session id."""
        return scan.names if isinstance(scan, ThreadNames) else {}


class CodexReader:
    """Codex CLI as a `SourceReader`: a session's rollout files grouped by id, titles from renames."""

    info: Final = INFO
    scan_type: Final = CodexScan
    title_index: Final = CodexTitleIndex()
    database: Final = None

    def default_root(self, env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
        """`$CODEX_HOME` when set, else `~/.codex`."""
        return default_root(env, home)

    def walk(self, root: Path) -> Iterator[SessionFiles]:
        """Every session with its rollout files."""
        for group in walk(root):
            yield SessionFiles(group.native_id, group.paths)

    def scan(self, root: Path, path: Path, previous: FileScan | None) -> CodexScan:
        """The resumable discovery scan of one rollout file."""
        return scan_session_file(root, path, previous if isinstance(previous, CodexScan) else None)

    def summarize(
        self, root: Path, native_id: str | None, scans: Sequence[FileScan], context: WalkContext
    ) -> ForeignSummary | None:
        """The session's facts from its files' scans and the rename index."""
        rollouts = [scan for scan in scans if isinstance(scan, CodexScan)]
        if native_id is None or not rollouts:
            return None
        return summarize(native_id, rollouts, context.names)

    def read(self, root: Path, native_id: str, paths: Sequence[Path]) -> ForeignSession:
        """Every rollout file of the session read in full (titles come from the index, not read here)."""
        return read_session(root, CodexSessionFiles(native_id, tuple(paths)), {})


READER: Final = CodexReader()
