"""A bounded run of `bench/bench_search_quality.py`: questions find the session that answers them
among near misses and background sessions (issue 19's targets, on a smaller background)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"
BACKGROUND = 400


@pytest.fixture(scope="module")
def bench() -> Iterator[Any]:
    sys.path.insert(0, str(BENCH))
    try:
        yield importlib.import_module("bench_search_quality")
    finally:
        sys.path.remove(str(BENCH))


@pytest.fixture(scope="module")
def report(bench: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return bench.run(BACKGROUND, root=tmp_path_factory.mktemp("quality") / "store")


def test_questions_find_their_session_first_and_almost_always_in_the_first_five(
    bench: Any, report: Any
) -> None:
    assert len(report.question_ranks) >= 30
    assert report.hit_at(1) >= bench.TARGET_HIT_AT_1, report.to_json()
    assert report.hit_at(5) >= bench.TARGET_HIT_AT_5, report.to_json()
