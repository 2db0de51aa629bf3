"""Searching: what matches (as a person expects) and in which order sessions come back."""

from __future__ import annotations

import pytest
from sessionref.textsearch import ConversationRequest, ConversationRow, SessionFacts, SessionRows, TextIndex
from sessionref.textsearch import search as search_module
from sessionref.textsearch.ranking import RELEVANCE_BAND, best_per_session, rank_sessions


def feed(index: TextIndex, sessions: dict[str, list[str]]) -> None:
    index.update(
        SessionRows(
            session_id,
            [
                ConversationRow(seq, "user" if seq % 2 == 0 else "assistant", text, False, seq)
                for seq, text in enumerate(texts)
            ],
            len(texts) - 1,
        )
        for session_id, texts in sessions.items()
    )


def everywhere(ids):
    return {session_id: SessionFacts("/elsewhere", 0) for session_id in ids}


def ids(index: TextIndex, text: str, facts=everywhere, **options) -> list[str]:
    return [
        match.session_id for match in index.search(ConversationRequest(text, **options), facts=facts).matches
    ]


@pytest.fixture
def corpus(index: TextIndex) -> TextIndex:
    feed(
        index,
        {
            "dump": ["we found the pg_dump flag: --no-owner", "great"],
            "retry": ["the retry budget was decided", "three attempts, then give up"],
            "zurich": ["Meeting in Zürich at the CAFÉ"],
            "cjk": ["数据库迁移很慢，需要用pg_dump导出"],
            "syntax": ['use NEAR(a b) AND "quotes" OR NOT -xyz ^caret col:z'],
            "migration": ["the migration plan", "migrating tables"],
        },
    )
    return index


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("budget retry", ["retry"]),  # words in any order
        ("migr", ["migration"]),  # the word being typed is a prefix
        ("migr ", []),  # a finished word matches whole
        ('"retry budget"', ["retry"]),
        ('"budget retry"', []),  # a quoted phrase keeps its order
        ("ZURICH cafe", ["zurich"]),  # case and diacritics do not matter
        ("zürich", ["zurich"]),
        ("数据", ["cjk"]),  # two CJK characters are a word
        ("迁移", ["cjk"]),
        ("数据库迁移", ["cjk"]),
        ("据库迁", ["cjk"]),
        ("pg_dump", ["cjk", "dump"]),
        ("pg-dump", ["cjk", "dump"]),
        ("NEAR(a", ["syntax"]),
        ('"quotes" OR', ["syntax"]),
        ("col:z", ["syntax"]),
        ("-xyz ^car", ["syntax"]),
        ("nosuchword", []),
    ],
)
def test_matching(corpus: TextIndex, text: str, expected: list[str]) -> None:
    assert sorted(ids(corpus, text)) == sorted(expected)


def test_short_input_does_not_search(corpus: TextIndex) -> None:
    for text in ("m", "mi", "数", ""):
        result = corpus.search(ConversationRequest(text), facts=everywhere)
        assert result.matches == () and result.status in ("too_short", "empty")
    result = corpus.search(ConversationRequest("retry b"), facts=everywhere)
    assert result.pending == "b" and ids(corpus, "retry b") == ["retry"]


def test_one_row_per_session_with_its_best_message(index: TextIndex) -> None:
    feed(
        index,
        {"s": ["flag " + "padding words " * 40, "flag flag flag", "no match"], "t": ["a flag here " * 3]},
    )
    result = index.search(ConversationRequest("flag"), facts=everywhere)
    assert sorted(match.session_id for match in result.matches) == ["s", "t"]
    best = next(match for match in result.matches if match.session_id == "s")
    assert best.seq == 1 and best.role == "assistant" and best.snippet == "flag flag flag"
    start, end = best.spans[0]
    assert best.snippet[start:end] == "flag"


def test_the_current_session_and_unknown_sessions_are_left_out(corpus: TextIndex) -> None:
    assert ids(corpus, "pg_dump", exclude_session_id="dump") == ["cjk"]

    def only_dump(session_ids):
        return {session_id: SessionFacts(None, 0) for session_id in session_ids if session_id == "dump"}

    assert ids(corpus, "pg_dump", facts=only_dump) == ["dump"]


def test_relevance_then_folder_then_recency(index: TextIndex) -> None:
    feed(
        index,
        {
            "strong": ["flag flag flag flag"],
            "old-here": ["the flag " + "x " * 30],
            "new-here": ["the flag " + "y " * 30],
            "new-elsewhere": ["the flag " + "z " * 30],
            "newest-elsewhere": ["the flag " + "w " * 30],
        },
    )
    folders = {
        "strong": SessionFacts("/elsewhere", 1),
        "old-here": SessionFacts("/here", 10),
        "new-here": SessionFacts("/here", 20),
        "new-elsewhere": SessionFacts("/elsewhere", 30),
        "newest-elsewhere": SessionFacts("/elsewhere", 40),
    }
    result = index.search(
        ConversationRequest("flag ", cwd="/here"), facts=lambda wanted: {key: folders[key] for key in wanted}
    )
    assert [match.session_id for match in result.matches] == [
        "strong",  # clearly more relevant: first whatever its folder and age
        "new-here",  # equally relevant: this folder first, newest first
        "old-here",
        "newest-elsewhere",
        "new-elsewhere",
    ]
    assert result.ranked and result.complete
    assert [match.same_workspace for match in result.matches] == [False, True, True, False, False]
    assert result.matches[0].score > result.matches[1].score * (1 + RELEVANCE_BAND)


@pytest.mark.parametrize("text", ["flag", "fla", '"flag'])
def test_the_word_being_typed_alone_ranks_by_folder_then_recency(index: TextIndex, text: str) -> None:
    feed(index, {"a": ["flag flag flag"], "b": ["flag " + "x " * 40], "c": ["a flag"]})
    folders = {"a": SessionFacts(None, 5), "b": SessionFacts("/here", 1), "c": SessionFacts(None, 9)}
    result = index.search(
        ConversationRequest(text, cwd="/here"), facts=lambda wanted: {key: folders[key] for key in wanted}
    )
    assert not result.ranked and result.complete
    assert [match.session_id for match in result.matches] == ["b", "c", "a"]
    assert {match.score for match in result.matches} == {0.0}


def test_the_word_being_typed_filters_a_ranking_by_the_finished_words(index: TextIndex) -> None:
    feed(
        index,
        {
            "weak": ["flag " + "x " * 40 + "window"],
            "strong": ["flag flag flag window"],
            "no-prefix": ["flag flag flag flag"],
        },
    )
    result = index.search(ConversationRequest("flag win"), facts=everywhere)
    assert result.ranked and result.complete
    assert [match.session_id for match in result.matches] == ["strong", "weak"]


def test_past_the_budgets_the_newest_by_folder_then_recency(
    index: TextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "FULL_RANK_BUDGET", 0)
    monkeypatch.setattr(search_module, "RANK_POSTINGS_BUDGET", 0)
    monkeypatch.setattr(search_module, "CANDIDATE_ROWS", 2)
    feed(index, {"a": ["flag flag flag"], "b": ["flag " + "x " * 40], "c": ["a flag"]})
    folders = {"a": SessionFacts(None, 5), "b": SessionFacts("/here", 1), "c": SessionFacts(None, 9)}
    result = index.search(
        ConversationRequest("flag ", cwd="/here"), facts=lambda wanted: {key: folders[key] for key in wanted}
    )
    assert not result.ranked and not result.complete
    assert [match.session_id for match in result.matches] == ["b", "c"]
    assert {match.score for match in result.matches} == {0.0}


def test_past_the_budgets_every_match_read_is_still_ranked(
    index: TextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "FULL_RANK_BUDGET", 0)
    monkeypatch.setattr(search_module, "RANK_POSTINGS_BUDGET", 0)
    feed(index, {"a": ["flag flag flag"], "b": ["flag " + "x " * 40], "c": ["a flag"]})
    result = index.search(ConversationRequest("flag "), facts=everywhere)
    assert result.ranked and result.complete
    assert result.matches[0].session_id == "a"


def test_a_ranking_of_every_match_reads_deeper_until_the_first_screen_is_settled(
    index: TextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "TOP_ROWS_PER_SHOWN", 1)
    # Each session's best message is its oldest: a shard's best rows hold few sessions.
    sessions = {f"s{n:02}": ["flag " * (3 + n % 4)] + ["flag " + "y " * 30] * 5 for n in range(24)}
    feed(index, sessions)
    result = index.search(ConversationRequest("flag ", limit=10), facts=everywhere)
    full = index.search(ConversationRequest("flag ", limit=24), facts=everywhere)
    assert result.complete and full.complete
    assert [match.session_id for match in result.matches] == [match.session_id for match in full.matches[:10]]


def test_very_common_words_are_not_required_next_to_rarer_ones(index: TextIndex) -> None:
    sessions = {f"s{n}": [f"the usual chatter number {n}"] for n in range(20)}
    sessions["zebra"] = ["a zebra crossing without that article"]
    feed(index, sessions)
    assert ids(index, "the zebra") == ["zebra"]  # "the" is in 95% of messages
    assert ids(index, '"the" zebra') == []  # quoted: required
    assert len(ids(index, "the usual")) == 20


def test_a_very_common_word_alone_is_a_filter_ranked_by_folder_then_recency(
    index: TextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = {f"s{n}": [f"the usual chatter number {n}"] for n in range(17)}
    sessions |= {"short": ["the end"], "here": ["the long middle of " + "x " * 30], "new": ["and the rest"]}
    feed(index, sessions)  # fed in order of activity, as the catch-up feeds them
    folders = {f"s{n}": SessionFacts("/elsewhere", n) for n in range(17)}
    folders |= {
        "short": SessionFacts(None, 30),
        "here": SessionFacts("/here", 31),
        "new": SessionFacts(None, 40),
    }

    def facts(wanted):
        return {key: folders[key] for key in wanted}

    # In a small index a few messages make any word common: "the" is still scored there.
    scored = index.search(ConversationRequest("the ", cwd="/here"), facts=facts)
    assert scored.ranked and scored.matches[0].session_id != "here"  # its long message scores lowest
    monkeypatch.setattr(search_module, "ANY_WORD_COMMON_ROWS", 10)
    result = index.search(ConversationRequest("the ", cwd="/here", limit=3), facts=facts)
    assert not result.ranked
    assert [match.session_id for match in result.matches] == ["here", "new", "short"]
    assert ids(index, "the zebr") == []  # still required when nothing rarer is found
    quoted = index.search(ConversationRequest('"the" t', cwd="/here", limit=3), facts=facts)
    assert not quoted.ranked  # quoting a very common word requires it; it still does not score
    assert [match.session_id for match in quoted.matches] == ["here", "new", "short"]


def test_a_keystroke_after_an_empty_result_still_sees_new_messages(index: TextIndex) -> None:
    feed(index, {"a": ["nothing relevant"]})
    assert ids(index, "zzqx") == []
    feed(index, {"b": ["zzqxy appears now"]})
    assert ids(index, "zzqxy") == ["b"]


def test_more_matches_than_examined_is_not_complete(
    index: TextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "CANDIDATE_ROWS", 5)
    feed(index, {f"s{n}": ["common word"] for n in range(12)})
    result = index.search(ConversationRequest("common", limit=50), facts=everywhere)
    assert not result.complete and len(result.matches) == 5
    assert [match.session_id for match in result.matches] == [
        f"s{n}" for n in (11, 10, 9, 8, 7)
    ]  # the newest


def test_limit(corpus: TextIndex) -> None:
    assert len(corpus.search(ConversationRequest("the", limit=2), facts=everywhere).matches) == 2


def test_pure_ranking_helpers() -> None:
    assert best_per_session([(1, 7, 0.5), (2, 7, 0.9), (3, 8, 0.0), (4, 8, 0.0)]) == {
        7: (2, 0.9),
        8: (4, 0.0),
    }
    facts = {"a": SessionFacts("/x", 1), "b": SessionFacts("/y", 2)}
    ranked = rank_sessions([("a", 1, 1.0), ("b", 2, 1.0), ("c", 3, 9.0)], facts, "/x", ranked=True)
    assert [session.session_id for session in ranked] == ["a", "b"]  # c has no facts
    assert (
        rank_sessions([("a", 1, 1.0), ("b", 2, 1.0)], facts, None, ranked=True, limit=1)[0].session_id == "b"
    )


def test_a_fragment_after_the_same_words_sees_what_was_indexed_meanwhile(index: TextIndex) -> None:
    feed(index, {"a": ["the retry budget"]})
    first = index.search(ConversationRequest("retry "), facts=everywhere)
    again = index.search(ConversationRequest("retry b"), facts=everywhere)
    assert [m.session_id for m in first.matches] == [m.session_id for m in again.matches] == ["a"]
    assert (first.pending, again.pending) == ("", "b")
    feed(index, {"b": ["a retry, then another"]})
    assert sorted(ids(index, "retry bu")) == ["a", "b"]


def test_matches_without_facts_are_not_remembered_as_matching_nothing(index: TextIndex) -> None:
    feed(index, {"a": ["a zebra crossing"]})
    assert ids(index, "zebra ", facts=lambda wanted: {}) == []  # the store does not list it yet
    assert ids(index, "zebra cro") == ["a"]


def test_the_word_being_typed_shows_a_sessions_shortest_message_saying_it(index: TextIndex) -> None:
    feed(
        index,
        {
            "s": [
                "zeppelin mooring rules",
                "You asked about “zeppelin mooring rules”: here they are, all nine.",
            ]
        },
    )
    match = index.search(ConversationRequest("zeppel"), facts=everywhere).matches[0]
    assert (match.seq, match.snippet) == (0, "zeppelin mooring rules")
