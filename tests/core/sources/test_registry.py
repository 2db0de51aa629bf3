"""One registry of sources: every other layer asks it, and each reader answers for its own entry."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from databases import DATABASE_ROOTS
from histories import copy_root, discover, read_listed, tree_state
from sessionref.host.source_settings import CONFIG_KEYS, parse_source_list
from sessionref.sources import SOURCE_KINDS, SOURCE_NAMES, default_roots, parse_foreign_session_id
from sessionref.sources.registry import SOURCES, SourceInfo, registered, source_info
from sessionref_tui.source_marks import SOURCE_COLORS, SOURCE_MARKS, source_mark

REPOSITORY = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("info", SOURCES, ids=[info.kind for info in SOURCES])
def test_each_reader_is_registered_under_its_own_entry(info: SourceInfo) -> None:
    assert info is registered(info.kind)
    reader = info.reader()
    assert reader.info is info
    assert isinstance(reader.default_root({}, Path("/home/ana")), Path)


def test_marks_kinds_and_keys_are_unique_and_well_formed() -> None:
    kinds = [info.kind for info in SOURCES]
    marks = [info.mark for info in SOURCES]
    assert len(set(kinds)) == len(kinds) and len(set(marks)) == len(marks)
    assert all(re.fullmatch(r"[A-Z]{2}", mark) for mark in marks)
    assert all(re.fullmatch(r"[a-z][a-z-]*", kind) for kind in kinds)
    assert source_info("nobody") is None


def test_every_layer_lists_exactly_the_registered_sources(tmp_path: Path) -> None:
    kinds = tuple(info.kind for info in SOURCES)
    assert kinds == SOURCE_KINDS and tuple(SOURCE_NAMES) == kinds
    assert tuple(SOURCE_MARKS) == kinds and tuple(SOURCE_COLORS) == kinds
    assert tuple(CONFIG_KEYS.values()) == kinds and tuple(default_roots({}, tmp_path)) == kinds
    assert parse_source_list("all") == kinds
    for info in SOURCES:
        assert source_mark(f"{info.kind}:abc") == info.mark
        assert parse_foreign_session_id(f"{info.kind}:abc") == (info.kind, "abc")


def test_no_module_outside_the_readers_names_a_source() -> None:
    """Adding an agent is one reader module plus its registry line: nothing else spells a kind."""
    allowed = {REPOSITORY / "tui" / "sessionref_tui" / "demo_histories.py"}  # builds the fake homes
    packages = [REPOSITORY / "core" / "sessionref", REPOSITORY / "tui" / "sessionref_tui"]
    readers = REPOSITORY / "core" / "sessionref" / "sources"
    spelled = re.compile("|".join(rf"[\"']{re.escape(info.kind)}[\"']" for info in SOURCES))
    offenders = [
        str(path.relative_to(REPOSITORY))
        for package in packages
        for path in package.rglob("*.py")
        if readers not in path.parents and path not in allowed and spelled.search(path.read_text())
    ]
    assert offenders == []


@pytest.mark.parametrize("info", SOURCES, ids=[info.kind for info in SOURCES])
def test_reading_every_fixture_session_changes_nothing_in_the_agents_folder(
    info: SourceInfo, tmp_path: Path
) -> None:
    """Walk, scan and read every session: each file's bytes and mtime, and the file list, stay as is."""
    root = copy_root(info.kind, tmp_path)
    if info.kind in DATABASE_ROOTS:
        root = DATABASE_ROOTS[info.kind](tmp_path / "db")
    before = tree_state(root)
    sessions = discover(info.kind, root)
    assert sessions  # the fixtures hold sessions: the check is not vacuous
    for summary in sessions:
        read_listed(summary, root)
    assert tree_state(root) == before
