from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_fakes import ScriptedModel
from sessionref.store import SessionStore, open_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    """The real embedded store in a temporary directory."""
    opened = open_store(tmp_path / "store")
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()
