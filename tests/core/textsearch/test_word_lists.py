"""Word lists of sealed shards: computed once a shard has sealed, used past the full-ranking budget,
exact against a brute-force ranking, dropped when rows of their shard are deleted, rebuilt with the
index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sessionref.textsearch import (
    ConversationRequest,
    ConversationRow,
    SessionFacts,
    SessionRemoved,
    SessionRows,
    TextIndex,
    list_worker,
    schema,
    word_lists,
)
from sessionref.textsearch import search as search_module
from sessionref.textsearch.ranking import best_per_session, rank_sessions
from sessionref.textsearch.schema import list_shards, shard_table
from sessionref.textsearch.writer import BatchWriter, prepare

SESSIONS = 12
MESSAGES = 5  # 60 rows in shards of 8: shards 0-6 sealed, 7 open
STRONG = {"s00": 0, "s05": 3, "s09": 1}  # these sessions' message `seq` says "flag" three times


def texts(session: int) -> list[str]:
    """A session's messages: "flag" once amid filler of varying length, or three times (strong)."""
    strong = STRONG.get(f"s{session:02}")
    return [
        "flag flag flag"
        if seq == strong
        else "unrelated words"
        if (session + seq) % 3 == 0
        else "flag " + "filler " * (1 + (session * 7 + seq * 3) % 11)
        for seq in range(MESSAGES)
    ]


def change(session: int, seqs: range = range(MESSAGES)) -> SessionRows:
    body = texts(session)
    return SessionRows(
        f"s{session:02}",
        [ConversationRow(seq, "user", body[seq], False, seq) for seq in seqs],
        max(seqs),
    )


def facts(ids: list[str]) -> dict[str, SessionFacts]:
    return {session_id: SessionFacts("/elsewhere", int(session_id[1:])) for session_id in ids}


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shards of 8 rows, lists of 3 rows for any word in 2 messages of a shard or more, and a
    full-ranking budget that covers the open shard but not every shard."""
    monkeypatch.setattr(schema, "SHARD_BITS", 3)
    monkeypatch.setattr(word_lists, "LIST_ROWS", 3)
    monkeypatch.setattr(word_lists, "LIST_MIN_DOCUMENTS", 2)
    monkeypatch.setattr(word_lists, "LIST_MAX_SHARE", 1.01)
    monkeypatch.setattr(search_module, "FULL_RANK_BUDGET", 400)  # 60 matches cost 1,260; 4 cost 140
    monkeypatch.setattr(search_module, "TOP_ROWS_PER_SHOWN", 1)


@pytest.fixture
def built(small: None, tmp_path: Path) -> TextIndex:
    index = TextIndex(tmp_path / schema.TEXT_INDEX_FILE_NAME)
    index.update(change(session) for session in range(SESSIONS))
    assert index.wait_for_lists(timeout=60)
    yield index
    index.close()


def brute_force(index: TextIndex, expression: str, limit: int) -> list[str]:
    """The first screen of a ranking of every match, scored in every shard (no lists)."""

    def work(connection: sqlite3.Connection) -> list[str]:
        candidates: list[tuple[int, int, float]] = []
        for shard in list_shards(connection):
            table = shard_table(shard)
            candidates += connection.execute(
                f"SELECT {table}.rowid, m.session, -bm25({table}) FROM {table} JOIN messages AS m "
                f"ON m.id = {table}.rowid WHERE {table} MATCH ?",
                (expression,),
            ).fetchall()
        names = dict(connection.execute("SELECT key, session_id FROM sessions"))
        entries = [(names[key], row, score) for key, (row, score) in best_per_session(candidates).items()]
        known = facts([entry[0] for entry in entries])
        return [found.session_id for found in rank_sessions(entries, known, None, ranked=True, limit=limit)]

    return index.file.read(work)


def listed(index: TextIndex) -> set[int]:
    return index.file.read(word_lists.listed_shards)


def live_scored(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The shards a search scores live from now on (not from lists), in order."""
    calls: list[int] = []
    scores = search_module.Searcher._scores

    def recording(self: search_module.Searcher, shard: int, expression: str, limit: int) -> list:
        calls.append(shard)
        return scores(self, shard, expression, limit)

    monkeypatch.setattr(search_module.Searcher, "_scores", recording)
    return calls


def test_sealed_shards_get_their_lists_after_the_update_that_sealed_them(built: TextIndex) -> None:
    assert listed(built) == set(range(7))  # shard 7 is still open
    best = built.file.read(lambda connection: word_lists.word_lists(connection, "flag", range(8)))
    assert set(best) == set(range(7))
    for shard, kept in best.items():
        live = built.file.read(
            lambda connection, shard=shard: connection.execute(
                f"SELECT rowid, -bm25({shard_table(shard)}) AS s FROM {shard_table(shard)} "
                f"WHERE {shard_table(shard)} MATCH '\"flag\"' ORDER BY s DESC LIMIT 3"
            ).fetchall()
        )
        assert list(kept.best) == live  # the same rows and the same scores as bm25 now
        assert kept.documents >= len(kept.best)


def test_a_word_too_rare_or_too_common_in_a_shard_gets_no_list(
    small: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(word_lists, "LIST_MAX_SHARE", 0.5)
    index = TextIndex(tmp_path / "t.sqlite")
    index.update(change(session) for session in range(SESSIONS))
    assert index.wait_for_lists(timeout=60)
    kept = index.file.read(lambda connection: word_lists.word_lists(connection, "flag", range(8)))
    assert kept and all(not found.best and found.documents >= 4 for found in kept.values())  # too common
    assert index.file.read(lambda connection: word_lists.word_lists(connection, "nowhere", range(8))) == {}
    index.close()


def test_past_the_budget_a_word_is_ranked_from_its_lists_exactly(
    built: TextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = live_scored(monkeypatch)
    result = built.search(ConversationRequest("flag ", limit=3), facts=facts)
    assert result.ranked and result.complete
    assert [match.session_id for match in result.matches] == brute_force(built, '"flag"', 3)
    assert [match.session_id for match in result.matches][:3] == ["s09", "s05", "s00"]
    assert set(calls) == {7}  # only the open shard was scored live


def test_without_lists_the_same_keystroke_falls_back_to_the_newest(
    built: TextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "CANDIDATE_ROWS", 5)
    built.file.write(lambda connection: word_lists.drop_lists(connection, range(8)))
    result = built.search(ConversationRequest("flag ", limit=3), facts=facts)
    assert not result.complete


def test_deleting_rows_of_a_sealed_shard_drops_its_lists_until_they_are_computed_again(
    built: TextIndex,
) -> None:
    def remove_first_session(connection: sqlite3.Connection) -> set[int]:
        connection.execute("BEGIN IMMEDIATE")
        try:
            BatchWriter(connection).apply([prepare(SessionRemoved("s00"))])
            return word_lists.listed_shards(connection)
        finally:
            connection.execute("ROLLBACK")

    assert built.file.write(remove_first_session) == set(range(1, 7))  # s00's rows were in shard 0
    built.update([change(5, range(MESSAGES - 1))])  # s05 rewritten: its last row is gone
    assert built.wait_for_lists(timeout=60)
    assert listed(built) == set(range(7))  # listed again, with the shards' new statistics
    result = built.search(ConversationRequest("flag ", limit=3), facts=facts)
    assert result.complete
    assert [match.session_id for match in result.matches] == brute_force(built, '"flag"', 3)
    built.update([SessionRemoved("s09")])
    assert built.wait_for_lists(timeout=60)
    result = built.search(ConversationRequest("flag ", limit=3), facts=facts)
    assert result.complete and "s09" not in [match.session_id for match in result.matches]
    assert [match.session_id for match in result.matches] == brute_force(built, '"flag"', 3)


def test_an_index_of_the_schema_before_lists_is_rebuilt_with_them(small: None, tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    index = TextIndex(path)
    index.update(change(session) for session in range(SESSIONS))
    index.close()
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    rebuilt = TextIndex(path)
    assert rebuilt.rebuilt and listed(rebuilt) == set()
    rebuilt.update(change(session) for session in range(SESSIONS))
    assert rebuilt.wait_for_lists(timeout=60)
    assert listed(rebuilt) == set(range(7))
    rebuilt.close()


def all_lists(index: TextIndex) -> list[tuple[str, int, int, bytes | None]]:
    return index.file.read(
        lambda connection: connection.execute(
            "SELECT word, shard, documents, best FROM word_lists ORDER BY word, shard"
        ).fetchall()
    )


def test_a_bulk_build_gets_the_lists_an_update_would(built: TextIndex, tmp_path: Path) -> None:
    bulk = TextIndex(tmp_path / "bulk.sqlite")
    bulk.update((change(session) for session in range(SESSIONS)), bulk=True)
    assert bulk.wait_for_lists(timeout=60)
    assert listed(bulk) == listed(built) == set(range(7))
    assert all_lists(bulk) == all_lists(built) != []
    bulk.close()


def test_lists_computed_on_a_file_that_moved_meanwhile_are_not_stored(
    small: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = TextIndex(tmp_path / "t.sqlite")
    computed = list_worker.compute_lists

    def while_the_file_moves(*args: object, **options: object) -> object:
        found = computed(*args, **options)  # type: ignore[arg-type]
        index.file.generation += 1  # as a reset or another process's rebuild would, meanwhile
        return found

    monkeypatch.setattr(list_worker, "compute_lists", while_the_file_moves)
    index.update(change(session) for session in range(SESSIONS))
    assert index.wait_for_lists(timeout=60)
    assert listed(index) == set()
    monkeypatch.setattr(list_worker, "compute_lists", computed)
    index.update([])
    assert index.wait_for_lists(timeout=60)
    assert listed(index) == set(range(7))
    index.close()
