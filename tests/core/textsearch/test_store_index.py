"""`StoreConversationIndex` over a real store: first build, catch-up of new / changed / gone sessions,
compaction, a damaged file, unreadable and half-written logs, the live refresh, and its answers."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from log_events import answered, chunk, said
from sessionref.contract.projection import project_session_conversation
from sessionref.service.conversation_rows import SessionConversation
from sessionref.service.protocols import (
    ConversationQuery,
    ConversationRequest,
    ConversationSearchResult,
    SessionRecord,
)
from sessionref.store import ConversationSource, SessionStore
from sessionref.textsearch import TEXT_INDEX_FILE_NAME, TEXT_SEARCH_UNAVAILABLE, TextSearchError, index_file
from sessionref.textsearch.store_index import StoreConversationIndex, text_index_path
from store_sessions import seeded_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    opened = seeded_store(tmp_path / "store")
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def indexer(store: SessionStore) -> Iterator[StoreConversationIndex]:
    opened = StoreConversationIndex(store, live_delay=60)
    try:
        yield opened
    finally:
        opened.close()


def search(
    indexer: StoreConversationIndex, text: str, *, exclude: str | None = None, cwd: str | None = "/work"
) -> ConversationSearchResult:
    return indexer.search_conversations(
        ConversationRequest(text, 20, exclude_session_id=exclude, cwd=cwd), cancel=threading.Event()
    )


def found(indexer: StoreConversationIndex, text: str, **options: object) -> list[str]:
    return [hit.session_id for hit in search(indexer, text, **options).matches]  # type: ignore[arg-type]


def indexed_texts(indexer: StoreConversationIndex, session_id: str) -> list[str]:
    assert indexer._index is not None
    return [row.text for row in indexer._index.session_rows(session_id)]


def test_it_is_a_conversation_query_and_lives_beside_the_discovery_index(
    indexer: StoreConversationIndex, store: SessionStore
) -> None:
    assert isinstance(indexer, ConversationQuery)
    assert indexer.path == text_index_path(store.root) == store.root / TEXT_INDEX_FILE_NAME


def test_first_build_feeds_every_session_with_exactly_its_projection(
    indexer: StoreConversationIndex, store: SessionStore
) -> None:
    report = indexer.catch_up_now()
    assert (report.build, report.fed, report.removed, report.skipped) == (True, 3, 0, [])
    assert indexer.status.phase == "ready"
    for session_id in ("dump-here", "retry-here", "dump-there"):
        surface = store.read_log(session_id)
        projected = project_session_conversation(
            {
                "session": surface[0],
                "capturedThroughSeq": None,
                "events": [e for e in surface[1] if e.get("surfaceOp") == "append"],
            }
        )
        assert indexed_texts(indexer, session_id) == [item.text for item in projected]
    assert "secret pg_dump context" not in indexed_texts(indexer, "retry-here")


def test_searches_rank_the_folder_flag_exclude_and_never_see_injected_context(
    indexer: StoreConversationIndex,
) -> None:
    indexer.catch_up_now()
    hits = search(indexer, "pg_dump").matches
    assert {hit.session_id for hit in hits} == {"dump-here", "dump-there"}  # not retry-here's injected text
    flags = {hit.session_id: hit.same_workspace for hit in hits}
    assert flags == {"dump-here": True, "dump-there": False}
    assert found(indexer, "pg_dump", exclude="dump-here") == ["dump-there"]
    first = next(hit for hit in hits if hit.session_id == "dump-there")
    assert (first.role, first.seq, first.checkpoint) == ("user", 0, False)
    assert first.snippet[first.spans[0][0] : first.spans[0][1]].lower() == "pg_dump"
    assert first.last_activity == 4_000


def test_matches_are_labelled_with_the_stores_title_in_the_same_call_as_their_facts(
    indexer: StoreConversationIndex, store: SessionStore
) -> None:
    store.rename("dump-there", "Replica restore")
    indexer.catch_up_now()
    labels = {hit.session_id: hit.label for hit in search(indexer, "pg_dump").matches}
    # a renamed session by its title, an unnamed one by its fallback title (its first words)
    assert labels == {"dump-here": "how do we restore the billing dump", "dump-there": "Replica restore"}
    assert labels["dump-here"] == store.title("dump-here")


def test_a_catch_up_reads_only_what_changed_and_forgets_deleted_sessions(
    indexer: StoreConversationIndex, store: SessionStore
) -> None:
    indexer.catch_up_now()
    store.append("dump-there", [answered("the restore worked after that")])
    store.delete_session("retry-here")
    report = indexer.catch_up_now()
    assert (report.build, report.fed, report.removed) == (False, 1, 1)
    assert found(indexer, "restore worked") == ["dump-there"]
    assert found(indexer, "retry budget") == []
    assert indexer.catch_up_now().fed == 0  # nothing changed since


def test_a_rename_changes_nothing_in_the_index_but_the_next_catch_up_rereads_the_grown_log(
    indexer: StoreConversationIndex, store: SessionStore
) -> None:
    indexer.catch_up_now()
    store.rename("dump-here", "Billing restore")
    report = indexer.catch_up_now()
    assert report.inserted == report.deleted == 0


def test_a_compaction_replaces_the_messages_its_checkpoint_summarises(
    indexer: StoreConversationIndex, store: SessionStore
) -> None:
    indexer.catch_up_now()
    store.write_compaction("dump-here", "Summary: restore with the owner flag off")
    indexer.catch_up_now()
    assert found(indexer, "billing") == []
    hits = search(indexer, "owner flag").matches
    assert [(hit.session_id, hit.checkpoint) for hit in hits] == [("dump-here", True)]


def test_a_damaged_index_file_is_rebuilt_from_the_logs(store: SessionStore) -> None:
    path = text_index_path(store.root)
    path.write_bytes(b"this is not a database" * 100)
    indexer = StoreConversationIndex(store)
    try:
        report = indexer.catch_up_now()
        assert (report.build, report.fed) == (True, 3)
        assert set(found(indexer, "pg_dump")) == {"dump-here", "dump-there"}
    finally:
        indexer.close()


def test_a_log_with_a_bad_line_is_read_by_the_store_which_skips_the_line(
    indexer: StoreConversationIndex, store: SessionStore
) -> None:
    indexer.catch_up_now()
    log = store.root / store.state.log_state("dump-there").path
    with log.open("ab") as file:  # the engine's fast reader refuses the log for this line
        file.write(b"not json at all\n")
    store.append("dump-there", [said("the vacuum finished")])
    report = indexer.catch_up_now()
    assert (report.fed, report.skipped) == (1, [])
    assert found(indexer, "vacuum") == ["dump-there"]
    assert found(indexer, "replica") == ["dump-there"]


def test_an_unreadable_source_is_skipped_counted_and_its_old_rows_kept(
    indexer: StoreConversationIndex, store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexer.catch_up_now()
    store.append("dump-there", [said("the vacuum finished")])  # a new version to read
    log = store.root / store.state.log_state("dump-there").path
    log.unlink()  # gone between the listing and the read: neither reader can read it
    report = indexer.catch_up_now()
    assert (report.fed, report.skipped) == (0, ["dump-there"])
    assert indexer.status.skipped == 1
    assert found(indexer, "replica") == ["dump-there"]  # what was indexed stays searchable
    assert indexer.catch_up_now().skipped == []  # not read again until its version changes


def test_a_first_build_skips_an_unreadable_log_and_feeds_the_rest(store: SessionStore) -> None:
    (store.root / store.state.log_state("retry-here").path).unlink()
    indexer = StoreConversationIndex(store)
    try:
        report = indexer.catch_up_now()
        assert (report.build, report.fed, report.skipped) == (True, 2, ["retry-here"])
    finally:
        indexer.close()


def test_a_log_being_written_is_read_to_its_last_complete_line(
    indexer: StoreConversationIndex, store: SessionStore
) -> None:
    indexer.catch_up_now()
    log = store.root / store.state.log_state("dump-there").path
    line = (
        '{"type":"user/message","seq":2,"time":5000,"data":{"source":{"kind":"user"},'
        '"content":[{"type":"text","text":"vacuum the catalog first"}],"role":"user","id":"x"},'
        '"surfaceOp":"append"}\n'
    )
    with log.open("ab") as file:
        file.write(line[:40].encode())
    store.refresh()
    indexer.catch_up_now()
    assert found(indexer, "vacuum") == []
    assert indexed_texts(indexer, "dump-there") == ["pg_dump failed on the replica"]
    with log.open("ab") as file:
        file.write(line[40:].encode())
    store.refresh()
    indexer.catch_up_now()
    assert found(indexer, "vacuum") == ["dump-there"]


def test_appends_while_running_are_refreshed_once_per_delay_and_chunks_are_ignored(
    indexer: StoreConversationIndex, store: SessionStore
) -> None:
    indexer.start()
    indexer.drain(30)
    assert indexer.status.phase == "ready"
    store.append("dump-here", [chunk("stream"), chunk("ing")])
    indexer.drain(30)
    assert indexer.refreshes == 0  # streamed chunks change no conversation
    store.append("dump-here", [answered("checkpoint the wal archive")])
    store.append("retry-here", [said("archive the wal too")])
    indexer.drain(30)
    assert indexer.refreshes == 1
    assert set(found(indexer, "wal archive")) == {"dump-here", "retry-here"}


def test_a_new_session_created_while_running_is_indexed_by_its_first_message(
    indexer: StoreConversationIndex, store: SessionStore
) -> None:
    indexer.start()
    indexer.drain(30)
    store.create_session(cwd="/work", session_id="fresh")
    store.append("fresh", [said("zeppelin parking rules")])
    indexer.drain(30)
    assert found(indexer, "zeppelin") == ["fresh"]


def test_before_start_it_is_not_built_yet_and_short_text_says_so_first(
    indexer: StoreConversationIndex,
) -> None:
    assert search(indexer, "pg_dump").status == "indexing"
    assert search(indexer, "pg").status == "too_short"
    assert search(indexer, "   ").status == "empty"


def test_while_building_it_answers_indexing_with_progress(
    indexer: StoreConversationIndex,
) -> None:
    seen: list[ConversationSearchResult] = []
    indexer.catch_up_now(progress=lambda done, total: seen.append(search(indexer, "pg_dump")))
    assert seen and all(answer.status == "indexing" for answer in seen)
    assert seen[-1].progress == (3, 3)
    assert search(indexer, "pg_dump").status == "ok"


def test_without_fts5_it_is_unavailable_with_the_reason(
    indexer: StoreConversationIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_fts5() -> None:
        raise TextSearchError(TEXT_SEARCH_UNAVAILABLE, "this Python's SQLite has no FTS5")

    monkeypatch.setattr(index_file, "ensure_fts5", no_fts5)
    with pytest.raises(TextSearchError):
        indexer.catch_up_now()
    answer = search(indexer, "pg_dump")
    assert (answer.status, answer.message) == ("unavailable", "this Python's SQLite has no FTS5")


def test_a_cancelled_search_raises_the_engines_cancelled_code(indexer: StoreConversationIndex) -> None:
    indexer.catch_up_now()
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(TextSearchError) as raised:
        indexer.search_conversations(ConversationRequest("pg_dump", 5), cancel=cancel)
    assert raised.value.code == "TEXT_SEARCH_CANCELLED"


def test_after_close_searches_are_unavailable_and_close_is_idempotent(
    indexer: StoreConversationIndex,
) -> None:
    indexer.catch_up_now()
    indexer.close()
    indexer.close()
    assert search(indexer, "pg_dump").status == "unavailable"


class CountedReads:
    """The store, counting the conversations the index asks it to read."""

    def __init__(self, store: SessionStore) -> None:
        self._store = store
        self.root = store.root
        self.read: list[str] = []

    def conversation_sources(self) -> list[ConversationSource]:
        return self._store.conversation_sources()

    def conversation_source(self, session_id: str) -> ConversationSource | None:
        return self._store.conversation_source(session_id)

    def read_conversation(self, session_id: str) -> SessionConversation:
        self.read.append(session_id)
        return self._store.read_conversation(session_id)

    def records_with_titles(self, session_ids: Iterable[str]) -> dict[str, tuple[SessionRecord, str | None]]:
        return self._store.records_with_titles(session_ids)

    def subscribe(self, listener: Callable[[str, list[dict[str, Any]]], None]) -> Callable[[], None]:
        return self._store.subscribe(listener)


def test_every_session_is_read_by_the_store_once_per_version(store: SessionStore) -> None:
    reads = CountedReads(store)
    indexer = StoreConversationIndex(reads)
    try:
        first = indexer.catch_up_now()
        listed = sorted(source.session_id for source in store.conversation_sources())
        assert (first.fed, sorted(reads.read)) == (len(listed), listed)
        again = indexer.catch_up_now()
        assert (again.fed, sorted(reads.read)) == (0, listed)  # nothing changed: nothing read again
        assert set(found(indexer, "replica")) == {"dump-there"}
    finally:
        indexer.close()
