"""Fixtures for the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_store import build_store


@pytest.fixture
def store_root(tmp_path: Path) -> Path:
    """A store with the three sessions of `cli_store.build_store`."""
    return build_store(tmp_path / "store")
