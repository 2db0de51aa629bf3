from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_fakes import MemoryStore, ScriptedModel


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Any]:
    """The real embedded store in a temporary directory (the in-memory stand-in until it exists)."""
    try:
        from sessionref.store import open_store
    except ImportError:
        yield MemoryStore()
        return
    real = open_store(tmp_path / "store")
    try:
        yield real
    finally:
        real.close()


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()
