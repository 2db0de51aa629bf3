"""Many processes on one store at once (issue 8): bounded runs of `bench/stress_store.py`.

Writers append through the public API, a DSH-like writer leaves half lines between two writes,
listers open, list, read and close in a loop. Afterwards nothing confirmed is lost or doubled,
seqs strictly increase and every session reads without a skipped line.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench" / "stress_store.py"


@pytest.fixture(scope="module")
def stress() -> ModuleType:
    spec = importlib.util.spec_from_file_location("stress_store", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["stress_store"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_writers_listers_and_a_dsh_like_writer_lose_nothing(stress: ModuleType, tmp_path: Path) -> None:
    config = stress.StressConfig(
        root=str(tmp_path / "store"), writers=3, foreign_writers=1, listers=2, sessions=2, appends=10
    )
    result = stress.run(config)
    assert result.writer_errors == [] and result.reader_errors == []
    assert result.confirmed == 4 * 10
    assert (result.smallest, result.largest) == (100, 4_000_000)
    assert result.lister_rounds >= 2
    assert result.ok, result


def test_two_processes_appending_300_times_to_one_session_interleave_whole_events(
    stress: ModuleType, tmp_path: Path
) -> None:
    root = tmp_path / "store"
    config = stress.StressConfig(
        root=str(root), writers=2, foreign_writers=0, listers=0, sessions=1, appends=300, sizes=(100,)
    )
    result = stress.run(config)
    assert result.ok, result
    assert result.confirmed == 600
    # On disk: one header and 600 whole lines, seqs 0..599 in order, each writer's events once.
    (log,) = root.glob("*/*/session.jsonl")
    lines = [json.loads(line) for line in log.read_bytes().split(b"\n")[:-1]]
    assert [line["seq"] for line in lines[1:]] == list(range(600))
    tags = sorted(line["data"]["tag"] for line in lines[1:])
    assert tags == sorted(f"w{writer}-{n}" for writer in range(2) for n in range(300))
