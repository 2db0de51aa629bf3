"""Fixtures for every test: no test ever reads the user's own agent histories."""

from __future__ import annotations

from pathlib import Path

import pytest

SOURCE_VARIABLES = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME")


@pytest.fixture(autouse=True)
def no_real_histories(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point every source's root at a folder that does not exist, so a host that resolves its sources
    from the environment or the home folder finds none (tests that want some set them)."""
    nowhere = Path(tmp_path_factory.getbasetemp()) / "no-agent-histories"
    for variable in SOURCE_VARIABLES:
        monkeypatch.setenv(variable, str(nowhere / variable.lower()))
    # The other sources live under the home folder or the XDG data and config folders.
    monkeypatch.setenv("HOME", str(nowhere / "home"))
    for variable in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(variable, str(nowhere / variable.lower()))
    monkeypatch.delenv("SESSIONREF_SOURCES", raising=False)
    # Read-only commands keep an internal error's traceback in the user's state folder: a test's own.
    monkeypatch.setenv("XDG_STATE_HOME", str(Path(tmp_path_factory.getbasetemp()) / "user-state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(Path(tmp_path_factory.getbasetemp()) / "user-cache"))
    for variable in ("SESSIONREF_CATALOG_URL", "SESSIONREF_CATALOG_MACHINE"):  # never a real catalog
        monkeypatch.delenv(variable, raising=False)
