"""`Vantage`: where a listing, a search or a snapshot is asked from when no session asks."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Vantage:
    """A `ReferencingAgent` with no session of its own (`id` "" excludes none), just a cwd: what the
    CLI and the MCP server list, search and prepare from."""

    id: str
    cwd: str | None
