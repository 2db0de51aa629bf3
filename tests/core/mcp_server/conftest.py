"""Fixtures of the MCP server tests: a world (store, fake homes, the caller's folder) and the server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_world import McpProcess, build_store, fake_home, server_env


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A store, a fake home and the caller's folder, in one temporary directory for the module."""
    base = tmp_path_factory.mktemp("mcp")
    here = base / "project"
    here.mkdir()
    build_store(base / "store", str(here))
    return {"base": base, "store": base / "store", "home": fake_home(base / "home"), "here": here}


@pytest.fixture(scope="module")
def server(world: dict[str, Path]) -> Iterator[McpProcess]:
    """The running server over `world` (sources: all three fake homes)."""
    args = ["-m", "sessionref_tui.cli", "mcp", "--store", str(world["store"]), "--sources", "all"]
    process = McpProcess(args, server_env(world["home"]), world["here"], world["base"] / "stderr.txt")
    process.start()
    try:
        yield process
    finally:
        process.close()
