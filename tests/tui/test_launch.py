"""Launching: settings errors are one clear line, the demo store is seeded, used and removed."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from sessionref.models import DemoModel
from sessionref.store import open_store
from sessionref_tui import launch
from sessionref_tui.app import SessionrefApp
from sessionref_tui.demo import HOSTILE_TITLE, demo_session_id, seed_demo_store
from sessionref_tui.widgets.log_rows import is_checkpoint, message_of


def test_progress_rewrites_one_line_and_ends_it() -> None:
    stream = io.StringIO()
    progress = launch.IndexProgress(stream)
    progress(10, 200)
    progress(200, 200)
    progress.finish()
    assert stream.getvalue() == "\rIndexing sessions… 10/200\rIndexing sessions… 200/200\n"


def test_invalid_settings_are_one_line_with_a_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("SESSIONREF_PLACEMENT", "sideways")
    assert launch.run_chat(tmp_path) == launch.EXIT_FAILED
    err = capsys.readouterr().err
    assert err.startswith("sessionref: ") and "(SETTINGS_INVALID)" in err
    assert "Traceback" not in err


def test_run_demo_opens_the_fresh_session_offline_and_removes_its_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, Any] = {}

    def fake_run(self: SessionrefApp, *args: Any, **kwargs: Any) -> None:
        store = self.workspace.store
        seen["root"] = Path(store.root)
        seen["model"] = self.workspace.model
        seen["session"] = self._initial_session_id
        seen["title"] = store.title(self._initial_session_id)
        seen["root_existed"] = Path(store.root).exists()

    monkeypatch.setattr(SessionrefApp, "run", fake_run)
    assert launch.run_demo(pace=0) == launch.EXIT_OK
    assert isinstance(seen["model"], DemoModel) and seen["model"].pace == 0
    assert seen["session"] == demo_session_id("current")
    assert seen["title"] == "Try @ mentions here"
    assert seen["root_existed"] and not seen["root"].exists()


class TestDemoSeed:
    def test_sessions_are_varied(self, tmp_path: Path) -> None:
        store = open_store(tmp_path)
        ids = seed_demo_store(store, "/here", now_ms=1_800_000_000_000)
        assert len(ids) == 9 and len(set(ids)) == 9
        cwds = {store.record(session_id).cwd for session_id in ids}
        assert {"/here", None} <= cwds and len(cwds) >= 4
        ages = {store.record(session_id).created_at for session_id in ids}
        assert len(ages) == 9

    def test_one_is_compacted_and_one_is_longer_than_a_reference_budget(self, tmp_path: Path) -> None:
        store = open_store(tmp_path)
        seed_demo_store(store, "/here")
        _, release = store.read_log(demo_session_id("release"))
        assert any(is_checkpoint(message_of(event) or {}) for event in release)
        _, incident = store.read_log(demo_session_id("incident"))
        text_bytes = sum(
            len(str(message_of(event) or {}).encode()) for event in incident if message_of(event)
        )
        assert text_bytes > 65_536

    def test_hostile_title_keeps_its_markup_as_text(self, tmp_path: Path) -> None:
        store = open_store(tmp_path)
        seed_demo_store(store, "/here")
        title = store.title(demo_session_id("hostile")) or ""
        assert "[bold]not bold[/bold]" in title
        assert "[bold]" in HOSTILE_TITLE and "\x1b" in HOSTILE_TITLE

    def test_current_session_is_empty(self, tmp_path: Path) -> None:
        store = open_store(tmp_path)
        current = seed_demo_store(store, "/here")[-1]
        _, events = store.read_log(current)
        assert [event["type"] for event in events] == ["session/title"]
