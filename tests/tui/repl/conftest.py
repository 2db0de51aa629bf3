"""Fixtures for the line-mode tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from repl_harness import Harness, open_harness


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    """A started line mode on a seeded store; stopped and closed afterwards."""
    with create_pipe_input() as pipe:
        running = await open_harness(tmp_path / "store", pipe)
        running.start()
        try:
            yield running
        finally:
            await running.stop()
            await running.workspace.close()
