"""Fixtures for the line-mode tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from repl_harness import Harness, open_harness


async def _running(root: Path, *, seeded: bool, said: bool = False) -> AsyncIterator[Harness]:
    with create_pipe_input() as pipe:
        running = await open_harness(root, pipe, seeded=seeded, said=said)
        running.start()
        try:
            yield running
        finally:
            await running.stop()
            await running.workspace.close()


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    """A started line mode on a seeded store; stopped and closed afterwards."""
    async for running in _running(tmp_path / "store", seeded=True):
        yield running


@pytest.fixture
async def empty_harness(tmp_path: Path) -> AsyncIterator[Harness]:
    """A started line mode on a store with no sessions at all (a first launch)."""
    async for running in _running(tmp_path / "store", seeded=False):
        yield running


@pytest.fixture
async def said_harness(tmp_path: Path) -> AsyncIterator[Harness]:
    """A started line mode on a seeded store with conversation search, its index built."""
    async for running in _running(tmp_path / "store", seeded=True, said=True):
        conversations = running.workspace.conversations
        assert conversations is not None
        conversations.start()  # as the line mode does when it runs (idempotent): built before typing
        await asyncio.to_thread(conversations.drain, 10)
        yield running
