"""Benchmark: byte-budget retention, ours versus a literal port of upstream's algorithm.

Run: `/work/venv/bin/python bench/bench_retention.py`. Prints a markdown table.

Each source session has mixed-size messages (ASCII, CJK, emoji, `<`, the odd
lone surrogate), a compaction checkpoint every 100 messages and a long newest
answer. The budget is below "checkpoints + newest", so retention must drop
every droppable message and then shorten the newest: the worst case for the
upstream algorithm, which re-serialises the whole snapshot after every step.

The literal port below exists only in this file. It follows contract §4.1 and
§4.2 step by step (full re-serialisation per size check, list removal, one
re-encoding per binary-search probe) so the speed-up is measured against the
behaviour we replaced, and its output is compared with ours for equality.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from collections.abc import Callable
from typing import Any

from sessionref.contract.js_json import utf8_len
from sessionref.contract.projection import project_session_conversation
from sessionref.contract.reference_budget import retain_referenced_session
from sessionref.contract.text_retainer import head_tail_retain

SIZES = (1_000, 10_000, 100_000)
LITERAL_LIMIT = 10_000  # the literal port is quadratic: beyond this it would run for many minutes
CHECKPOINT_EVERY = 100
NEWEST_CHARS = 20_000
SHORTEN_BYTES = 8_000
OUR_RUNS = 3
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

# ---------------------------------------------------------------------------------------------------
# Workload


def random_text(rng: random.Random, length: int) -> str:
    pieces = ["abcdefghij klmnop", "界面会话", "😀", "<tag>", "\n", "é"]
    weights = [70, 10, 4, 3, 8, 5]
    text = "".join(rng.choices(pieces, weights, k=max(1, length // 12)))
    if rng.random() < 0.02:
        text += "\udc00"
    return text


def build_snapshot(message_count: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    for seq in range(message_count):
        newest = seq == message_count - 1
        checkpoint = seq % CHECKPOINT_EVERY == 0 and not newest
        text = random_text(
            rng, NEWEST_CHARS if newest else rng.randint(100, 300) if checkpoint else rng.randint(10, 120)
        )
        if seq % 2 == 0 or checkpoint:
            source = {"kind": "plugin", "plugin": "compact"} if checkpoint else {"kind": "user"}
            data: dict[str, Any] = {
                "id": f"m{seq}",
                "role": "user",
                "content": [{"type": "text", "text": text}],
                "source": source,
            }
            events.append(
                {"type": "user/message", "seq": seq, "time": seq, "data": data, "surfaceOp": "append"}
            )
        else:
            message = {
                "id": f"m{seq}",
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "source": {"kind": "model", "provider": "p", "model": "m"},
            }
            data = {"turn": seq, "step": 0, "message": message}
            events.append(
                {"type": "assistant/message", "seq": seq, "time": seq, "data": data, "surfaceOp": "append"}
            )
    session = {"version": 0, "id": f"bench-{message_count}", "createdAt": 0, "cwd": "/bench"}
    return {"session": session, "capturedThroughSeq": message_count - 1, "events": events}


def budget_for(snapshot: dict[str, Any]) -> int:
    """A budget that forces every droppable message out and then a shorten of the newest."""
    items = project_session_conversation(snapshot)
    keep = [item for index, item in enumerate(items) if item.checkpoint or index == len(items) - 1]
    return literal_size(data_of(snapshot, "bench", [(item.role, item.text) for item in keep])) - SHORTEN_BYTES


# ---------------------------------------------------------------------------------------------------
# The literal port (benchmark only)


def literal_tag_safe_json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
    return text.replace("<", "\\u003c")


def literal_size(data: dict[str, Any]) -> int:
    return utf8_len(literal_tag_safe_json(data))


def data_of(snapshot: dict[str, Any], label: str, conversation: list[tuple[str, str]]) -> dict[str, Any]:
    session = snapshot["session"]
    return {
        "sessionId": session["id"],
        "label": label,
        "cwd": session.get("cwd"),
        "capturedThroughSeq": snapshot["capturedThroughSeq"],
        "conversation": [{"role": role, "text": text} for role, text in conversation],
    }


def literal_truncate(text: str, max_bytes: int) -> tuple[str, int]:
    if utf8_len(text) <= max_bytes:
        return text, 0
    best = ("", utf8_len(text))
    low, high = 0, max_bytes
    while low <= high:
        probe = (low + high) // 2
        kept = head_tail_retain(text, probe - probe // 2, probe // 2)
        omitted = kept.omitted_bytes or 0
        candidate = f"{kept.text}\n[… omitted {omitted} UTF-8 bytes …]"
        if utf8_len(candidate) <= max_bytes:
            best = (candidate, omitted)
            low = probe + 1
        else:
            high = probe - 1
    return best


def literal_retain(snapshot: dict[str, Any], label: str, max_bytes: int) -> dict[str, Any] | None:
    original = project_session_conversation(snapshot)
    retained = [
        {
            "role": item.role,
            "text": item.text,
            "original": item.text,
            "checkpoint": item.checkpoint,
            "omitted": 0,
        }
        for item in original
    ]

    def size() -> int:
        return literal_size(data_of(snapshot, label, [(item["role"], item["text"]) for item in retained]))

    omitted_messages = 0
    dropped_bytes = 0
    while size() > max_bytes:
        newest = len(retained) - 1
        index = next((i for i, item in enumerate(retained) if not item["checkpoint"] and i != newest), None)
        if index is None:
            break
        removed = retained.pop(index)
        omitted_messages += 1
        dropped_bytes += utf8_len(removed["original"])
    while size() > max_bytes:
        longest_index, longest_bytes = -1, -1
        for i, item in enumerate(retained):
            item_bytes = utf8_len(item["text"])
            if item_bytes > longest_bytes:
                longest_index, longest_bytes = i, item_bytes
        if longest_index < 0 or longest_bytes == 0:
            return None
        target = max(0, longest_bytes - (size() - max_bytes))
        text, omitted = literal_truncate(retained[longest_index]["original"], target)
        if text == retained[longest_index]["text"]:
            return None
        retained[longest_index]["text"] = text
        retained[longest_index]["omitted"] = omitted
    omitted_bytes = dropped_bytes + sum(item["omitted"] for item in retained)
    stats = {
        "compacted": any(item.checkpoint for item in original),
        "originalMessages": len(original),
        "retainedMessages": len(retained),
        "omittedMessages": omitted_messages,
        "omittedBytes": omitted_bytes,
        "truncated": omitted_messages > 0 or omitted_bytes > 0,
    }
    return {
        "data": data_of(snapshot, label, [(item["role"], item["text"]) for item in retained]),
        "stats": stats,
    }


# ---------------------------------------------------------------------------------------------------
# Measurement


def timed(function: Callable[[], Any], runs: int) -> tuple[Any, float]:
    """(result, best wall-clock seconds over `runs` calls)."""
    best = float("inf")
    result: Any = None
    for _ in range(runs):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return result, best


def ours(snapshot: dict[str, Any], budget: int) -> dict[str, Any] | None:
    retained = retain_referenced_session(snapshot, "bench", budget)
    return None if retained is None else {"data": retained.data, "stats": retained.stats.to_json()}


def main() -> int:
    print(
        "| messages | source bytes | budget | dropped | omitted bytes | ours (ms) | literal port (ms) "
        "| speed-up | identical |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|:---:|")
    failures = 0
    for count in SIZES:
        snapshot = build_snapshot(count, seed=count)
        budget = budget_for(snapshot)
        source_bytes = literal_size(
            data_of(
                snapshot, "bench", [(item.role, item.text) for item in project_session_conversation(snapshot)]
            )
        )
        result, our_seconds = timed(lambda snapshot=snapshot, budget=budget: ours(snapshot, budget), OUR_RUNS)
        assert result is not None, "the benchmark budget must be satisfiable"
        stats = result["stats"]
        if count <= LITERAL_LIMIT:
            expected, literal_seconds = timed(
                lambda snapshot=snapshot, budget=budget: literal_retain(snapshot, "bench", budget), 1
            )
            identical = expected == result
            failures += not identical
            literal_cell = f"{literal_seconds * 1000:,.0f}"
            speed_cell = f"{literal_seconds / our_seconds:,.0f}×"
            identical_cell = "yes" if identical else "**NO**"
        else:
            literal_cell, speed_cell, identical_cell = "skipped (quadratic)", "—", "—"
        print(
            f"| {count:,} | {source_bytes:,} | {budget:,} | {stats['omittedMessages']:,} | "
            f"{stats['omittedBytes']:,} | {our_seconds * 1000:,.1f} | {literal_cell} | {speed_cell} | "
            f"{identical_cell} |"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
