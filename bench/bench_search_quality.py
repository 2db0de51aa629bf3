"""Benchmark: does search find what people mean? hit@1 and hit@5 of questions, top-3 of titles.

A generated store (`--background` other sessions, default 3,000) holds, for each case of
`search_quality_cases.ANSWERS`, the session that answers its question and its near misses (same
topic, same words, no answer); the background sessions say random sentences of a Zipf
vocabulary (`text_corpus`) with every case's words mixed in (`CASE_WORD_SHARE`). Each question
is asked as `sessionref search` and the MCP tool ask it (loose text,
`ConversationRequest.question`); hit@k is the share of questions whose session is in the first
k. Each `TITLES` query is typed into `@` completion (`SessionReferences.list_candidates`), among
the background titles; a hit is its session in the first three rows.

Targets (issue 19): hit@1 ≥ 70 %, hit@5 ≥ 90 %, 8 of 10 title queries. Run:
`.venv/bin/python bench/bench_search_quality.py [--background 3000] [--json]`; a bounded run is
in tests/core/textsearch/test_search_quality.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from search_quality_cases import ANSWERS, BACKGROUND_TITLES, TITLES

TARGET_HIT_AT_1 = 0.70
TARGET_HIT_AT_5 = 0.90
TARGET_TITLES_IN_TOP_3 = 8
CASE_WORD_SHARE = 0.08
"""Background words drawn from the cases' own words (the rest from a Zipf vocabulary): every
topic word of a question also appears in sessions that do not answer it."""


@dataclass
class QualityReport:
    """What one run measured: per question its rank (None: not in the first 5), per title query
    its rank (None: not in the first 3)."""

    background: int
    question_ranks: dict[str, int | None] = field(default_factory=dict)
    title_ranks: dict[str, int | None] = field(default_factory=dict)
    question_ms: list[float] = field(default_factory=list)
    title_ms: list[float] = field(default_factory=list)

    def hit_at(self, k: int) -> float:
        """The share of questions whose session ranked in the first `k`."""
        ranks = list(self.question_ranks.values())
        return sum(1 for rank in ranks if rank is not None and rank <= k) / max(1, len(ranks))

    def titles_in_top_3(self) -> int:
        """Title queries whose session ranked in the first three."""
        return sum(1 for rank in self.title_ranks.values() if rank is not None and rank <= 3)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "background": self.background,
            "hit_at_1": self.hit_at(1),
            "hit_at_5": self.hit_at(5),
            "titles_in_top_3": self.titles_in_top_3(),
            "questions": self.question_ranks,
            "titles": self.title_ranks,
            "question_ms_max": max(self.question_ms, default=0.0),
            "title_ms_max": max(self.title_ms, default=0.0),
        }


def _event(text: str, number: int, assistant: bool) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    if not assistant:
        data = {"source": {"kind": "user"}, "content": content, "role": "user", "id": f"u{number}"}
        return {"type": "user/message", "data": data, "surfaceOp": "append"}
    message = {
        "id": f"a{number}",
        "role": "assistant",
        "content": content,
        "source": {"kind": "model", "provider": "demo", "model": "demo"},
    }
    return {
        "type": "assistant/message",
        "data": {"turn": 1, "step": 1, "message": message},
        "surfaceOp": "append",
    }


def build_store(root: Path, background: int, seed: int = 19) -> None:
    """Write the cases, their near misses, the title sessions and `background` other sessions."""
    from sessionref.store import open_store
    from text_corpus import build_vocabulary

    rng = random.Random(seed)
    vocabulary = build_vocabulary(random.Random(seed), size=20_000)
    case_words = sorted(
        {
            word.lower()
            for case in ANSWERS
            for text in (case.answer, case.asked, *case.near)
            for word in re.findall(r"[A-Za-z]{3,}", text)
        }
    )

    def background_text() -> str:
        count = rng.randrange(8, 40)
        words = rng.choices(vocabulary.words, cum_weights=vocabulary.cumulative, k=count)
        return " ".join(rng.choice(case_words) if rng.random() < CASE_WORD_SHARE else word for word in words)

    store = open_store(root)
    try:
        time_ms = 1_700_000_000_000
        for number in range(background):
            session_id = f"background-{number:05d}"
            store.create_session(
                cwd=f"/home/dev/proj-{number % 7}", session_id=session_id, created_at=time_ms
            )
            events = []
            for turn in range(rng.randrange(2, 5)):
                events.append(_event(background_text(), turn, assistant=turn % 2 == 1))
            store.append(session_id, events, time_ms=time_ms + number)
            if number < len(BACKGROUND_TITLES):
                store.rename(session_id, BACKGROUND_TITLES[number % len(BACKGROUND_TITLES)])
        for offset, case in enumerate(ANSWERS):
            store.create_session(
                cwd="/home/dev/answers", session_id=case.name, created_at=time_ms - 10_000 + offset
            )
            store.append(
                case.name,
                [_event(case.asked, 0, False), _event(case.answer, 1, True)],
                time_ms=time_ms - 5_000,
            )
            for index, near in enumerate(case.near):
                near_id = f"{case.name}-near-{index}"
                store.create_session(cwd="/home/dev/answers", session_id=near_id, created_at=time_ms + offset)
                store.append(near_id, [_event(near, 0, False)], time_ms=time_ms + background + offset)
        for offset, title in enumerate(sorted({case.title for case in TITLES})):
            session_id = f"title-{offset:02d}"
            store.create_session(
                cwd="/home/dev/titles", session_id=session_id, created_at=time_ms - 20_000 + offset
            )
            store.rename(session_id, title)
    finally:
        store.close()


def measure(root: Path, background: int) -> QualityReport:
    """Ask every question and type every title query against the store at `root`."""
    from sessionref.service.protocols import ConversationRequest
    from sessionref.service.references import SessionReferences
    from sessionref.service.vantage import Vantage
    from sessionref.store import open_store
    from sessionref.textsearch.store_index import StoreConversationIndex

    report = QualityReport(background)
    store = open_store(root)
    index = StoreConversationIndex(store, verify=False)
    try:
        index.catch_up_now()
        for case in ANSWERS:
            started = time.perf_counter()
            found = index.search_conversations(
                ConversationRequest(case.question + " ", limit=5, cwd="/elsewhere", question=True),
                cancel=threading.Event(),
            )
            report.question_ms.append((time.perf_counter() - started) * 1000)
            ids = [match.session_id for match in found.matches]
            report.question_ranks[case.question] = ids.index(case.name) + 1 if case.name in ids else None
        titled = {
            title: f"title-{offset:02d}"
            for offset, title in enumerate(sorted({case.title for case in TITLES}))
        }
        references = SessionReferences(store)
        for title_case in TITLES:
            started = time.perf_counter()
            rows = asyncio.run(
                references.list_candidates(Vantage("", "/elsewhere"), title_case.query, 3, fuzzy=True)
            )
            report.title_ms.append((time.perf_counter() - started) * 1000)
            ids = [row.session_id for row in rows]
            target = titled[title_case.title]
            report.title_ranks[f"{title_case.query} → {title_case.title}"] = (
                ids.index(target) + 1 if target in ids else None
            )
    finally:
        index.close()
        store.close()
    return report


def run(background: int, root: Path | None = None) -> QualityReport:
    """Build a store of `background` other sessions (in `root`, else a temporary folder) and measure it."""
    if root is not None:
        build_store(root, background)
        return measure(root, background)
    with tempfile.TemporaryDirectory(prefix="sessionref-quality-") as folder:
        store_root = Path(folder) / "store"
        build_store(store_root, background)
        return measure(store_root, background)


def main() -> None:
    """Run the benchmark and print its tables (or `--json`)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--background", type=int, default=3_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = run(args.background)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
        return
    print("| background sessions | questions | hit@1 | hit@5 | title queries in top 3 |")
    print("|---|---|---|---|---|")
    print(
        f"| {background_label(report)} | {len(report.question_ranks)} | {report.hit_at(1):.0%} "
        f"| {report.hit_at(5):.0%} | {report.titles_in_top_3()} of {len(report.title_ranks)} |"
    )
    print()
    print(
        f"slowest question {max(report.question_ms, default=0.0):.1f} ms, median "
        f"{sorted(report.question_ms)[len(report.question_ms) // 2]:.1f} ms; slowest title query "
        f"{max(report.title_ms, default=0.0):.1f} ms"
    )
    print()
    for question, rank in {**report.question_ranks, **report.title_ranks}.items():
        if rank != 1:
            print(f"- rank {rank or 'miss'}: {question}")


def background_label(report: QualityReport) -> str:
    """The background size, with thousands separated."""
    return f"{report.background:,}"


if __name__ == "__main__":
    main()
