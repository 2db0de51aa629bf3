"""Issue 20: links named like a store file never lead SQLite, a history or a log outside the root."""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from pathlib import Path

import pytest
from sessionref.store import StoreError, open_store
from sessionref.store import cache_file as cache_file_module
from sessionref.store.cache_file import CacheFileUnusable, open_cache_file
from sessionref.store.index import INDEX_FILE_NAME
from sessionref.store.paths import open_in_root
from sessionref.textsearch import TEXT_INDEX_FILE_NAME
from sessionref.textsearch.store_index import StoreConversationIndex

log = logging.getLogger("test.store_links")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def outside_database(path: Path) -> str:
    connection = sqlite3.connect(path)
    connection.executescript("CREATE TABLE mine (x); INSERT INTO mine VALUES (42);")
    connection.close()
    return digest(path)


@pytest.mark.parametrize("name", [INDEX_FILE_NAME, TEXT_INDEX_FILE_NAME])
@pytest.mark.parametrize("target_exists", [False, True], ids=["dangling", "existing"])
def test_an_index_link_creates_and_changes_nothing_outside(
    tmp_path: Path, name: str, target_exists: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "target.sqlite"
    before = outside_database(target) if target_exists else None
    root = tmp_path / "store"
    root.mkdir()
    (root / name).symlink_to(target)
    store = open_store(root)
    index = StoreConversationIndex(store)
    try:
        index.catch_up_now()
    finally:
        index.close()
        store.close()
    assert sorted(os.listdir(outside)) == (["target.sqlite"] if target_exists else [])
    if target_exists:
        assert digest(target) == before
    assert not (root / name).is_symlink() and (root / name).is_file()


def test_a_link_swapped_in_while_sqlite_opens_is_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside.sqlite"
    before = outside_database(outside)
    path = tmp_path / "cache.sqlite"
    real_connect = cache_file_module.connect_cache

    def swapping_connect(where, **options):  # the file we created is replaced by a link meanwhile
        os.remove(where)
        os.symlink(outside, where)
        return real_connect(where, **options)

    monkeypatch.setattr(cache_file_module, "connect_cache", swapping_connect)
    with pytest.raises(CacheFileUnusable, match="changed while it was opened"):
        open_cache_file(
            path,
            what="test cache",
            problem=lambda connection: None,
            create=lambda connection: connection.execute("CREATE TABLE t (x)"),
            log=log,
        )
    assert digest(outside) == before


@pytest.mark.parametrize("kind", ["dangling link", "link", "fifo"])
def test_open_in_root_refuses_anything_but_a_regular_file(tmp_path: Path, kind: str) -> None:
    outside = tmp_path / "outside.log"
    root = tmp_path / "store"
    root.mkdir()
    if kind == "fifo":
        os.mkfifo(root / "repl.log")
    else:
        if kind == "link":
            outside.write_text("theirs", encoding="utf-8")
        (root / "repl.log").symlink_to(outside)
    with pytest.raises((StoreError, OSError)) as refused:  # and never blocks on a FIFO
        open_in_root(str(root), "repl.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    if isinstance(refused.value, StoreError):
        assert refused.value.code in {"STORE_UNSAFE_PATH", "STORE_UNREADABLE"}
    else:
        assert kind == "fifo"  # ENXIO: no reader, refused at once
    assert (outside.read_text(encoding="utf-8") if outside.exists() else None) == (
        "theirs" if kind == "link" else None
    )
