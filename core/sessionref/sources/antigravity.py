"""Antigravity CLI histories: `~/.gemini/antigravity-cli/brain/<uuid>/.system_generated/logs/`.

Read-only; a closed format (docs/sources/antigravity.md says what the reader relies on). One
transcript is one session, named by its conversation folder (`agy --conversation <uuid>`).

* **Projected**: records whose `source` is `USER_EXPLICIT` (what the person typed, its wrappers
  removed: the text inside `<USER_REQUEST>`, without `<ADDITIONAL_METADATA>` or
  `<USER_SETTINGS_CHANGE>` blocks, wherever they sit) and `MODEL` (the answer's text). Every
  other source (tool steps, system, …) is left out.
* **cwd**: the `cwd` of the first `<ADDITIONAL_METADATA>` JSON block. **Title**: the first prompt
  (the format has none). **Times**: `created_at` of the records, else the file's mtime.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from sessionref.contract.events import SurfaceEvent
from sessionref.contract.titles import prompt_title
from sessionref.sources.foreign import assistant_event, user_event
from sessionref.sources.lines import parse_timestamp
from sessionref.sources.registry import registered
from sessionref.sources.session_file import SessionFileReader, SessionScan
from sessionref.sources.walking import list_dirs, list_files, real_root

__all__ = ["KIND", "READER", "AntigravityScan", "prompt_text", "walk"]

KIND: Final = "antigravity"
INFO: Final = registered(KIND)
PROVIDER: Final = "google"
MODEL: Final = "antigravity"
USER_SOURCE: Final = "USER_EXPLICIT"
MODEL_SOURCE: Final = "MODEL"
TRANSCRIPTS: Final = ("transcript.jsonl", "transcript_full.jsonl")
"""The transcript names, preferred first (some builds keep only the full one)."""
_REQUEST: Final = re.compile(r"<USER_REQUEST>(.*?)(?:</USER_REQUEST>|\Z)", re.DOTALL)
_METADATA: Final = re.compile(r"<ADDITIONAL_METADATA>(.*?)(?:</ADDITIONAL_METADATA>|\Z)", re.DOTALL)
_SETTINGS: Final = re.compile(r"<USER_SETTINGS_CHANGE>.*?(?:</USER_SETTINGS_CHANGE>|\Z)", re.DOTALL)


def default_root(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """`~/.gemini/antigravity-cli` (or `[sources] antigravity_root`)."""
    return (Path.home() if home is None else home) / ".gemini" / "antigravity-cli"


def walk(root: Path) -> Iterator[Path]:
    """The transcript of every conversation folder under `root/brain/`; reads no file."""
    inside = real_root(root)
    for conversation in list_dirs(root / "brain", inside):
        logs = conversation / ".system_generated" / "logs"
        found = {path.name: path for path in list_files(logs, inside, "transcript", (".jsonl",))}
        chosen = next((found[name] for name in TRANSCRIPTS if name in found), None)
        if chosen is not None:
            yield chosen


def _content(record: Mapping[str, Any]) -> str:
    content = record.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def prompt_text(content: str) -> str:
    """What the person typed in a user record: the request, without metadata or settings blocks."""
    without = _SETTINGS.sub("", _METADATA.sub("", content))
    requests = _REQUEST.findall(without)
    text = "\n".join(requests) if requests else without
    return text.strip()


def metadata_cwd(content: str) -> str | None:
    """The `cwd` of the content's `<ADDITIONAL_METADATA>` JSON block, if there is one."""
    for block in _METADATA.findall(content):
        try:
            value = json.loads(block.strip())
        except (ValueError, RecursionError):
            continue
        cwd = value.get("cwd") if isinstance(value, dict) else None
        if isinstance(cwd, str) and cwd.startswith("/"):
            return cwd
    return None


@dataclass(slots=True)
class AntigravityScan(SessionScan):
    """Discovery state of one transcript."""

    KIND: ClassVar[str] = KIND

    def wants(self, raw: bytes) -> bool:
        return self.created_at is None or self.cwd is None or self.prompt is None or not self.conversation

    def take(self, number: int, record: dict[str, Any]) -> None:
        if self.created_at is None:
            self.created_at = parse_timestamp(record.get("created_at"))
        source = record.get("source")
        if source == USER_SOURCE:
            content = _content(record)
            if self.cwd is None:
                self.cwd = metadata_cwd(content)
            text = prompt_text(content)
            if text:
                self.conversation = True
                self.prompt = self.prompt or prompt_title(text)
        elif source == MODEL_SOURCE and _content(record).strip():
            self.conversation = True

    def record_time(self, record: dict[str, Any]) -> int | None:
        return parse_timestamp(record.get("created_at"))


class AntigravityConversation:
    """A transcript's prompts and answers, in order."""

    def __init__(self) -> None:
        self._events: list[SurfaceEvent] = []

    def take(self, number: int, record: dict[str, Any]) -> None:
        """Keep a user request or a model answer; leave out every other record."""
        time = parse_timestamp(record.get("created_at")) or 0
        source = record.get("source")
        if source == USER_SOURCE and (text := prompt_text(_content(record))):
            self._events.append(user_event(number, time, f"line-{number}", [text]))
        elif source == MODEL_SOURCE and (text := _content(record).strip()):
            self._events.append(assistant_event(number, time, f"line-{number}", [text], PROVIDER, MODEL))

    def events(self) -> list[SurfaceEvent]:
        """The events read so far."""
        return self._events


class AntigravityFormat:
    """Antigravity CLI's transcript records."""

    scan_type: type[SessionScan] = AntigravityScan

    def native_id(self, path: Path, scan: SessionScan) -> str | None:
        """The conversation folder's name (`brain/<uuid>/.system_generated/logs/transcript.jsonl`)."""
        return path.parents[2].name if len(path.parents) > 2 else None

    def conversation(self) -> AntigravityConversation:
        """A fresh transcript builder."""
        return AntigravityConversation()


READER: Final = SessionFileReader(INFO, AntigravityFormat(), default_root=default_root, walk=walk)
