"""Gemini CLI histories: `~/.gemini/tmp/<project>/chats/session-*.jsonl` (and older `session-*.json`).

Read-only. The root is `$GEMINI_CLI_HOME/.gemini` when that variable is set (Gemini CLI's own
home override), else `~/.gemini`. Folders inside `chats/` hold subagent chats and are not
sessions. A `.json` file next to a `.jsonl` of the same name (an old copy) is not listed.

Decisions where the formats are silent:

* **Records.** The first record is metadata (`sessionId`, `startTime`, `lastUpdated`, ...; a
  record with `sessionId` and no `type`). Message records have `id` and `type`; only `user`
  and `gemini` are conversation (`info`/`error`/`warning` are kept in the history, so a
  rewind finds them, but never projected). A message's text is its string `content`, or the
  `text` of its parts joined *without* a separator (parts are pieces of one text, unlike
  Claude's separate blocks); parts marked `thought: true` are left out.
* **Updates.** `{"$set": {...}}` updates metadata (`summary` is the title, `lastUpdated` a
  time); with `messages` it replaces the whole history, which is read as a compaction: the
  first `user`/`gemini` item with text of the new history becomes the checkpoint (its
  compaction id: `line-<n>` of the `$set`), the other items follow as ordinary messages.
  `{"$rewindTo": id}` drops that message and everything after it (an unknown id changes
  nothing). A message id written again replaces the earlier record in place (last write wins).
* **Seqs.** Every message record, and every item of a replaced history, takes the next number of
  one counter that runs through the file in order: seqs are unique and grow with the file (a
  rewritten message takes a new, higher one and keeps its place in the list), which is what the
  conversation index keys messages by; `capturedThroughSeq` is the highest. A legacy `.json`
  file runs the same counter through its messages.
* **Titles.** The newest `summary`, else the first user message (the store's fallback-title
  rule). "First" is the first user message written, unless a rewind dropped it (then the next
  one written); rewriting it with new text retitles, rewriting it as another type does not
  (finding the next user message would need the whole history); a history replacement does
  not change it.
* **cwd** is the text of `.project_root` in the project folder (trailing newline removed),
  else the first of the metadata's `directories`, else (discovery only) the folder among those
  the store already knows whose SHA-256 is the metadata's `projectHash` or the project
  folder's name (older Gemini CLI names the folder so), else None. A session with no cwd
  would rank above every other folder's sessions, so matching it matters.
* **Sub-agent chats** (`kind: "subagent"` in the metadata, or files in a folder inside
  `chats/`) are not sessions of their own.
* **Times**: created = metadata `startTime` (else the first message's timestamp),
  updated = the time of the last record that has one (`timestamp`, or `lastUpdated`);
  without any, the file's mtime.

The history model (last write wins, rewinds, replacements) is in `gemini_history`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

from sessionref.contract.titles import normalize_title, prompt_title
from sessionref.sources.foreign import (
    ForeignSession,
    ForeignSourceError,
    ForeignSourceErrorCode,
    ForeignSummary,
    build_snapshot,
    foreign_session_id,
    is_valid_native_id,
)
from sessionref.sources.gemini_history import (
    GeminiHistory,
    apply_record,
    is_message,
    is_metadata,
    message_text,
)
from sessionref.sources.lines import (
    UTF8_BOM,
    open_inside,
    parse_record,
    parse_timestamp,
    read_records,
    read_small_text,
)
from sessionref.sources.reader import SessionFiles, WalkContext
from sessionref.sources.registry import registered
from sessionref.sources.scan import FileScan, scan_file
from sessionref.sources.walking import list_dirs, list_files, real_root

__all__ = [
    "KIND",
    "READER",
    "GeminiReader",
    "GeminiScan",
    "default_root",
    "project_cwd",
    "read_session",
    "scan_session_file",
    "walk",
]

KIND: Final = "gemini"
INFO: Final = registered(KIND)
ENV_VARIABLE: Final = "GEMINI_CLI_HOME"
PROJECT_ROOT_FILE: Final = ".project_root"
PROJECT_ROOT_MAX_BYTES: Final = 64 << 10
# A legacy single-object `.json` session is parsed whole; beyond this size it is refused.
LEGACY_MAX_BYTES: Final = 64 << 20
_HASHES_MEMO: Final = "gemini:folder-hashes"


def default_root(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """`$GEMINI_CLI_HOME/.gemini` when that variable is set, else `~/.gemini`."""
    environment = os.environ if env is None else env
    configured = environment.get(ENV_VARIABLE, "")
    if configured:
        return Path(configured).expanduser() / ".gemini"
    return (Path.home() if home is None else home) / ".gemini"


def walk(root: Path) -> Iterator[Path]:
    """Every session file under `root/tmp/*/chats/`, by project then name; reads no file."""
    inside = real_root(root)
    for project in list_dirs(root / "tmp", inside):
        files = list(list_files(project / "chats", inside, "session-", (".jsonl", ".json")))
        streamed = {path.stem for path in files if path.suffix == ".jsonl"}
        for path in files:
            if path.suffix == ".jsonl" or path.stem not in streamed:
                yield path


def path_hash(folder: str) -> str:
    """The SHA-256 (hex) Gemini CLI names a project by."""
    return hashlib.sha256(folder.encode("utf-8", "surrogatepass")).hexdigest()


def matching_folder(digests: Sequence[str], known_cwds: Iterable[str], memo: dict[str, object]) -> str | None:
    """The known folder whose `path_hash` is one of `digests` (hashes kept in `memo` for one walk)."""
    table = memo.get(_HASHES_MEMO)
    if not isinstance(table, dict):
        table = {path_hash(folder): folder for folder in known_cwds}
        memo[_HASHES_MEMO] = table
    for digest in digests:
        found = table.get(digest)
        if isinstance(found, str):
            return found
    return None


def project_cwd(root: Path, session_path: Path) -> str | None:
    """The project root named by `.project_root` beside the session's `chats/` folder, or None."""
    text = read_small_text(root, session_path.parent.parent / PROJECT_ROOT_FILE, PROJECT_ROOT_MAX_BYTES)
    if text is None:
        return None
    return text.rstrip("\r\n") or None


@functools.lru_cache(maxsize=4096)
def _needle(message_id: str) -> bytes | None:
    """The bytes a record naming `message_id` surely contains, or None when escaping could vary."""
    encoded = json.dumps(message_id)
    return encoded.encode() if encoded[1:-1] == message_id and message_id.isascii() else None


@dataclass(slots=True)
class GeminiScan(FileScan):
    """Discovery state of one Gemini session file (see `FileScan` and the module's title rules)."""

    KIND: ClassVar[str] = KIND

    session_id: str | None = None
    project_hash: str | None = None
    directory: str | None = None
    subagent: bool = False
    summary_title: str | None = None
    first_user_id: str | None = None
    first_user_title: str | None = None
    earlier_ids: list[str] = field(default_factory=list)

    def wants(self, raw: bytes) -> bool:
        if self.created_at is None or self.session_id is None or self.first_user_id is None:
            return True
        if b'"$set"' in raw or b'"$rewindTo"' in raw or b'"sessionId"' in raw:
            return True
        for message_id in (self.first_user_id, *self.earlier_ids):
            needle = _needle(message_id)
            if needle is None or needle in raw:
                return True
        return False

    def _message(self, record: Mapping[str, Any]) -> None:
        message_id, kind = record["id"], record["type"]
        title = prompt_title(message_text(record.get("content"))) if kind == "user" else None
        if message_id == self.first_user_id:
            self.first_user_title = title or self.first_user_title
        elif message_id in self.earlier_ids:
            if title is not None:
                del self.earlier_ids[self.earlier_ids.index(message_id) :]
                self.first_user_id, self.first_user_title = message_id, title
        elif self.first_user_id is None:
            if title is not None:
                self.first_user_id, self.first_user_title = message_id, title
            else:
                self.earlier_ids.append(message_id)

    def _project(self, metadata: Mapping[str, Any]) -> None:
        """The project facts of the metadata line: its hash, its first directory, sub-agent or not."""
        digest = metadata.get("projectHash")
        self.project_hash = digest.lower() if isinstance(digest, str) and digest else None
        directories = metadata.get("directories")
        first = directories[0] if isinstance(directories, list) and directories else None
        self.directory = first if isinstance(first, str) and os.path.isabs(first) else None
        self.subagent = metadata.get("kind") == "subagent"

    def _rewind(self, message_id: str) -> None:
        if message_id in self.earlier_ids:
            del self.earlier_ids[self.earlier_ids.index(message_id) :]
            self.first_user_id, self.first_user_title = None, None
        elif message_id == self.first_user_id:
            self.first_user_id, self.first_user_title = None, None

    def take(self, number: int, record: dict[str, Any]) -> None:
        if is_metadata(record):
            if self.session_id is None:
                self.session_id = record["sessionId"]
                started = parse_timestamp(record.get("startTime"))
                self.created_at = self.created_at if started is None else started
                self._project(record)
            self.summary_title = normalize_title(record.get("summary")) or self.summary_title
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            self.summary_title = normalize_title(update.get("summary")) or self.summary_title
            messages = update.get("messages")
            if self.first_user_id is None and isinstance(messages, list):
                for item in messages[1:]:
                    if isinstance(item, dict) and is_message(item):
                        self._message(item)
        elif isinstance(record.get("$rewindTo"), str):
            self._rewind(record["$rewindTo"])
        elif is_message(record):
            if self.created_at is None:
                self.created_at = parse_timestamp(record.get("timestamp"))
            self._message(record)

    def record_time(self, record: dict[str, Any]) -> int | None:
        if isinstance(record.get("$set"), dict):
            return parse_timestamp(record["$set"].get("lastUpdated"))
        if is_metadata(record):
            updated = parse_timestamp(record.get("lastUpdated"))
            return parse_timestamp(record.get("startTime")) if updated is None else updated
        return parse_timestamp(record.get("timestamp"))

    @property
    def title(self) -> str | None:
        return self.summary_title or self.first_user_title

    def summary(self, cwd: str | None) -> ForeignSummary:
        """The discovery facts of this file; raises `FOREIGN_SESSION_INVALID` without a session id yet."""
        native_id = self.session_id
        if not is_valid_native_id(native_id):
            raise ForeignSourceError(
                ForeignSourceErrorCode.INVALID_SESSION, f"{self.path!r} has no usable Gemini session id"
            )
        created = self.created_at if self.created_at is not None else max(0, self.mtime_ns // 1_000_000)
        return ForeignSummary(
            session_id=foreign_session_id(KIND, native_id),  # type: ignore[arg-type]  # checked above
            source_kind=KIND,
            native_id=native_id,  # type: ignore[arg-type]
            cwd=cwd,
            created_at=created,
            updated_at=self.updated_at if self.updated_at is not None else created,
            title=self.title,
            paths=(Path(self.path),),
        )


def _load_legacy(
    root: Path, path: Path, previous: GeminiScan | None = None
) -> tuple[GeminiScan, dict[str, Any] | None]:
    """Parse a legacy single-object session (whole file; refused above `LEGACY_MAX_BYTES`).

    Returns `previous` itself, unread, when its path, size and mtime still match.
    """
    handle, info = open_inside(root, path)
    scan = GeminiScan(path=str(path), size=info.st_size, mtime_ns=info.st_mtime_ns)
    with handle:
        if previous is not None and (previous.path, previous.size, previous.mtime_ns) == (
            scan.path,
            scan.size,
            scan.mtime_ns,
        ):
            return previous, None
        if info.st_size > LEGACY_MAX_BYTES:
            raise ForeignSourceError(
                ForeignSourceErrorCode.TOO_LARGE, f"{str(path)!r} is larger than {LEGACY_MAX_BYTES} bytes"
            )
        content = handle.read(info.st_size + 1)  # never a buffer larger than the file
    document = parse_record(content.removeprefix(UTF8_BOM).strip())
    if document is None:
        return scan, None
    metadata = {key: value for key, value in document.items() if key != "messages"}
    if is_metadata(metadata):
        scan.note(0, metadata)
    return scan, document


def scan_session_file(root: Path, path: Path, previous: GeminiScan | None = None) -> GeminiScan:
    """Discovery scan of one session file, resuming from `previous` when a `.jsonl` file only grew.

    A legacy `.json` file is parsed whole whenever its size or mtime changed.
    """
    if path.suffix != ".json":
        return scan_file(root, path, previous, GeminiScan)
    scan, document = _load_legacy(root, path, previous)
    if scan is not previous:
        for index, item in enumerate(_legacy_messages(document)):
            scan.note(index + 1, item)
    return scan


def _legacy_messages(document: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    messages = document.get("messages") if document is not None else None
    return [item for item in messages if isinstance(item, dict)] if isinstance(messages, list) else []


def read_session(root: Path, path: Path) -> ForeignSession:
    """Read one session file in full: its summary and its current history as a surface snapshot.

    Raises `ForeignSourceError` when the file cannot be opened safely, is too large (legacy
    `.json`), or names no session id.
    """
    history = GeminiHistory()
    if path.suffix == ".json":
        scan, document = _load_legacy(root, path)
        messages = _legacy_messages(document)
        for index, item in enumerate(messages):
            scan.note(index + 1, item)
            apply_record(history, index + 1, item)
        skipped, pending, lines_read = ([1] if document is None else []), 0, 1
    else:
        handle, info = open_inside(root, path)
        scan = GeminiScan(path=str(path), size=info.st_size, mtime_ns=info.st_mtime_ns)

        def take(number: int, record: dict[str, Any]) -> None:
            scan.note(number, record)
            apply_record(history, number, record)

        with handle:
            read = read_records(handle, take)
        skipped, pending, lines_read = read.skipped, (1 if read.pending else 0), read.lines_read
    summary = scan.summary(project_cwd(root, path) or scan.directory)
    return ForeignSession(
        summary=summary,
        snapshot=build_snapshot(summary, history.events()),
        skipped_lines=len(skipped) + pending,
        lines_read=lines_read,
        skipped_at=tuple(skipped),
    )


class GeminiReader:
    """Gemini CLI as a `SourceReader`: one file is one session, named by its metadata line."""

    info: Final = INFO
    scan_type: Final = GeminiScan
    title_index: Final = None
    database: Final = None

    def default_root(self, env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
        """`$GEMINI_CLI_HOME/.gemini` when that variable is set, else `~/.gemini`."""
        return default_root(env, home)

    def walk(self, root: Path) -> Iterator[SessionFiles]:
        """Every session file, one per session (its id is in its metadata, read by `summarize`)."""
        for path in walk(root):
            yield SessionFiles(None, (path,))

    def scan(self, root: Path, path: Path, previous: FileScan | None) -> GeminiScan:
        """The discovery scan of one session file (a legacy `.json` file is parsed whole)."""
        return scan_session_file(root, path, previous if isinstance(previous, GeminiScan) else None)

    def summarize(
        self, root: Path, native_id: str | None, scans: Sequence[FileScan], context: WalkContext
    ) -> ForeignSummary | None:
        """The file's discovery facts (its project's cwd read once per walk); None before its metadata."""
        (scan,) = scans
        if not isinstance(scan, GeminiScan) or not is_valid_native_id(scan.session_id) or scan.subagent:
            return None
        folder = os.path.dirname(os.path.dirname(scan.path))
        key = f"{KIND}:cwd:{folder}"
        if key not in context.memo:
            context.memo[key] = project_cwd(root, Path(scan.path))
        cwd = context.memo[key]
        if not isinstance(cwd, str):
            digests = [d for d in (scan.project_hash, os.path.basename(folder).lower()) if d]
            cwd = scan.directory or matching_folder(digests, context.known_cwds, context.memo)
        return scan.summary(cwd)

    def read(self, root: Path, native_id: str, paths: Sequence[Path]) -> ForeignSession:
        """The session file read in full."""
        return read_session(root, paths[0])


READER: Final = GeminiReader()
