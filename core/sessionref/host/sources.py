"""Which other agents' histories a host reads, where, and why: settings plus the command line.

For each registered source (`sessionref.sources.registry`), in order of precedence: the command line's
`--sources` list, else `SESSIONREF_SOURCES`, else the `[sources]` switch in `config.toml`, else on.
A source that is wanted is read only when its root folder exists. Roots come from `[sources]
<name>_root`, else the tool's own variable (`$CLAUDE_CONFIG_DIR`, say; each reader's
`default_root`), else its folder in the home directory. Nothing is created or read
here beyond one `is_dir` per source.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from sessionref.host.settings import Settings
from sessionref.host.source_settings import SOURCES_ENV
from sessionref.sources import SOURCE_KINDS, SOURCE_NAMES, SourceKind, default_roots
from sessionref.sources.registry import registered
from sessionref.store.foreign_state import ForeignRoot

__all__ = ["COMMAND_LINE", "DEFAULT", "SourceStatus", "enabled_roots", "resolve_sources"]

COMMAND_LINE: Final = "--sources"
DEFAULT: Final = "default"
CONFIG_SWITCH: Final = "[sources] {key} in config.toml"


@dataclass(frozen=True, slots=True)
class SourceStatus:
    """One source as a host resolved it: where its root is, whether it is read, and why."""

    kind: SourceKind
    root: Path
    wanted: bool
    decided_by: str
    """What decided `wanted`: `--sources`, `SESSIONREF_SOURCES`, the config switch, or `default`."""
    exists: bool

    @property
    def name(self) -> str:
        """What the source is called ("Claude Code")."""
        return SOURCE_NAMES[self.kind]

    @property
    def on(self) -> bool:
        """Whether the store reads this source: wanted, and its folder exists."""
        return self.wanted and self.exists

    @property
    def why(self) -> str:
        """One line saying why the source is on or off (for `sessionref sources`)."""
        if not self.wanted:
            return f"switched off by {self.decided_by}"
        if not self.exists:
            asked = "" if self.decided_by == DEFAULT else f" (asked for by {self.decided_by})"
            return f"no folder there{asked}"
        return "found" if self.decided_by == DEFAULT else f"switched on by {self.decided_by}"

    @property
    def foreign_root(self) -> ForeignRoot:
        """The source as the store takes it."""
        return ForeignRoot.of(self.kind, self.root)


def _config_key(kind: SourceKind) -> str:
    return registered(kind).config_key


def resolve_sources(
    settings: Settings,
    env: Mapping[str, str] | None = None,
    *,
    selection: Sequence[SourceKind] | None = None,
    home: Path | None = None,
) -> list[SourceStatus]:
    """Every source with its root and state; `selection` is the command line's `--sources` (None: not given).

    `env` supplies the tools' own root variables (default: the process environment); `home` the
    home directory for the default roots (default: the user's).
    """
    environment = os.environ if env is None else env
    defaults = default_roots(environment, home)
    chosen = settings.sources
    statuses: list[SourceStatus] = []
    for kind in SOURCE_KINDS:
        root = chosen.roots.get(kind) or defaults[kind]
        if selection is not None:
            wanted, decided_by = kind in selection, COMMAND_LINE
        elif chosen.selection is not None:
            wanted, decided_by = kind in chosen.selection, SOURCES_ENV
        elif kind in chosen.switches:
            wanted, decided_by = chosen.switches[kind], CONFIG_SWITCH.format(key=_config_key(kind))
        else:
            wanted, decided_by = True, DEFAULT
        statuses.append(SourceStatus(kind, root, wanted, decided_by, wanted and os.path.isdir(root)))
    return statuses


def enabled_roots(statuses: Sequence[SourceStatus]) -> list[ForeignRoot]:
    """The roots the store should read: the sources that are on."""
    return [status.foreign_root for status in statuses if status.on]
