"""Cursor's agent transcripts: `~/.cursor/projects/<project>/agent-transcripts/`, one JSONL per chat.

Read-only; a closed format (docs/sources/cursor.md, "Agent transcripts", says what the reader relies
on and where the shape comes from). Cursor's agent (the `cursor-agent` CLI, and the IDE's agent)
writes one transcript per chat, nested (`<id>/<id>.jsonl`) or flat (`<id>.jsonl`); the id is the
file's name. Sub-agents' transcripts (`<id>/subagents/`) are not listed, as Cursor does not list
them, and older plain-text transcripts (`*.txt`) are not read.

* **Records**: `{"role": "user" | "assistant", "message": {"content": <text or blocks>}}`; any other
  line (a `turn_ended` marker, an unknown record, a bad line) is skipped alone.
* **Projected**: the `text` blocks of user and assistant records (a content that is a string counts
  as one); never `tool_use`, `tool_result`, thinking, redacted or other blocks. A prompt is the text
  inside its `<user_query>` wrapper when it has one, without a `<timestamp>` block otherwise.
* **Title**: the first prompt (the format has none). **cwd**: the known folder whose name, its
  separators as `-`, is the project folder's name (`home-ana-shop` ← `/home/ana/shop`); none when
  no known folder or more than one matches (the name is lossy and never decoded). **Times**: the
  records carry none: the file's mtime.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from sessionref.contract.events import SurfaceEvent
from sessionref.contract.titles import prompt_title
from sessionref.sources.foreign import assistant_event, user_event
from sessionref.sources.reader import WalkContext
from sessionref.sources.registry import registered
from sessionref.sources.session_file import SessionFileReader, SessionScan
from sessionref.sources.walking import list_dirs, list_files, real_root

__all__ = ["KIND", "READER", "CursorAgentScan", "folder_key", "prompt_text", "walk"]

KIND: Final = "cursor-agent"
INFO: Final = registered(KIND)
PROVIDER: Final = "cursor"
MODEL: Final = "unknown"
"""The transcripts name no model."""
TRANSCRIPTS: Final = "agent-transcripts"
_QUERY: Final = re.compile(r"<user_query>(.*?)(?:</user_query>|\Z)", re.DOTALL)
_TIMESTAMP: Final = re.compile(r"<timestamp>.*?(?:</timestamp>|\Z)", re.DOTALL)
_SEPARATORS: Final = re.compile(r"[^A-Za-z0-9]+")
_KEYS_MEMO: Final = "cursor-agent-folder-keys"


def default_root(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """`~/.cursor` (or `[sources] cursor_agent_root`)."""
    return (Path.home() if home is None else home) / ".cursor"


def walk(root: Path) -> Iterator[Path]:
    """Every chat's transcript under `root/projects/*/agent-transcripts/`, nested or flat; reads no file."""
    inside = real_root(root)
    for project in list_dirs(root / "projects", inside):
        transcripts = project / TRANSCRIPTS
        yield from list_files(transcripts, inside, "", (".jsonl",))
        for chat in list_dirs(transcripts, inside):
            yield from (
                path for path in list_files(chat, inside, chat.name, (".jsonl",)) if path.stem == chat.name
            )


def folder_key(name: str) -> str:
    """A project folder's name or a folder's path as compared: every run of other characters than
    letters and digits one `-`, none at the ends (`/home/ana/my.app` → `home-ana-my-app`)."""
    return _SEPARATORS.sub("-", name).strip("-")


def project_cwd(path: Path, context: WalkContext) -> str | None:
    """The known folder a transcript's project folder is named after; None when none or several match."""
    parents = path.parents
    project = parents[2] if path.parent.name != TRANSCRIPTS else parents[1]
    keys = context.memo.get(_KEYS_MEMO)
    if not isinstance(keys, dict):
        table: dict[str, str | None] = {}
        for folder in context.known_cwds:
            key = folder_key(folder)
            table[key] = None if key in table and table[key] != folder else folder  # None: ambiguous
        context.memo[_KEYS_MEMO] = keys = table
    found = keys.get(folder_key(project.name))
    return found if isinstance(found, str) else None


def _texts(record: Mapping[str, Any]) -> list[str]:
    """The visible text blocks of a record's message (a string content is one)."""
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [content] if content.strip() else []
    if not isinstance(content, list):
        return []
    return [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and block["text"].strip()
    ]


def prompt_text(content: str) -> str:
    """What the person typed: the text inside `<user_query>` if wrapped, else without `<timestamp>`."""
    queries = _QUERY.findall(content)
    text = "\n".join(queries) if queries else _TIMESTAMP.sub("", content)
    return text.strip()


def _prompt(record: Mapping[str, Any]) -> str:
    return prompt_text("\n".join(_texts(record)))


@dataclass(slots=True)
class CursorAgentScan(SessionScan):
    """Discovery state of one transcript."""

    KIND: ClassVar[str] = KIND

    def wants(self, raw: bytes) -> bool:
        return self.prompt is None or not self.conversation

    def take(self, number: int, record: dict[str, Any]) -> None:
        role = record.get("role")
        if role == "user" and (text := _prompt(record)):
            self.conversation = True
            self.prompt = self.prompt or prompt_title(text)
        elif role == "assistant" and _texts(record):
            self.conversation = True

    def record_time(self, record: dict[str, Any]) -> int | None:
        return None  # the records carry no time: the file's mtime stands in


class CursorAgentConversation:
    """A transcript's prompts and answers, in order."""

    def __init__(self) -> None:
        self._events: list[SurfaceEvent] = []

    def take(self, number: int, record: dict[str, Any]) -> None:
        """Keep a prompt or an answer's text blocks; leave out every other record and block."""
        role = record.get("role")
        if role == "user" and (text := _prompt(record)):
            self._events.append(user_event(number, 0, f"line-{number}", [text]))
        elif role == "assistant" and (texts := _texts(record)):
            self._events.append(assistant_event(number, 0, f"line-{number}", texts, PROVIDER, MODEL))

    def events(self) -> list[SurfaceEvent]:
        """The events read so far."""
        return self._events


class CursorAgentFormat:
    """Cursor's agent transcript records."""

    scan_type: type[SessionScan] = CursorAgentScan

    def native_id(self, path: Path, scan: SessionScan) -> str | None:
        """The transcript's name without `.jsonl` (the chat's id)."""
        return path.stem or None

    def conversation(self) -> CursorAgentConversation:
        """A fresh transcript builder."""
        return CursorAgentConversation()


READER: Final = SessionFileReader(
    INFO, CursorAgentFormat(), default_root=default_root, walk=walk, folder_cwd=project_cwd
)
