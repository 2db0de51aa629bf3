"""Fixtures shared by the conversation index tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sessionref.textsearch import TextIndex, schema


@pytest.fixture
def index(tmp_path: Path) -> Iterator[TextIndex]:
    """An empty conversation index in `tmp_path`, closed after the test."""
    opened = TextIndex(tmp_path / schema.TEXT_INDEX_FILE_NAME)
    try:
        yield opened
    finally:
        opened.close()
