"""The contract's fixed limits, and the two choices a host makes: which profile, which placement.

Everything here is a plain value so that the pure modules, the service, the store and the hosts
agree on one spelling of each (docs/contract.md §0, §7 and decision D2).
"""

from __future__ import annotations

from typing import Final, Literal

MAX_SAFE_INTEGER: Final = 2**53 - 1
"""JavaScript's `Number.MAX_SAFE_INTEGER`: the largest count, limit or epoch-ms time the contract accepts."""

MAX_REFERENCES: Final = 3
"""The hard maximum of distinct sessions one message may reference."""

DEFAULT_CANDIDATE_LIMIT: Final = 50
"""How many candidates `list_candidates` returns when the caller gives no limit."""

DEFAULT_MAX_REFERENCE_BYTES: Final = 65536
"""The per-reference byte budget of the rc8 profile (docs/contract.md §0); the automatic budget's floor."""

DEFAULT_REFERENCE_CONTEXT_FRACTION: Final = 0.2
"""The share of the model's context (tokens × 4 bytes) one reference may use under the automatic budget."""

Profile = Literal["rc8", "later"]
"""Which upstream release the service reproduces byte for byte (docs/contract.md §0)."""

Placement = Literal["before", "after"]
"""Where a context message sits relative to the message that cited it (docs/contract.md, decision D2)."""

PLACEMENTS: Final[tuple[Placement, ...]] = ("before", "after")
"""Every placement, in the order settings list them."""
