"""Where full transcripts of truncated references go: the `SpillStore` protocol and an in-memory store.

The reference service saves through any `SpillStore`; the embedded store offers one that writes
files under the store root (`sessionref.store.spill_files.DirectorySpillStore`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from sessionref.contract.omissions import SpillOwner, SpillRef, SpillSource


@runtime_checkable
class SpillStore(Protocol):
    """A place for full transcripts. Implementations must be safe to call concurrently."""

    async def save_text(
        self, owner: SpillOwner, source: SpillSource, suggested_name: str, content: str
    ) -> SpillRef:
        """Persist `content` (valid UTF-8 text) and return where it lives; raise on failure."""
        ...


@dataclass
class SavedText:
    """One call recorded by `MemorySpillStore`."""

    owner: SpillOwner
    source: SpillSource
    suggested_name: str
    content: str

    def to_json(self) -> dict[str, Any]:
        """Upstream save-request shape `{owner, source, suggestedName, content}`."""
        return {
            "owner": self.owner.to_json(),
            "source": self.source.to_json(),
            "suggestedName": self.suggested_name,
            "content": self.content,
        }


@dataclass
class MemorySpillStore:
    """Keeps saved transcripts in memory; for tests and for hosts without a disk.

    Every save returns the same `locator` unless `unique_locators` is set, in which
    case the suggested name is appended (`memory:reference/<n>/<name>`).
    """

    locator: str = "memory:reference"
    unique_locators: bool = False
    saved: list[SavedText] = field(default_factory=list)

    async def save_text(
        self, owner: SpillOwner, source: SpillSource, suggested_name: str, content: str
    ) -> SpillRef:
        """Record the save and return a reference to it; never fails."""
        self.saved.append(SavedText(owner, source, suggested_name, content))
        locator = self.locator
        if self.unique_locators:
            locator = f"{self.locator}/{len(self.saved)}/{suggested_name}"
        size = len(content.encode("utf-8", "surrogatepass"))
        return SpillRef(locator, size, f"Read {locator} by lines.")
