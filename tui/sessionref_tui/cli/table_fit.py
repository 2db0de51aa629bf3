"""Fitting the CLI tables to a terminal: its width, and ids cut to a prefix that still names one session.

To a terminal (`terminal_width` is not None) `sessions` and `search` print rows no wider than the
terminal, with each id cut to the shortest prefix that tells it apart from every other id listed
(`show`, `mention`, `prepare` and `snapshot` take such a prefix). To a pipe or a file, and with
`--json`, ids are whole and columns keep their fixed widths, so scripts see the same text on every
machine.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from typing import Final

ID_PREFIX_MIN: Final = 8
"""A shortened id keeps at least this many characters after its source's `kind:` (e.g. `claude-code:`)."""


def terminal_width() -> int | None:
    """The width in cells of the terminal standard output writes to (`$COLUMNS` first), or None for
    a pipe or a file."""
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


def _floor(session_id: str) -> int:
    scheme = session_id.find(":") + 1  # 0 for the store's own ids
    return min(len(session_id), scheme + ID_PREFIX_MIN)


def shortest_unique_prefixes(ids: Sequence[str]) -> list[str]:
    """Each id cut to its shortest prefix (at least `ID_PREFIX_MIN` characters after any `kind:`) that
    is not the start of any other id in `ids`; an id that is the start of another stays whole."""
    distinct = sorted(set(ids))
    shortest: dict[str, str] = {}
    for index, session_id in enumerate(distinct):
        length = _floor(session_id)
        for neighbour in distinct[max(0, index - 1) : index] + distinct[index + 1 : index + 2]:
            common = 0
            for a, b in zip(session_id, neighbour, strict=False):
                if a != b:
                    break
                common += 1
            length = max(length, min(len(session_id), common + 1))
        shortest[session_id] = session_id[:length]
    return [shortest[session_id] for session_id in ids]
