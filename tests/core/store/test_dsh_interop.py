"""All 121 real DSH logs, laid out as a DSH sessions root (a third as .zstd), list, fold and project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sessionref.contract.projection import project_session_conversation
from sessionref.contract.titles import normalize_title
from sessionref.store import open_store
from sessionref.store.logfile import parse_log
from store_fixtures import dsh_log_folders, layout_dsh_root


def expected_title(folder: Path) -> str | None:
    """The last `session/title` of the original log (normalised), or None."""
    titles = [
        json.loads(line)["data"]["title"]
        for line in (folder / "session.jsonl").read_text().splitlines()
        if '"session/title"' in line and json.loads(line).get("type") == "session/title"
    ]
    return normalize_title(titles[-1]) if titles else None


@pytest.fixture(scope="module")
def dsh_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    base = tmp_path_factory.mktemp("dsh")
    cwd = str(base / "workspace")
    layout_dsh_root(base / "root", cwd)
    return base / "root", cwd


async def test_every_dsh_log_lists_with_its_title(dsh_root: tuple[Path, str]) -> None:
    root, _cwd = dsh_root
    store = open_store(root)
    folders = dsh_log_folders()
    assert len(folders) == 121
    records = await store.list_sessions()
    assert sorted(record.id for record in records) == sorted(folder.name for folder in folders)
    titles = await store.read_titles([folder.name for folder in folders])
    for folder in folders:
        title = expected_title(folder)
        if title is not None:
            assert titles[folder.name] == title, folder.name
        label = titles[folder.name] or folder.name
        assert label
    assert sum(1 for title in titles.values() if title) >= 101
    store.close()


async def test_every_dsh_log_folds_and_projects(dsh_root: tuple[Path, str]) -> None:
    root, _cwd = dsh_root
    store = open_store(root)
    compaction_seen = False
    for record in await store.list_sessions():
        snapshot = await store.read_surface(record.id)
        report = store.read_log_report(record.id)
        assert report.skipped_lines == (), record.id
        raw = report.events
        assert snapshot["capturedThroughSeq"] == (raw[-1]["seq"] if raw else None)
        assert all(event["type"] != "assistant/chunk" for event in snapshot["events"])
        project_session_conversation(snapshot)
        # DSH created them all: read-only.
        assert not store.is_writable(record.id)
        compaction_seen |= any(isinstance(event.get("surfaceOp"), dict) for event in snapshot["events"])
    assert compaction_seen
    store.close()
    # With the opt-in, the plain logs are writable and the compressed ones still are not.
    opted_in = open_store(root, write_foreign=True)
    writable = [opted_in.is_writable(record.id) for record in await opted_in.list_sessions()]
    assert 0 < sum(writable) < len(writable) == 121
    opted_in.close()


def test_packed_rows_expand_to_contiguous_seqs() -> None:
    for folder in dsh_log_folders():
        data = (folder / "session.jsonl").read_bytes()
        if b"-chunks" not in data:
            continue
        _header, events = parse_log(data)
        seqs = [event["seq"] for event in events]
        assert seqs == sorted(set(seqs)), folder.name
