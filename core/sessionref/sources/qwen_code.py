"""Qwen Code histories: `~/.qwen/projects/<escaped cwd>/chats/<session id>.jsonl`.

The format, and what it was checked against: docs/sources/qwen-code.md.

Read-only. One file is one session; its id is the file name's stem. Records form a tree through
`parentUuid`, like Claude Code's: the live conversation is the chain ending at the file's last
`user` or `assistant` record (a rewind leaves the abandoned branch earlier in the file).

* **Projected**: the `text` parts of `user` and `assistant` records' `message.parts`; never parts
  marked `thought: true` (reasoning), `functionCall`/`functionResponse` parts, `tool_result` or
  `system` records.
* **Compaction**: a `system` record with `subtype: "chat_compression"` that carries a summary
  text becomes a checkpoint standing for the chain before it; one without text hides nothing.
* **Title**: the last `custom_title` record; else the first prompt. **cwd**: the first `cwd`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from sessionref.contract.events import SurfaceEvent
from sessionref.contract.titles import prompt_title
from sessionref.sources.foreign import assistant_event, checkpoint_event, user_event
from sessionref.sources.lines import parse_timestamp
from sessionref.sources.registry import registered
from sessionref.sources.session_file import SessionFileReader, SessionScan, tool_title
from sessionref.sources.walking import list_dirs, list_files, real_root

__all__ = ["KIND", "READER", "QwenScan", "walk"]

KIND: Final = "qwen-code"
INFO: Final = registered(KIND)
PROVIDER: Final = "qwen"
UNKNOWN_MODEL: Final = "unknown"
COMPRESSION: Final = "chat_compression"
CUSTOM_TITLE: Final = "custom_title"


def default_root(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """`~/.qwen` (Qwen Code documents no variable moving it; `[sources] qwen_code_root` does)."""
    return (Path.home() if home is None else home) / ".qwen"


def walk(root: Path) -> Iterator[Path]:
    """Every session file under `root/projects/*/chats/`, by folder then name; reads no file."""
    inside = real_root(root)
    for project in list_dirs(root / "projects", inside):
        yield from list_files(project / "chats", inside, "", (".jsonl",))


def _texts(record: Mapping[str, Any]) -> list[str]:
    """The visible text parts of a record's message (no reasoning, no tool calls or results)."""
    message = record.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(parts, list):
        return []
    return [
        part["text"]
        for part in parts
        if isinstance(part, dict)
        and isinstance(part.get("text"), str)
        and part.get("thought") is not True
        and part["text"].strip()
    ]


def _title_of(record: Mapping[str, Any]) -> str | None:
    payload = record.get("systemPayload")
    for value in (
        record.get("customTitle"),
        record.get("title"),
        payload.get("title") if isinstance(payload, dict) else None,
    ):
        if (title := tool_title(value)) is not None:
            return title
    return None


def _is_title_record(record: Mapping[str, Any]) -> bool:
    return CUSTOM_TITLE in (record.get("type"), record.get("subtype"))


def _summary_texts(record: Mapping[str, Any]) -> list[str]:
    payload = record.get("systemPayload")
    summary = payload.get("summary") if isinstance(payload, dict) else None
    if isinstance(summary, str) and summary.strip():
        return [summary]
    return _texts(record)


@dataclass(slots=True)
class QwenScan(SessionScan):
    """Discovery state of one Qwen Code session file."""

    KIND: ClassVar[str] = KIND

    def wants(self, raw: bytes) -> bool:
        if self.created_at is None or self.cwd is None or self.prompt is None or not self.conversation:
            return True
        return CUSTOM_TITLE.encode() in raw

    def take(self, number: int, record: dict[str, Any]) -> None:
        if self.created_at is None:
            self.created_at = parse_timestamp(record.get("timestamp"))
        if self.cwd is None and isinstance(record.get("cwd"), str) and record["cwd"]:
            self.cwd = record["cwd"]
        kind = record.get("type")
        if _is_title_record(record):
            self.named = _title_of(record) or self.named
        elif kind in ("user", "assistant"):
            self.conversation = True
            if kind == "user" and self.prompt is None and (texts := _texts(record)):
                self.prompt = prompt_title("\n".join(texts))

    def record_time(self, record: dict[str, Any]) -> int | None:
        return parse_timestamp(record.get("timestamp"))


class _Node:
    __slots__ = ("line", "model", "parent", "role", "texts", "time", "uuid")

    def __init__(self, uuid: str, record: Mapping[str, Any], line: int) -> None:
        parent = record.get("parentUuid")
        self.uuid, self.line = uuid, line
        self.parent = parent if isinstance(parent, str) else None
        self.time = parse_timestamp(record.get("timestamp")) or 0
        model = record.get("model")
        self.model = model if isinstance(model, str) and model else UNKNOWN_MODEL
        kind = record.get("type")
        self.role: str | None = None
        self.texts: list[str] = []
        if kind in ("user", "assistant"):
            self.role, self.texts = kind, _texts(record)
        elif kind == "system" and record.get("subtype") == COMPRESSION:
            self.role, self.texts = "checkpoint", _summary_texts(record)


class QwenConversation:
    """The live branch of a Qwen Code file, as surface events."""

    def __init__(self) -> None:
        self._nodes: dict[str, _Node] = {}
        self._leaf: str | None = None

    def take(self, number: int, record: dict[str, Any]) -> None:
        """Add one record to the tree; a user or assistant record is the newest leaf."""
        uuid = record.get("uuid")
        if not isinstance(uuid, str) or not uuid:
            return
        node = _Node(uuid, record, number)
        self._nodes[uuid] = node
        if node.role in ("user", "assistant"):
            self._leaf = uuid

    def events(self) -> list[SurfaceEvent]:
        """The chain from the live leaf back to the root, cut at a compression that has a summary."""
        chain: list[_Node] = []
        seen: set[str] = set()
        current = self._leaf
        while current is not None and current not in seen and (node := self._nodes.get(current)) is not None:
            seen.add(current)
            chain.append(node)
            if node.role == "checkpoint" and node.texts:
                break
            current = node.parent
        chain.reverse()
        events: list[SurfaceEvent] = []
        for node in chain:
            if not node.texts:
                continue
            if node.role == "user":
                events.append(user_event(node.line, node.time, node.uuid, node.texts))
            elif node.role == "assistant":
                events.append(
                    assistant_event(node.line, node.time, node.uuid, node.texts, PROVIDER, node.model)
                )
            elif node.role == "checkpoint":
                events.append(checkpoint_event(node.line, node.time, node.uuid, node.uuid, node.texts))
        return events


class QwenFormat:
    """Qwen Code's records: `QwenScan` and the live branch."""

    scan_type: type[SessionScan] = QwenScan

    def native_id(self, path: Path, scan: SessionScan) -> str | None:
        """The file name's stem."""
        return path.stem

    def conversation(self) -> QwenConversation:
        """A fresh live-branch builder."""
        return QwenConversation()


READER: Final = SessionFileReader(INFO, QwenFormat(), default_root=default_root, walk=walk)
