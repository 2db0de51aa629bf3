"""`textsearch.vocabulary`: one-edit words and joined words, from an index's own vocabulary."""

from __future__ import annotations

import sqlite3

import pytest
from sessionref.service.fuzzy_titles import one_edit_apart
from sessionref.textsearch.schema import create_shard
from sessionref.textsearch.vocabulary import Vocabulary


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("dependancy", "dependency", True),  # replaced
        ("postgrse", "postgres", True),  # swapped
        ("timout", "timeout", True),  # added
        ("timeoutt", "timeout", True),  # removed
        ("timeout", "timeout", False),  # the same word is not a correction
        ("postgres", "progress", False),
        ("abc", "abcde", False),
    ],
)
def test_one_edit_apart(first: str, second: str, expected: bool) -> None:
    assert one_edit_apart(first, second) is expected
    assert one_edit_apart(second, first) is expected


@pytest.fixture
def vocabulary() -> Vocabulary:
    connection = sqlite3.connect(":memory:", isolation_level=None)
    create_shard(connection, 0)
    connection.executemany(
        "INSERT INTO words_0 (rowid, body) VALUES (?, ?)",
        [
            (1, "bump the dependency and set max_retries"),
            (2, "the dependency tree"),
            (3, "depend on it"),
        ],
    )
    return Vocabulary(connection)


def test_near_words_are_the_held_words_one_edit_away_most_frequent_first(vocabulary: Vocabulary) -> None:
    assert vocabulary.near("dependancy", [0]) == ["dependency"]
    assert vocabulary.near("maxx", [0]) == []  # too short to correct
    assert vocabulary.documents("dependency", [0]) == 2


def test_a_joined_word_splits_into_two_held_words(vocabulary: Vocabulary) -> None:
    assert vocabulary.splits("maxretries", [0]) == [("max", "retries")]
    assert vocabulary.splits("maxrunners", [0]) == []
