"""The app opens the store with the `[store] write_foreign_sessions` opt-in from the settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessionref.host.settings import load_settings
from sessionref_tui.launch import WorkspaceOpener

OPT_IN = "[store]\nwrite_foreign_sessions = true\n"


@pytest.mark.parametrize(("config", "expected"), [("", False), (OPT_IN, True)])
def test_the_app_opens_the_store_with_the_opt_in(tmp_path: Path, config: str, expected: bool) -> None:
    (tmp_path / "config.toml").write_text(config)
    opener = WorkspaceOpener(load_settings({}, store_root=tmp_path), "/w")
    try:
        workspace = opener(lambda done, total: None)
        assert workspace.store.write_foreign is expected
    finally:
        opener.close()
