"""Fixtures for the store tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sessionref.store import SessionStore, open_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    opened = open_store(tmp_path / "root")
    yield opened
    opened.close()
