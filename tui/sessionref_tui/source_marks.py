"""The small mark that tells where a listed session comes from: `CC`, `CX`, `GM`, …, or nothing.

Sessions from other agents' histories have ids naming their source (`claude-code:<uuid>`,
`codex:<uuid>`, …; the store refuses such ids for its own logs), so the mark is read
from the id alone. Two ASCII letters, not a glyph: readable in any terminal, font and SVG
snapshot, and as wide everywhere (a one-cell emoji is not). Every list that names sessions shows
it in front of the title: the `@` picker, the sidebar, the switcher, the line mode's menu and
`sessionref sessions`. Sessions of the store itself have no mark.
"""

from __future__ import annotations

from typing import Final

from sessionref.sources import SOURCE_NAMES, SourceKind, source_kind_of
from sessionref.sources.registry import SOURCES

from sessionref_tui.display import NEW_SESSION_NAME

SOURCE_MARKS: Final[dict[SourceKind, str]] = {info.kind: info.mark for info in SOURCES}
"""Each registered source's mark (`sessionref.sources.registry`)."""
MARK_CELLS: Final = 2
"""Every mark is this wide; a row without one gets as many spaces where marks are shown."""
SOURCE_COLORS: Final[dict[SourceKind, str]] = {info.kind: info.color for info in SOURCES}
"""Each mark's color where the UI has colors (the letters alone still say it)."""
STORE_SOURCE: Final = "store"
"""The `source` of a session of the store itself (`sessions --json`)."""


def source_of(session_id: str) -> str:
    """The source kind of a session (`claude-code`, …), or `store` for the store's own sessions."""
    return source_kind_of(session_id) or STORE_SOURCE


def source_mark(session_id: str) -> str:
    """The session's mark (`CC`, `CX`, `GM`), or "" for a session of the store itself."""
    kind = source_kind_of(session_id)
    return SOURCE_MARKS[kind] if kind is not None else ""


def source_color(session_id: str) -> str | None:
    """The color of the session's mark, or None without one."""
    kind = source_kind_of(session_id)
    return SOURCE_COLORS[kind] if kind is not None else None


def untitled_name(session_id: str) -> str:
    """What a session without a title is called: `New session` for the store's own, never for another
    tool's session (that is "Claude Code session", and so on)."""
    name = source_name(session_id)
    return NEW_SESSION_NAME if name is None else f"{name} session"


def source_name(session_id: str) -> str | None:
    """What the session's source is called ("Claude Code"), or None for the store's own."""
    kind = source_kind_of(session_id)
    return SOURCE_NAMES[kind] if kind is not None else None
