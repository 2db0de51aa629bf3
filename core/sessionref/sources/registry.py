"""The one list of the other agents sessionref reads: each source's name, mark, color and reader module.

Every other place that needs the sources (settings keys, `--sources`, marks, default roots, the
store's walks and reads, `sessionref sources`) asks this registry, so adding an agent is one
reader module (exposing `READER`, a `sessionref.sources.reader.SourceReader`), its line here,
its fixtures and its page in `docs/sources/`. Importing this module loads no reader: the app
marks rows before its first frame from `SOURCES` alone; `SourceInfo.reader()` imports one
reader module on first use.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from sessionref.sources.reader import SourceReader

__all__ = ["SOURCES", "SourceInfo", "registered", "source_info"]


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """One source as every layer names it; its reader is loaded on demand."""

    kind: str
    """The id prefix (`claude-code:<uuid>`), the `--sources` word and the `[sources]` key (`-` as `_`)."""
    name: str
    """What the source is called in messages ("Claude Code")."""
    mark: str
    """Two ASCII letters in front of its sessions' titles."""
    color: str
    """The mark's color where the UI has colors."""
    module: str
    """The reader module under `sessionref.sources` (it exposes `READER`)."""
    linked: bool = False
    """Its databases live outside its root, in the projects its own list names (Crush): the store
    accepts exactly those (`DatabaseListing.linked_files`), never other paths outside the root."""

    @property
    def config_key(self) -> str:
        """The `[sources]` switch key (`claude_code`); the root key adds `_root`."""
        return self.kind.replace("-", "_")

    def reader(self) -> SourceReader:
        """The source's reader (its module is imported on first use)."""
        module = importlib.import_module(f"sessionref.sources.{self.module}")
        reader: SourceReader = module.READER
        return reader


SOURCES: Final[tuple[SourceInfo, ...]] = (
    SourceInfo("claude-code", "Claude Code", "CC", "#d97757", "claude_code"),
    SourceInfo("codex", "Codex CLI", "CX", "#3fb68b", "codex"),
    SourceInfo("gemini", "Gemini CLI", "GM", "#5b8def", "gemini"),
    SourceInfo("antigravity", "Antigravity CLI", "AG", "#8e6cf0", "antigravity"),
    SourceInfo("copilot", "GitHub Copilot CLI", "GH", "#6e7781", "copilot"),
    SourceInfo("opencode", "OpenCode", "OC", "#e0a526", "opencode"),
    SourceInfo("qwen-code", "Qwen Code", "QW", "#7b61ff", "qwen_code"),
    SourceInfo("cursor", "Cursor", "CU", "#2f80ed", "cursor"),
    SourceInfo("cursor-agent", "Cursor Agent", "CA", "#56a8f5", "cursor_agent"),
    SourceInfo("crush", "Crush", "CR", "#e24b8a", "crush", linked=True),
)
"""Every source, in the order they are listed and walked."""

_BY_KIND: Final[dict[str, SourceInfo]] = {info.kind: info for info in SOURCES}


def source_info(kind: str) -> SourceInfo | None:
    """The registered source called `kind`, or None."""
    return _BY_KIND.get(kind)


def registered(kind: str) -> SourceInfo:
    """The registered source called `kind` (a reader module names its own; KeyError otherwise)."""
    return _BY_KIND[kind]
