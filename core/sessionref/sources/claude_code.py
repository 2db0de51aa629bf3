"""Claude Code histories: `$CLAUDE_CONFIG_DIR` or `~/.claude`, `projects/<escaped cwd>/<session uuid>.jsonl`.

Read-only. The session id is the file name's stem (what `claude --resume` takes); folders
beside a session file (`<uuid>/subagents/`, `tool-results/`) and `agent-*.jsonl` files are
not sessions and are never listed.

Projection (what a reference shows), decided where the formats are silent:

* **Live branch.** `user`/`assistant`/`system` lines form a tree through `parentUuid`. The
  live conversation is the chain ending at the newest leaf, taken as the last non-sidechain
  `user` or `assistant` line of the file (appends go to the live branch; a rewind leaves the
  abandoned branch behind, earlier in the file). Lines of any type on the chain are walked
  through; a missing parent or a cycle ends the chain.
* **Compaction.** A `system` line with `subtype: "compact_boundary"` has a null `parentUuid`
  and points back with `logicalParentUuid`. When the chain met the compact summary after it
  (`isCompactSummary: true`), the chain stops at the boundary: the summary becomes a
  checkpoint (compaction id: the summary's parent, i.e. the boundary's uuid) standing for
  everything before. A boundary *without* a summary on the chain (a compaction cut short)
  hides nothing: the walk continues through `logicalParentUuid`.
* **User text.** A user line counts when it is not `isMeta` and not a sidechain; its content
  is a string or a list whose `text` blocks are kept. Blocks that are tool plumbing or UI
  markup are dropped: `tool_result`/`image` blocks, and texts that start with
  `<command-name>`, `<command-message>`, `<command-args>`, `<local-command-stdout>`,
  `<local-command-stderr>`, `<local-command-caveat>` or `<system-reminder>`, and the
  interruption notices Claude Code writes itself (`[Request interrupted by user]`,
  `[Request interrupted by user for tool use]`).
* **Assistant text.** Only `text` blocks (no `thinking`, no `tool_use`). The several lines one
  API response is written as (same `message.id`) become one message whose text blocks keep
  their order; its seq is the line of its last part.
* **Titles.** The newest `custom-title` (a rename) wins; else the newest `ai-title`, ranked
  above `summary` because it is written for this session; else the newest `summary` whose
  `leafUuid` is a line of this file (a `summary` naming a leaf that is not here describes
  another conversation, the one this file was resumed from, and is never the title; one
  without a `leafUuid` counts); else the first real user prompt of the file (the store's
  fallback title, `contract.titles.prompt_title`), even if a later rewind abandoned it.
* **Not a session.** An empty file, or one without a single `user` or `assistant` line (only
  `summary` lines, say), is not listed.
* **cwd** is the first `cwd` of the file's lines (the folder name is a lossy escape, never
  decoded). **Times**: created = first record timestamp, updated = last record timestamp;
  without any, the file's mtime.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

from sessionref.contract.events import SurfaceEvent
from sessionref.contract.titles import normalize_title, prompt_title
from sessionref.sources.foreign import (
    ForeignSession,
    ForeignSummary,
    assistant_event,
    build_snapshot,
    checkpoint_event,
    foreign_session_id,
    user_event,
)
from sessionref.sources.lines import LineReader, open_inside, parse_record, parse_timestamp, read_records
from sessionref.sources.reader import SessionFiles, WalkContext
from sessionref.sources.registry import registered
from sessionref.sources.scan import FileScan, scan_file
from sessionref.sources.walking import env_root, list_dirs, list_files, real_root

__all__ = [
    "KIND",
    "PROVIDER",
    "READER",
    "ClaudeCodeReader",
    "ClaudeScan",
    "default_root",
    "read_session",
    "scan_session_file",
    "walk",
]

KIND: Final = "claude-code"
INFO: Final = registered(KIND)
PROVIDER: Final = "anthropic"
UNKNOWN_MODEL: Final = "unknown"
ENV_VARIABLE: Final = "CLAUDE_CONFIG_DIR"
MARKUP_PREFIXES: Final = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<system-reminder>",
)
TOOL_NOTICES: Final = frozenset(
    {"[Request interrupted by user]", "[Request interrupted by user for tool use]"}
)
_TITLE_MARKERS: Final = (b'"custom-title"', b'"ai-title"', b'"summary"')
MAX_UNPLACED_SUMMARIES: Final = 16
"""`summary` lines waiting for their leaf kept per file (a file resumed many times keeps the newest)."""


def default_root(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """`$CLAUDE_CONFIG_DIR` when set, else `~/.claude`."""
    return env_root(env, ENV_VARIABLE, home, ".claude")


def walk(root: Path) -> Iterator[Path]:
    """Every session file under `root/projects/*/`, by folder then name; reads no file."""
    inside = real_root(root)
    for project in list_dirs(root / "projects", inside):
        for path in list_files(project, inside, "", (".jsonl",)):
            if not path.name.startswith("agent-"):
                yield path


def _is_prompt_text(text: str) -> bool:
    return not text.lstrip().startswith(MARKUP_PREFIXES) and text.strip() not in TOOL_NOTICES


def _all_texts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        block["text"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]


def _message(record: Mapping[str, Any]) -> Mapping[str, Any]:
    message = record.get("message")
    return message if isinstance(message, dict) else {}


def prompt_texts(record: Mapping[str, Any]) -> list[str]:
    """The texts a person typed on a `user` line ([] for meta, sidechain, compact summary or tool lines)."""
    if (
        record.get("isMeta") is True
        or record.get("isSidechain") is True
        or record.get("isCompactSummary") is True
    ):
        return []
    return [text for text in _all_texts(_message(record).get("content")) if _is_prompt_text(text)]


def _record_time(record: Mapping[str, Any]) -> int | None:
    return parse_timestamp(record.get("timestamp"))


@dataclass(slots=True)
class ClaudeScan(FileScan):
    """Discovery state of one Claude Code session file (see `FileScan`)."""

    KIND: ClassVar[str] = KIND

    custom_title: str | None = None
    ai_title: str | None = None
    summary_title: str | None = None
    prompt: str | None = None
    conversation: bool = False
    """Whether a `user` or `assistant` line was seen (without one the file is not a session)."""
    unplaced: list[list[str]] = field(default_factory=list)
    """`[leafUuid, title]` of the `summary` lines whose leaf was not met in the file yet, in order."""

    def wants(self, raw: bytes) -> bool:
        if self.created_at is None or self.cwd is None or self.prompt is None:
            return True
        if any(marker in raw for marker in _TITLE_MARKERS):
            return True
        return any(leaf.encode() in raw for leaf, _ in self.unplaced)

    def place(self, uuid: str) -> None:
        """A line `uuid` is in the file: a `summary` naming it as its leaf describes this session."""
        for index, (leaf, title) in enumerate(self.unplaced):
            if leaf == uuid:
                del self.unplaced[index]
                self.summary_title = title  # the newest placed one wins (placed in file order)
                return

    def _summary_line(self, record: Mapping[str, Any]) -> None:
        title = normalize_title(record.get("summary"))
        if title is None:
            return
        leaf = record.get("leafUuid")
        if not isinstance(leaf, str) or not leaf:
            self.summary_title = title
        elif len(self.unplaced) < MAX_UNPLACED_SUMMARIES:
            self.unplaced.append([leaf, title])

    def take(self, number: int, record: dict[str, Any]) -> None:
        if self.created_at is None:
            self.created_at = _record_time(record)
        if self.cwd is None and isinstance(record.get("cwd"), str) and record["cwd"]:
            self.cwd = record["cwd"]
        kind = record.get("type")
        if kind == "custom-title":
            self.custom_title = normalize_title(record.get("customTitle")) or self.custom_title
        elif kind == "ai-title":
            self.ai_title = normalize_title(record.get("aiTitle")) or self.ai_title
        elif kind == "summary":
            self._summary_line(record)
        if kind in ("user", "assistant"):
            self.conversation = True
        if kind == "user" and self.prompt is None:
            texts = prompt_texts(record)
            if texts:
                self.prompt = prompt_title("\n".join(texts))
        uuid = record.get("uuid")
        if self.unplaced and isinstance(uuid, str) and kind != "summary":
            self.place(uuid)

    def record_time(self, record: dict[str, Any]) -> int | None:
        return _record_time(record)

    @property
    def title(self) -> str | None:
        """Custom title, else AI title, else summary, else the first prompt's title."""
        return self.custom_title or self.ai_title or self.summary_title or self.prompt

    def summary(self) -> ForeignSummary:
        """The discovery facts this scan found (times fall back to the file's mtime); see `is_session`."""
        native_id = Path(self.path).stem
        fallback = max(0, self.mtime_ns // 1_000_000)
        created = self.created_at if self.created_at is not None else fallback
        return ForeignSummary(
            session_id=foreign_session_id(KIND, native_id),
            source_kind=KIND,
            native_id=native_id,
            cwd=self.cwd,
            created_at=created,
            updated_at=self.updated_at if self.updated_at is not None else created,
            title=self.title,
            paths=(Path(self.path),),
        )


def scan_session_file(root: Path, path: Path, previous: ClaudeScan | None = None) -> ClaudeScan:
    """Discovery scan of one session file, resuming from `previous` when the file only grew.

    A `summary` line whose leaf was written *before* it is placed by one more pass over the
    file's bytes, only when such a line was met in this scan.
    """
    scan = scan_file(root, path, previous, ClaudeScan)
    before = previous.unplaced if previous is not None else []
    if scan is not previous and any(pair not in before for pair in scan.unplaced):
        _place_earlier_leaves(root, path, scan)
    return scan


def _place_earlier_leaves(root: Path, path: Path, scan: ClaudeScan) -> None:
    """Place the unplaced summaries whose leaf is a line anywhere in the scanned part of the file."""
    leaves = {leaf.encode(): leaf for leaf, _ in scan.unplaced}
    found: set[str] = set()
    handle, _ = open_inside(root, path)
    with handle:
        reader = LineReader(handle)
        for _, raw in reader:
            if reader.line_start >= scan.offset:
                break
            if raw is None or not any(needle in raw for needle in leaves):
                continue
            record = parse_record(raw)
            uuid = record.get("uuid") if record is not None and record.get("type") != "summary" else None
            if isinstance(uuid, str) and uuid in leaves.values():
                found.add(uuid)
    for leaf, _ in list(scan.unplaced):
        if leaf in found:
            scan.place(leaf)


class _Node:
    """One line of the `parentUuid` tree, with only what the projection needs from it."""

    __slots__ = (
        "boundary",
        "line",
        "logical_parent",
        "message_id",
        "model",
        "parent",
        "role",
        "texts",
        "time",
        "uuid",
    )

    def __init__(self, uuid: str, record: dict[str, Any], line: int) -> None:
        parent = record.get("parentUuid")
        logical = record.get("logicalParentUuid")
        self.uuid = uuid
        self.line = line
        self.time = _record_time(record) or 0
        self.parent = parent if isinstance(parent, str) else None
        self.boundary = record.get("type") == "system" and record.get("subtype") == "compact_boundary"
        self.logical_parent = logical if self.boundary and isinstance(logical, str) else None
        self.role: str | None = None
        self.texts: list[str] = []
        self.message_id = uuid
        self.model = UNKNOWN_MODEL
        kind = record.get("type")
        if record.get("isSidechain") is True:
            return
        if kind == "user" and record.get("isCompactSummary") is True:
            self.role, self.texts = "checkpoint", _all_texts(_message(record).get("content"))
        elif kind == "user":
            self.role, self.texts = "user", prompt_texts(record)
        elif kind == "assistant":
            message = _message(record)
            self.role, self.texts = "assistant", _all_texts(message.get("content"))
            if isinstance(message.get("id"), str) and message["id"]:
                self.message_id = message["id"]
            if isinstance(message.get("model"), str) and message["model"]:
                self.model = message["model"]


def _live_chain(nodes: Mapping[str, _Node], leaf: str | None) -> list[_Node]:
    """The nodes from the root of the live branch to `leaf`, cut at a summarised compaction."""
    chain: list[_Node] = []
    seen: set[str] = set()
    summarised = False
    current = leaf
    while current is not None and current not in seen and (node := nodes.get(current)) is not None:
        seen.add(current)
        chain.append(node)
        summarised = summarised or node.role == "checkpoint"
        if node.boundary:
            if summarised:
                break
            current = node.logical_parent or node.parent
        else:
            current = node.parent
    chain.reverse()
    return chain


def _events(chain: list[_Node]) -> list[SurfaceEvent]:
    events: list[SurfaceEvent] = []
    answers: dict[str, SurfaceEvent] = {}
    for node in chain:
        if not node.texts:
            continue
        if node.role == "user":
            events.append(user_event(node.line, node.time, node.uuid, node.texts))
        elif node.role == "checkpoint":
            events.append(
                checkpoint_event(node.line, node.time, node.uuid, node.parent or node.uuid, node.texts)
            )
        elif node.role == "assistant":
            answer = answers.get(node.message_id)
            if answer is None:
                answer = assistant_event(
                    node.line, node.time, node.message_id, node.texts, PROVIDER, node.model
                )
                answers[node.message_id] = answer
                events.append(answer)
            else:
                answer["data"]["message"]["content"].extend({"type": "text", "text": t} for t in node.texts)
                answer["seq"], answer["time"] = node.line, node.time or answer["time"]
    return events


def read_session(root: Path, path: Path) -> ForeignSession:
    """Read one session file in full: its summary and its live conversation as a surface snapshot.

    Raises `ForeignSourceError` when the file cannot be opened safely; bad lines are counted.
    """
    handle, info = open_inside(root, path)
    scan = ClaudeScan(path=str(path), size=info.st_size, mtime_ns=info.st_mtime_ns)
    nodes: dict[str, _Node] = {}
    leaf: str | None = None

    def take(number: int, record: dict[str, Any]) -> None:
        nonlocal leaf
        scan.note(number, record)
        uuid = record.get("uuid")
        if not isinstance(uuid, str) or not uuid:
            return
        node = _Node(uuid, record, number)
        nodes[uuid] = node
        if node.role is not None:
            leaf = uuid

    with handle:
        read = read_records(handle, take)
    for leaf_id, _ in list(scan.unplaced):
        if leaf_id in nodes:
            scan.place(leaf_id)
    summary = scan.summary()
    events = _events(_live_chain(nodes, leaf))
    return ForeignSession(
        summary=summary,
        snapshot=build_snapshot(summary, events),
        skipped_lines=len(read.skipped) + (1 if read.pending else 0),
        lines_read=read.lines_read,
        skipped_at=tuple(read.skipped),
    )


class ClaudeCodeReader:
    """Claude Code as a `SourceReader`: one file is one session, named by its stem."""

    info: Final = INFO
    scan_type: Final = ClaudeScan
    title_index: Final = None
    database: Final = None

    def default_root(self, env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
        """`$CLAUDE_CONFIG_DIR` when set, else `~/.claude`."""
        return default_root(env, home)

    def walk(self, root: Path) -> Iterator[SessionFiles]:
        """Every session file, one per session (its id is its stem, read by `summarize`)."""
        for path in walk(root):
            yield SessionFiles(None, (path,))

    def scan(self, root: Path, path: Path, previous: FileScan | None) -> ClaudeScan:
        """The resumable discovery scan of one session file."""
        return scan_session_file(root, path, previous if isinstance(previous, ClaudeScan) else None)

    def summarize(
        self, root: Path, native_id: str | None, scans: Sequence[FileScan], context: WalkContext
    ) -> ForeignSummary | None:
        """The file's discovery facts."""
        (scan,) = scans
        return scan.summary() if isinstance(scan, ClaudeScan) and scan.conversation else None

    def read(self, root: Path, native_id: str, paths: Sequence[Path]) -> ForeignSession:
        """The session file read in full."""
        return read_session(root, paths[0])


READER: Final = ClaudeCodeReader()
