"""The app never opens the store with `write_foreign`: the `[store] write_foreign_sessions` opt-in is
withdrawn (issue 20: an append can tear a line another program writes in two calls)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessionref.host.settings import load_settings
from sessionref_tui.launch import WorkspaceOpener

OPT_IN = "[store]\nwrite_foreign_sessions = true\n"


@pytest.mark.parametrize("config", ["", OPT_IN], ids=["default", "old opt-in"])
def test_the_app_never_writes_other_programs_sessions(tmp_path: Path, config: str) -> None:
    (tmp_path / "config.toml").write_text(config)
    opener = WorkspaceOpener(load_settings({}, store_root=tmp_path), "/w")
    try:
        workspace = opener(lambda done, total: None)
        assert workspace.store.write_foreign is False
    finally:
        opener.close()
