"""The SQLite conversation index: content, incremental updates, damage, FTS5 availability, cancellation."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sessionref.store.cache_file import remove_cache_files
from sessionref.store.fold import fold_surface
from sessionref.textsearch import (
    ConversationRequest,
    ConversationRow,
    ConversationSearch,
    SearchCancellation,
    SessionFacts,
    SessionRemoved,
    SessionRows,
    TextIndex,
    TextSearchError,
    conversation_rows,
    index_updates,
    schema,
)
from sessionref.textsearch import index as index_module
from textsearch_logs import ACTION, HEADER, LOGS, LogBuilder, build_log


def facts(ids):
    return {session_id: SessionFacts("/work", 0) for session_id in ids}


def rows(*texts: str, start: int = 0) -> list[ConversationRow]:
    return [
        ConversationRow(start + n, "user" if n % 2 == 0 else "assistant", text, False, 100 + start + n)
        for n, text in enumerate(texts)
    ]


def found(index: TextIndex, text: str, **options) -> list[tuple[str, int]]:
    return [
        (match.session_id, match.seq)
        for match in index.search(ConversationRequest(text, **options), facts=facts).matches
    ]


@pytest.fixture
def small_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    """Four rows per shard, so that every test crosses shards."""
    monkeypatch.setattr(schema, "SHARD_BITS", 2)


def projection(log: LogBuilder) -> tuple[list[ConversationRow], int | None]:
    surface = fold_surface(HEADER, log.unpacked())
    return conversation_rows(surface), surface["capturedThroughSeq"]


def by_seq(rows: list[ConversationRow]) -> list[ConversationRow]:
    """Rows in seq order: the index's order (a checkpoint sits where what it replaced was)."""
    return sorted(rows, key=lambda row: row.seq)


@settings(max_examples=60, deadline=None)
@given(LOGS)
def test_indexed_content_is_the_projection(log: LogBuilder) -> None:
    expected, through = projection(log)
    with tempfile.TemporaryDirectory() as folder:
        index = TextIndex(Path(folder) / "t.sqlite")
        index.update([SessionRows("s", expected, through, "src")])
        assert index.session_rows("s") == by_seq(expected)
        assert index.indexed()["s"] == (through, "src", len(expected))
        index.close()


@settings(max_examples=60, deadline=None)
@given(st.lists(ACTION, max_size=16), st.lists(st.integers(0, 16), max_size=4), st.booleans())
# Two messages of one session that tie on relevance: the best is the later one in the conversation,
# however the index was built (found by hypothesis: the row ids of a rebuild came in another order).
@example(
    [
        ("user", "", "user"),
        ("user", "", "user"),
        ("user", "migration " * 7 + "migration", "user"),
        ("compact", 0, 0, "migration " * 7 + "migration", False),
    ],
    [3],
    False,
)
def test_incremental_updates_equal_a_rebuild(actions: list, cuts: list[int], as_tail: bool) -> None:
    """Feeding a log as it grows (appends, compactions) leaves what feeding it once leaves."""
    schema_bits = schema.SHARD_BITS
    schema.SHARD_BITS = 2
    try:
        final, through = projection(build_log(actions))
        with tempfile.TemporaryDirectory() as folder:
            grown = TextIndex(Path(folder) / "grown.sqlite")
            fresh = TextIndex(Path(folder) / "fresh.sqlite")
            fed: list[ConversationRow] = []
            for cut in sorted(cuts):
                step, step_through = projection(build_log(actions[:cut]))
                appended = as_tail and step[: len(fed)] == fed
                change_rows = step[len(fed) :] if appended else step
                grown.update([SessionRows("s", change_rows, step_through, appended=appended)])
                fed = step
            grown.update([SessionRows("s", final, through)])
            fresh.update([SessionRows("s", final, through)])
            assert grown.session_rows("s") == fresh.session_rows("s") == by_seq(final)
            for query in ("migration", "pg_dump", "数据库", "zurich", "café", "budget the"):
                # The same sessions; which of a session's equally matching messages is its best may
                # differ: bm25 is computed per shard, and a grown index holds rows in other shards.
                assert [hit[0] for hit in found(grown, query)] == [hit[0] for hit in found(fresh, query)]
            grown.close()
            fresh.close()
    finally:
        schema.SHARD_BITS = schema_bits


def test_appended_rows_at_or_below_the_indexed_seqs_are_ignored(index: TextIndex) -> None:
    index.update([SessionRows("s", rows("alpha one", "beta two"), 1)])
    index.update(
        [SessionRows("s", [*rows("ignored", start=1), *rows("gamma three", start=2)], 2, appended=True)]
    )
    assert [row.text for row in index.session_rows("s")] == ["alpha one", "beta two", "gamma three"]


def test_a_compaction_replaces_what_it_summarises(index: TextIndex, small_shards: None) -> None:
    index.update([SessionRows("s", rows("the pg_dump flag", "use --no-owner", "more", "talk", "here"), 4)])
    checkpoint = ConversationRow(9, "user", "summary: we chose a retry budget", True, 900)
    report = index.update([SessionRows("s", [checkpoint], 9)])
    assert (report.inserted, report.deleted) == (1, 5)
    assert index.session_rows("s") == [checkpoint]
    assert found(index, "pg_dump") == []
    match = index.search(ConversationRequest("retry budget"), facts=facts).matches[0]
    assert (match.session_id, match.seq, match.checkpoint, match.role) == ("s", 9, True, "user")


def test_a_removed_session_is_forgotten(index: TextIndex, small_shards: None) -> None:
    index.update(
        [
            SessionRows("a", rows("shared words here", "and more"), 1),
            SessionRows("b", rows("shared words"), 0),
        ]
    )
    index.update([SessionRemoved("a")])
    assert set(index.indexed()) == {"b"}
    assert found(index, "shared") == [("b", 0)]


def test_indexed_of_some_sessions_holds_only_those_that_are_indexed(
    index: TextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "SQL_VARIABLES", 2)  # several IN lists
    index.update([SessionRows(f"s{n}", rows(f"message {n}"), 0, f"v{n}") for n in range(5)])
    wanted = index.indexed(["s0", "s2", "s3", "s4", "gone"])
    assert wanted == {key: index.indexed()[key] for key in ("s0", "s2", "s3", "s4")}
    assert index.indexed([]) == {}


def test_changes_of_one_session_in_one_batch_apply_in_order(index: TextIndex) -> None:
    index.update(
        [
            SessionRows("s", rows("first"), 0),
            SessionRows("s", rows("second", start=1), 1, appended=True),
            SessionRemoved("t"),
            SessionRows("t", rows("only this"), 0, appended=True),
        ]
    )
    assert [row.text for row in index.session_rows("s")] == ["first", "second"]
    assert [row.text for row in index.session_rows("t")] == ["only this"]


def test_bad_rows_are_refused_with_a_code(index: TextIndex) -> None:
    with pytest.raises(TextSearchError) as raised:
        index.update([SessionRows("s", [*rows("a"), *rows("b")])])  # seq 0 twice
    assert raised.value.code == "TEXT_SEARCH_INVALID_ARGUMENT"
    with pytest.raises(TextSearchError):
        index.update([SessionRows("", rows("a"))])
    assert index.indexed() == {}


def test_an_interrupted_first_build_keeps_what_it_committed_and_resumes(
    index: TextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_updates, "BATCH_SESSIONS", 3)
    changes = [SessionRows(f"s{n}", rows(f"message number {n}"), 0) for n in range(10)]
    seen: list[int] = []

    def stop_after_first_batch(done: int, total: int | None) -> None:
        seen.append(done)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        index.update(iter(changes), progress=stop_after_first_batch, total=10)
    committed = set(index.indexed())
    assert seen == [3] and {"s0", "s1", "s2"} <= committed and len(committed) < 10
    rest = [change for change in changes if change.session_id not in committed]
    index.update(rest)
    assert set(index.indexed()) == {f"s{n}" for n in range(10)}
    assert found(index, "message number 7 ") == [("s7", 0)]


def test_a_missing_file_is_created_and_a_garbage_file_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "text.sqlite"
    created = TextIndex(path)
    assert created.rebuilt and created.indexed() == {}
    created.update([SessionRows("s", rows("kept"), 0)])
    created.close()
    reopened = TextIndex(path)
    assert not reopened.rebuilt and set(reopened.indexed()) == {"s"}
    reopened.close()
    path.write_bytes(b"this is not a database" * 100)
    rebuilt = TextIndex(path)
    assert rebuilt.rebuilt and rebuilt.indexed() == {}
    rebuilt.close()


def damaged_index_file(path: Path) -> Path:
    """An index of 200 sessions at `path` whose every page after the second is garbage (its
    header and meta still read fine)."""
    index = TextIndex(path)
    index.update([SessionRows(f"s{n}", rows(f"some searchable words {n}" * 50), 0) for n in range(200)])
    index.close()
    data = bytearray(path.read_bytes())
    data[8192:] = b"\xff" * (len(data) - 8192)
    path.write_bytes(bytes(data))
    return path


def test_damage_found_while_searching_resets_the_index(tmp_path: Path) -> None:
    path = damaged_index_file(tmp_path / "text.sqlite")
    damaged = TextIndex(path, verify=False)  # the header and meta still read fine
    with pytest.raises(TextSearchError) as raised:
        damaged.search(ConversationRequest("searchable"), facts=facts)
    assert raised.value.code == "TEXT_SEARCH_UNAVAILABLE"
    assert damaged.resets == 1 and damaged.rebuilt and damaged.indexed() == {}
    damaged.update([SessionRows("s", rows("fresh start"), 0)])
    assert found(damaged, "fresh") == [("s", 0)]
    damaged.close()


def test_quick_check_on_open_finds_damage(tmp_path: Path) -> None:
    path = damaged_index_file(tmp_path / "text.sqlite")
    reopened = TextIndex(path)
    assert reopened.rebuilt and reopened.indexed() == {}
    reopened.close()


def test_a_sqlite_without_fts5_gives_a_coded_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema, "FTS5_PROBE", "CREATE VIRTUAL TABLE probe USING no_such_fts_module(body)")
    with pytest.raises(TextSearchError) as raised:
        TextIndex(tmp_path / "text.sqlite")
    assert raised.value.code == "TEXT_SEARCH_UNAVAILABLE"
    assert "FTS5" in raised.value.message
    assert not (tmp_path / "text.sqlite").exists()


class CancelAfterReads(SearchCancellation):
    """Reports "cancelled" from the n-th time it is asked on: mid-statement, through the progress handler."""

    def __init__(self, reads: int) -> None:
        super().__init__()
        self.reads = reads

    @property
    def cancelled(self) -> bool:
        self.reads -= 1
        return self.reads < 0


def test_a_search_is_cancelled_mid_statement_and_the_index_stays_usable(
    index: TextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "PROGRESS_OPS", 1)
    index.update([SessionRows(f"s{n}", rows("a common word " * 20), 0) for n in range(300)])
    with pytest.raises(TextSearchError) as raised:
        index.search(ConversationRequest("common word"), facts=facts, cancel=CancelAfterReads(5))
    assert raised.value.code == "TEXT_SEARCH_CANCELLED"
    cancelled = SearchCancellation()
    cancelled.cancel()
    with pytest.raises(TextSearchError):
        index.search(ConversationRequest("common"), facts=facts, cancel=cancelled)
    assert len(index.search(ConversationRequest("common word"), facts=facts).matches) == 20


@pytest.mark.parametrize("limit", [0, -1, 1.5, True, "3", 10_000])
def test_a_bad_limit_is_refused(index: TextIndex, limit: object) -> None:
    with pytest.raises(TextSearchError) as raised:
        index.search(ConversationRequest("word", limit=limit), facts=facts)  # type: ignore[arg-type]
    assert raised.value.code == "TEXT_SEARCH_INVALID_ARGUMENT"


def test_closed_index_refuses_work(tmp_path: Path) -> None:
    index = TextIndex(tmp_path / "t.sqlite")
    index.close()
    index.close()
    with pytest.raises(TextSearchError) as raised:
        index.search(ConversationRequest("word"), facts=facts)
    assert raised.value.code == "TEXT_SEARCH_CLOSED"


def test_text_with_lone_surrogates_round_trips(index: TextIndex) -> None:
    stored = rows("broken \ud800 surrogate text")
    index.update([SessionRows("s", stored, 0)])
    assert index.session_rows("s") == stored
    assert (
        index.search(ConversationRequest("surrogate"), facts=facts).matches[0].snippet
        == "broken \ud800 surrogate text"
    )


def test_the_index_implements_the_protocol(index: TextIndex) -> None:
    assert isinstance(index, ConversationSearch)


def test_another_process_writes_are_seen_by_the_next_search(tmp_path: Path) -> None:
    path = tmp_path / "text.sqlite"
    reader, writer = TextIndex(path), TextIndex(path)
    assert found(reader, "zzqx") == []
    writer.update([SessionRows("s", rows("zzqx written elsewhere"), 0)])
    assert found(reader, "zzqx") == [("s", 0)]
    writer.update([SessionRemoved("s")])
    assert found(reader, "zzqx") == []
    reader.close()
    writer.close()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.integers(0, 4), max_size=6), min_size=1, max_size=5), st.integers(0, 4))
def test_every_match_is_given_its_own_session_however_rows_interleave(
    batches: list[list[int]], removed: int
) -> None:
    """Rows of sessions growing in interleaved batches, written by another connection, and a
    session removed on the way: each match is reported for the session that said it."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "text.sqlite"
        reader, writer = TextIndex(path), TextIndex(path)
        said: dict[str, list[int]] = {}
        for number, batch in enumerate(batches):
            changes = []
            for session in batch:
                seqs = said.setdefault(f"s{session}", [])
                seqs.append(len(seqs))
                text = f"word{session} seq{seqs[-1]} batch{number}"
                changes.append(
                    SessionRows(f"s{session}", rows(text, start=seqs[-1]), seqs[-1], appended=True)
                )
            writer.update(changes)
            if number == len(batches) // 2 and f"s{removed}" in said:
                writer.update([SessionRemoved(f"s{removed}")])
                del said[f"s{removed}"]
            for session_id, seqs in said.items():
                assert sorted(found(reader, f"{session_id.replace('s', 'word')} ", limit=50)) == [
                    (session_id, seqs[-1])
                ]
        reader.close()
        writer.close()


def test_searches_run_while_an_update_writes(index: TextIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_updates, "BATCH_SESSIONS", 1)  # each change is written while the next is made
    index.update([SessionRows("first", rows("steady words"), 0)])
    results: list[list[tuple[str, int]]] = []

    def changes() -> Iterator[SessionRows]:
        for n in range(5):
            results.append(found(index, "steady"))  # the writer thread holds a write transaction
            yield SessionRows(f"s{n}", rows(f"steady {n}"), 0)

    index.update(changes())
    assert results[0] == [("first", 0)]
    assert [len(result) for result in results] == sorted(len(result) for result in results)
    assert len(found(index, "steady", limit=50)) == 6


def test_a_bulk_build_equals_a_normal_one(tmp_path: Path, small_shards: None) -> None:
    changes = [
        SessionRows(f"s{n}", rows(f"words of session {n}", "shared reply", "more"), 2) for n in range(9)
    ]
    bulk, normal = TextIndex(tmp_path / "bulk.sqlite"), TextIndex(tmp_path / "normal.sqlite")
    bulk.update(iter(changes), bulk=True)
    normal.update(iter(changes))
    for n in range(9):
        assert bulk.session_rows(f"s{n}") == normal.session_rows(f"s{n}")
    assert found(bulk, "shared reply", limit=50) == found(normal, "shared reply", limit=50)
    with bulk.file.writer() as connection:
        settings = connection.execute(  # every shard merges as it goes again afterwards
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'words_*_config'"
        ).fetchall()
        assert len(settings) == 7
        for (table,) in settings:
            assert connection.execute(f"SELECT v FROM {table} WHERE k = 'automerge'").fetchone() == (4,)
    bulk.close()
    normal.close()


def test_a_file_replaced_by_another_process_is_followed(tmp_path: Path) -> None:
    path = tmp_path / "text.sqlite"
    first, second = TextIndex(path), TextIndex(path)
    first.update([SessionRows("old", rows("old words"), 0)])
    first.close()
    remove_cache_files(path)  # another process found it damaged and starts it again
    TextIndex(path).close()
    assert found(second, "old") == []
    second.update([SessionRows("new", rows("new words"), 0)])
    third = TextIndex(path)
    assert set(third.indexed()) == {"new"}  # written to the file on disk, not the deleted one
    second.close()
    third.close()


def test_an_index_of_another_unicode_database_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "text.sqlite"
    index = TextIndex(path)
    index.update([SessionRows("s", rows("words"), 0)])
    with index.file.writer() as connection:
        connection.execute("UPDATE meta SET value = '1/0.0.0' WHERE key = 'fold_version'")
    index.close()
    reopened = TextIndex(path)
    assert reopened.rebuilt and reopened.indexed() == {}
    reopened.close()
