"""The `[sources]` settings: which other agents' histories (`sessionref.sources.registry`) are read.

``config.toml`` (every key optional; every registered source has a switch and a root key)::

    [sources]
    claude_code = true               # false: never list or read Claude Code sessions
    codex = true
    gemini = true
    claude_code_root = "~/.claude"   # default: $CLAUDE_CONFIG_DIR, else ~/.claude
    codex_root = "~/.codex"          # default: $CODEX_HOME, else ~/.codex
    gemini_root = "~/.gemini"        # default: $GEMINI_CLI_HOME/.gemini, else ~/.gemini

``SESSIONREF_SOURCES`` (and the command line's ``--sources``) name the sources to read, e.g.
``claude-code,codex``, or ``all`` / ``none``; it wins over the switches in the file. By default
every source whose folder exists is read. Roots must be absolute paths (``~`` is expanded).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from sessionref.contract.errors import CodedError
from sessionref.contract.excerpts import bounded_excerpt
from sessionref.sources import SOURCE_KINDS, SourceKind
from sessionref.sources.registry import SOURCES

__all__ = [
    "SOURCES_ENV",
    "SourceListError",
    "SourcesSettings",
    "parse_source_list",
    "sources_layer",
]

SOURCES_ENV: Final = "SESSIONREF_SOURCES"
ALL_SOURCES: Final = "all"
NO_SOURCES: Final = "none"
CONFIG_KEYS: Final[dict[str, SourceKind]] = {info.config_key: info.kind for info in SOURCES}
"""`[sources]` switch keys (TOML-friendly) and the source each one names."""
ROOT_SUFFIX: Final = "_root"
SHOWN_CHARS: Final = 80


class SourceListError(ValueError):
    """A source list that names no known source (the message lists the known ones)."""


def parse_source_list(text: str) -> tuple[SourceKind, ...]:
    """The sources a list names: `claude-code,codex` (`_` works for `-`), `all` or `none` (or empty)."""
    words = [word.strip().lower().replace("_", "-") for word in text.split(",")]
    words = [word for word in words if word]
    if not words or words == [NO_SOURCES]:
        return ()
    if words == [ALL_SOURCES]:
        return SOURCE_KINDS
    chosen: list[SourceKind] = []
    for word in words:
        kind = word if word in SOURCE_KINDS else None
        if kind is None:
            known = ", ".join(SOURCE_KINDS)
            shown = bounded_excerpt(word, SHOWN_CHARS)
            also = f"{ALL_SOURCES} / {NO_SOURCES}"
            raise SourceListError(f"unknown source {shown!r} (known: {known}, or {also})")
        if kind not in chosen:
            chosen.append(kind)
    return tuple(chosen)


class SourcesSettings(BaseModel):
    """Which sources may be read and where (None: not set, the default applies)."""

    model_config = ConfigDict(frozen=True)

    switches: dict[SourceKind, bool] = {}
    """`[sources] claude_code = false` and the like."""
    roots: dict[SourceKind, Path] = {}
    """`[sources] claude_code_root = "…"` and the like."""
    selection: tuple[SourceKind, ...] | None = None
    """`SESSIONREF_SOURCES`: exactly these sources (wins over `switches`)."""


def _bool(value: object, where: str, error: Callable[[str], CodedError]) -> bool:
    if isinstance(value, bool):
        return value
    raise error(f"{where} must be true or false, got {bounded_excerpt(repr(value), SHOWN_CHARS)}")


def _root(value: object, where: str, error: Callable[[str], CodedError]) -> Path:
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise error(f"{where} must be a folder path")
    text = value.strip()
    try:
        path = Path(text).expanduser()
    except RuntimeError:  # "~nosuchuser"
        raise error(f"{where}: no home directory for {bounded_excerpt(text, SHOWN_CHARS)!r}") from None
    if not path.is_absolute():
        shown = bounded_excerpt(text, SHOWN_CHARS)
        raise error(f"{where} must be an absolute path (or start with ~), got {shown!r}")
    return path


def sources_layer(
    table: Mapping[str, Any],
    path: Path,
    env: Mapping[str, str],
    error: Callable[[str], CodedError],
) -> SourcesSettings:
    """`[sources]` from a config table (already known to be a table), then `SESSIONREF_SOURCES`.

    `error(message)` makes the coded error to raise for a bad value (SETTINGS_INVALID).
    """
    switches: dict[SourceKind, bool] = {}
    roots: dict[SourceKind, Path] = {}
    for key, value in table.items():
        where = f"{path}: [sources] {key}"
        if key in CONFIG_KEYS:
            switches[CONFIG_KEYS[key]] = _bool(value, where, error)
        elif key.endswith(ROOT_SUFFIX) and key[: -len(ROOT_SUFFIX)] in CONFIG_KEYS:
            roots[CONFIG_KEYS[key[: -len(ROOT_SUFFIX)]]] = _root(value, where, error)
        else:
            known = ", ".join([*CONFIG_KEYS, *(f"{name}{ROOT_SUFFIX}" for name in CONFIG_KEYS)])
            shown = bounded_excerpt(repr(key), SHOWN_CHARS)
            raise error(f"{path}: unknown key [sources] {shown} (known: {known})")
    selection: tuple[SourceKind, ...] | None = None
    listed = env.get(SOURCES_ENV)
    if listed is not None and listed.strip():
        try:
            selection = parse_source_list(listed)
        except SourceListError as problem:
            raise error(f"{SOURCES_ENV}: {problem}") from None
    return SourcesSettings(switches=switches, roots=roots, selection=selection)
