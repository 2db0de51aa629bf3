"""What every benchmark script prints with: nearest-rank quantiles and markdown tables."""

from __future__ import annotations

from collections.abc import Sequence


def percentile(samples: Sequence[float], fraction: float) -> float:
    """The `fraction` quantile of `samples` (nearest rank); NaN when there are none."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def markdown_table(rows: Sequence[dict[str, str]]) -> str:
    """A markdown table of `rows` (the keys of the first row are the headers)."""
    headers = list(rows[0])
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row[header] for header in headers) + " |" for row in rows]
    return "\n".join(lines)
