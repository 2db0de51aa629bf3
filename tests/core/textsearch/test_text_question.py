"""Question mode (`textsearch/question.py`): the plans a question becomes, and whether the ladder
finds the session that answers a handful of real questions over a generated store."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator

import pytest
from log_events import answered, said
from sessionref.service.protocols import ConversationRequest
from sessionref.store import SessionStore, open_store
from sessionref.textsearch.question import content_terms, question_plans, stem
from sessionref.textsearch.store_index import StoreConversationIndex

ANSWERS = {
    "pricing-ttl": (
        "How long should the pricing service keep its cache?",
        "Settled: pricing cache entries now live 15 minutes, with 10 % jitter so they do not "
        "expire together.",
    ),
    "deploy-freeze": (
        "Can we ship on Friday?",
        "No deploys after Thursday noon: the release freeze covers Friday and the weekend.",
    ),
    "auth-rotation": (
        "When do the signing keys rotate?",
        "The JWT signing keys rotate every 30 days; the old key stays valid for 48 hours of overlap.",
    ),
    "db-pool": (
        "The workers time out waiting for Postgres.",
        "Raise the connection pool to 40 per worker and set a 5 second acquire timeout.",
    ),
    "retry-budget": (
        "How many retries does the payments client make?",
        "The payments client retries at most 3 times within a 2 s total budget, with exponential backoff.",
    ),
}
QUESTIONS = [
    ("what cache TTL did we settle on for the pricing service?", "pricing-ttl"),
    ("are we allowed to deploy on fridays?", "deploy-freeze"),
    ("how often are the JWT keys rotated?", "auth-rotation"),
    ("what size did we pick for the postgres connection pool?", "db-pool"),
    ("what is the retry budget of the payments client", "retry-budget"),
]
FILLER = [
    "cache",
    "service",
    "deploy",
    "keys",
    "pool",
    "client",
    "retry",
    "the",
    "we",
    "what",
    "how",
    "settle",
    "on",
    "for",
    "release",
    "test",
    "build",
    "docs",
    "review",
    "merge",
    "branch",
    "lint",
    "type",
    "check",
    "refactor",
    "module",
    "function",
    "error",
    "log",
    "metric",
    "alert",
]


@pytest.fixture(scope="module")
def indexed(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[SessionStore, StoreConversationIndex]]:
    root = tmp_path_factory.mktemp("question") / "store"
    store = open_store(root)
    chooser = random.Random(17)
    for number in range(120):  # distractors: the question's common words, never its answer
        session_id = f"filler-{number:03d}"
        store.create_session(cwd="/work", session_id=session_id, created_at=1_000 + number)
        words = [chooser.choice(FILLER) for _ in range(30)]
        store.append(session_id, [said(" ".join(words[:15])), answered(" ".join(words[15:]))], time_ms=2_000)
    for offset, (session_id, (asked, reply)) in enumerate(ANSWERS.items()):
        store.create_session(cwd="/elsewhere", session_id=session_id, created_at=500 + offset)
        store.append(session_id, [said(asked), answered(reply)], time_ms=900)
    index = StoreConversationIndex(store, verify=False)
    index.catch_up_now()
    try:
        yield store, index
    finally:
        index.close()
        store.close()


def test_stop_and_question_words_are_dropped_and_quoted_parts_kept() -> None:
    assert content_terms('what cache TTL did we settle on for the "pricing service"?') == [
        "cache",
        "ttl",
        '"pricing service"',
    ]
    assert question_plans("what did we do?").strict is None


def test_the_loose_plan_matches_any_form_of_any_word_and_boosts_adjacent_and_joined_pairs() -> None:
    plans = question_plans("pricing services ttl ")
    assert plans.strict is not None and plans.loose is not None
    assert plans.strict.expression() == '"pricing" AND "services" AND "ttl"'
    assert plans.loose.expression() == (
        '"pric"* OR "servic"* OR "ttl" OR "pricing services" OR "pricingservices" '
        'OR "services ttl" OR "servicesttl"'
    )
    assert plans.loose.loose_words == ("pricing", "services", "ttl")


def test_a_word_still_being_typed_stays_a_prefix_and_is_never_corrected() -> None:
    plans = question_plans("flaky timeout soc")
    assert plans.strict is not None and plans.loose is not None
    assert plans.strict.expression() == '"flaky" AND "timeout" AND "soc"*'
    assert '"timeout soc"*' in plans.loose.expression()
    assert plans.loose.loose_words == ("flaky", "timeout")


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("crashes", "crash"),
        ("crashed", "crash"),
        ("deployed", "deploy"),
        ("deploys", "deploy"),
        ("indexes", "index"),
        ("caching", "cach"),
        ("cache", "cach"),
        ("memory", "memor"),
        ("memories", "memor"),
        ("stopped", "stop"),
        ("running", "run"),
        ("migration", "migrat"),
        ("migrate", "migrat"),
        ("fixes", "fix"),
        ("job", "job"),
        ("数据库", "数据库"),
    ],
)
def test_a_word_and_its_other_forms_share_one_stem(word: str, expected: str) -> None:
    assert stem(word) == expected


@pytest.mark.parametrize(("question", "expected"), QUESTIONS)
def test_a_question_finds_the_session_that_answers_it_first(
    indexed: tuple[SessionStore, StoreConversationIndex], question: str, expected: str
) -> None:
    _, index = indexed
    found = index.search_conversations(
        ConversationRequest(question, limit=5, cwd="/work", question=True), cancel=threading.Event()
    )
    assert found.status == "ok"
    assert [match.session_id for match in found.matches][:1] == [expected]


def test_typed_search_still_needs_every_word(indexed: tuple[SessionStore, StoreConversationIndex]) -> None:
    _, index = indexed
    question = QUESTIONS[0][0]
    typed = index.search_conversations(ConversationRequest(question, limit=5), cancel=threading.Event())
    assert "pricing-ttl" not in [match.session_id for match in typed.matches]


def test_the_question_search_leaves_out_the_excluded_session(
    indexed: tuple[SessionStore, StoreConversationIndex],
) -> None:
    _, index = indexed
    request = ConversationRequest(QUESTIONS[0][0], limit=5, exclude_session_id="pricing-ttl", question=True)
    found = index.search_conversations(request, cancel=threading.Event())
    assert "pricing-ttl" not in [match.session_id for match in found.matches]


def test_words_developers_abbreviate_are_searched_in_their_other_form_too() -> None:
    loose = question_plans("why did the export run out of memory? ").loose
    assert loose is not None and '"oom"*' in loose.expression()
    loose = question_plans('the pg "out of memory" error ').loose
    assert loose is not None
    assert '"postgres"*' in loose.expression() and '"oom"' not in loose.expression()  # not inside quotes


def test_a_session_holding_the_words_over_two_messages_outranks_one_message_holding_one() -> None:
    from sessionref.textsearch.ranking import summed_per_session

    summed = summed_per_session([(1, 10, 4.0), (2, 10, 3.0), (3, 20, 5.0)])
    assert summed[10] == (1, 5.5)  # its best message, and relevance 4 + 0.5 * 3
    assert summed[20] == (3, 5.0)
