"""`sessionref catalog …` end to end on a real catalog: init, publish (opt-in), status, share, and
the reading commands listing another machine's shared session; errors coded, passwords hidden."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from catalog_fixtures import machine_store
from log_events import answered, said
from pg_server import Catalog
from sessionref.catalog.schema import LATEST_VERSION
from sessionref_tui.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _home(root: Path, sessions: dict[str, tuple[str | None, str, list[dict[str, object]]]]) -> Path:
    machine_store(root, sessions).close()
    return root


def test_a_team_sets_up_publishes_shares_and_reads(
    blank_database: Catalog,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    catalog = blank_database
    laptop = _home(
        tmp_path / "laptop", {"a-1": ("/home/alice/api", "api timeouts", [said("why do api calls time out")])}
    )
    desktop = _home(tmp_path / "desktop", {"b-1": ("/srv/bob/api", "bob's api", [answered("bob was here")])})

    monkeypatch.setenv("SESSIONREF_CATALOG_URL", catalog.url(catalog.owner))
    status, out, _ = _run(capsys, "catalog", "init", "--store", str(laptop))
    assert status == 0 and f"schema version {LATEST_VERSION}" in out

    monkeypatch.setenv("SESSIONREF_CATALOG_URL", catalog.url("alice"))
    monkeypatch.setenv("SESSIONREF_CATALOG_MACHINE", "laptop")
    status, _, err = _run(capsys, "catalog", "publish", "--store", str(laptop))
    assert status == 1 and "CLI_NOTHING_TO_PUBLISH" in err  # opt-in: nothing chosen, nothing sent
    status, out, _ = _run(capsys, "catalog", "publish", "--store", str(laptop), "--sources", "store")
    assert status == 0 and out.startswith("published 1 sessions (1 messages)")
    status, out, _ = _run(capsys, "catalog", "status", "--store", str(laptop), "--json")
    shown = json.loads(out)
    assert (shown["role"], shown["machine"], shown["schemaVersion"]) == ("alice", "laptop", LATEST_VERSION)
    assert [(item["machine"], item["sessions"], item["messages"]) for item in shown["published"]] == [
        ("laptop", 1, 1)
    ]
    status, out, _ = _run(capsys, "catalog", "share", "a-1", "--with", "bob", "--store", str(laptop))
    assert status == 0 and "shared a-1 with bob" in out

    monkeypatch.setenv("SESSIONREF_CATALOG_URL", catalog.url("bob"))
    monkeypatch.setenv("SESSIONREF_CATALOG_MACHINE", "desktop")
    status, out, _ = _run(capsys, "sessions", "--store", str(desktop), "--json", "--cwd", "/srv/bob/api")
    listed = [(row["sessionId"], row.get("machine")) for row in json.loads(out)]
    assert listed == [("b-1", None), ("a-1", "laptop")]
    status, out, _ = _run(capsys, "sessions", "--store", str(desktop), "--cwd", "/srv/bob/api")
    assert "laptop:/home/alice/api" in out
    status, out, _ = _run(capsys, "snapshot", "a-1", "--store", str(desktop))
    assert status == 0 and "why do api calls time out" in out
    status, out, _ = _run(capsys, "search", "time out", "--store", str(desktop), "--json")
    assert [match["sessionId"] for match in json.loads(out)["matches"]] == ["a-1"]


def test_an_unreachable_catalog_is_a_coded_error_without_the_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _home(tmp_path / "store", {"s-1": (None, "t", [said("hello")])})
    monkeypatch.setenv(
        "SESSIONREF_CATALOG_URL", f"postgresql://ann:hunter2secret@/db?host={tmp_path / 'nowhere'}"
    )
    status, _, err = _run(capsys, "catalog", "status", "--store", str(store))
    assert status == 1
    assert "CATALOG_UNREACHABLE" in err and "ann:***@" in err and "hunter2secret" not in err
    status, out, err = _run(capsys, "sessions", "--store", str(store), "--json")
    assert status == 0 and [row["sessionId"] for row in json.loads(out)] == ["s-1"]
    assert "local sessions only" in err and "hunter2secret" not in err
