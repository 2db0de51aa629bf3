"""Which sessions listings hide as the caller's own live session (docs/mcp.md, "Trust boundary").

The caller is another agent, started by its host in the folder it works in; its own conversation
is being written while it calls us. It must never be handed back to it as "another session"
(it would read its own turn as untrusted background, or quote itself). The host does not tell us
which session is the caller's, so the rule is what can be known:

* a session whose cwd is the caller's cwd **and** whose last activity is less than
  `LIVE_SECONDS` old is taken for the caller's own live session, and left out of
  `list_sessions`, `search_conversations`, `resources/list` and the `mention` prompt's listing;
* an agent that knows its own id (or any it wants left out) passes it in `exclude`.

Reading a session by its id (`get_snapshot`, `get_messages`, `resources/read`) is never
refused: the id was chosen, so it is not handed over by surprise. The cost of the rule: another
session in the same folder that was active in the last `LIVE_SECONDS` (a second agent in the same
project) is listed only once it has been quiet that long, or by its id.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

LIVE_SECONDS: Final = 120
"""A session of the caller's folder active this recently counts as the caller's own."""


@dataclass(frozen=True, slots=True)
class LiveSessionRule:
    """The rule above for one request: the moment (epoch ms) it is answered and its `exclude` ids."""

    now_ms: float
    excluded: Collection[str] = ()

    def hides(self, session_id: str, same_folder: bool, last_activity: int) -> bool:
        """Whether a listing leaves this session out (`same_folder`: its cwd is the caller's)."""
        if session_id in self.excluded:
            return True
        return same_folder and self.now_ms - last_activity < LIVE_SECONDS * 1000
