"""Fixtures shared by the core tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sessionref.store import SessionStore, open_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    """The real embedded store, empty, in a temporary directory (`tmp_path / "store"`)."""
    opened = open_store(tmp_path / "store")
    try:
        yield opened
    finally:
        opened.close()
