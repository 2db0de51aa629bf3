"""The user's text → a query plan: words, phrases, prefixes, fragments, and never FTS5 syntax."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sessionref.textsearch.normalize import index_form
from sessionref.textsearch.query import parse_query, plan_narrows
from sessionref.textsearch.schema import TOKENIZER

SYNTAX = [
    '"',
    "*",
    "NEAR(",
    "NEAR",
    "AND",
    "OR",
    "NOT",
    "(",
    ")",
    "-",
    "^",
    ":",
    "+",
    "{",
    "}",
    ",",
    "'",
    "\\",
    "\x00",
]
FUZZ = st.lists(
    st.one_of(
        st.sampled_from(SYNTAX),
        st.sampled_from(["migr", "pg_dump", "a", "ab", "数据库", "数", "Zürich", " ", "  ", "\n", "\t"]),
        st.text(max_size=6),
    ),
    max_size=12,
).map("".join)


@pytest.mark.parametrize(
    ("text", "status", "expression", "pending"),
    [
        ("migr", "ok", '"migr"*', ""),
        ("Migration plan", "ok", '"migration" AND "plan"*', ""),
        ("pg_dump", "ok", '"pg dump"*', ""),
        ("pg_d", "ok", '"pg"', "d"),  # a 1-2 letter fragment being typed does not filter yet
        ("pg ", "ok", '"pg"', ""),  # a finished 2-letter word is searched exactly
        ("retry b", "ok", '"retry"', "b"),
        ('"retry bud', "ok", '"retry bud"*', ""),  # an open quote is a phrase still being typed
        ('"retry budget" x', "ok", '"retry budget"', "x"),
        ("NEAR(pg AND", "ok", '"near pg" AND "and"*', ""),
        ("-minus ^caret a:b", "ok", '"minus" AND "caret" AND "a"', "b"),
        ("数据", "ok", '"数据"', ""),  # two CJK characters are a bigram: searched, no prefix
        ("数据库", "ok", '"数据 据库"', ""),
        ("mi", "too_short", "", "mi"),
        ("数", "too_short", "", "数"),
        ("a b c", "too_short", "", "c"),
        ("--", "empty", "", ""),
        ('"', "empty", "", ""),
        ("", "empty", "", ""),
        ("Zürich", "ok", '"zurich"*', ""),
    ],
)
def test_plans(text: str, status: str, expression: str, pending: str) -> None:
    plan = parse_query(text)
    assert plan.status == status
    assert (plan.expression() if plan.status == "ok" else "") == expression
    assert plan.pending == pending


def test_only_the_word_being_typed_is_a_prefix() -> None:
    typed, finished = parse_query("retry budg"), parse_query("retry budg ")
    assert [phrase.prefix for phrase in typed.phrases] == [False, True]
    assert [phrase.prefix for phrase in finished.phrases] == [False, False]


def test_a_closed_quote_is_an_exact_phrase() -> None:
    (phrase,) = parse_query('"retry budget"').phrases
    assert phrase.tokens == ("retry", "budget")
    assert not phrase.prefix
    assert phrase.quoted


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    connection.execute(
        f"CREATE VIRTUAL TABLE t USING fts5(body, content='', tokenize='{TOKENIZER}', detail=full)"
    )
    rows = ["NEAR AND OR NOT", "pg_dump --no-owner", "数据库迁移", "a:b c", "Zürich café"]
    connection.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", enumerate(map(index_form, rows)))
    return connection


@settings(max_examples=1500, deadline=None)
@given(FUZZ)
def test_no_input_raises_or_reaches_fts5_as_syntax(fts: sqlite3.Connection, text: str) -> None:
    plan = parse_query(text)
    if plan.status != "ok":
        return
    expression = plan.expression()
    # Only quoted strings of letters/digits/spaces, AND, and a trailing * on a phrase.
    outside = expression
    for phrase in plan.phrases:
        outside = outside.replace(phrase.fts(), "", 1)
    assert outside.replace(" AND ", "").strip() == ""
    fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,)).fetchall()


@settings(max_examples=300, deadline=None)
@given(FUZZ, st.text(alphabet="abcdefgh _", max_size=6))
def test_typing_on_narrows_the_plan(text: str, more: str) -> None:
    """What a keystroke extending a query executes is included in what the shorter one did.

    The index relies on this to answer "still nothing" without searching.
    """
    before, after = parse_query(text), parse_query(text + more)
    if before.status != "ok" or after.status != "ok":
        return
    if after.pending or before.pending:
        return  # a fragment left out of one and not the other is not a narrowing
    if text.count('"') % 2:
        return  # inside an open quote the extension is part of the same phrase
    assert plan_narrows(after.phrases, before.phrases)


def test_narrowing_examples() -> None:
    migr, migration = parse_query("migr").phrases, parse_query("migration").phrases
    assert plan_narrows(migration, migr)
    assert not plan_narrows(migr, migration)
    assert plan_narrows(parse_query("migr plan").phrases, migr)
    assert not plan_narrows(parse_query("migr ").phrases, parse_query("migration").phrases)
    assert plan_narrows(parse_query("pg_dump").phrases, parse_query("pg ").phrases)
