"""Where a store's conversation index stands (`IndexStatus`), for a UI to show and a search to answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Phase = Literal["idle", "opening", "building", "ready", "unavailable", "closed"]
"""`idle` before `start`, `opening` while the file is opened and checked, `building` during a
(re)build, `ready` once caught up (later catch-ups and refreshes keep answering), `unavailable`
when no index can be used, `closed` after `close`."""


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """Where the index stands: its phase, `(done, total)` sessions during a build, sessions the last
    catch-up could not read, and why it is unavailable."""

    phase: Phase
    progress: tuple[int, int] | None = None
    skipped: int = 0
    message: str | None = None
