"""Title discovery answers exactly what a plain scan would, whichever plan answers a keystroke:
the probe, reading on newest first (short or not), or the trigram indexes over the names and cwd."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import sessionref.catalog.discovery as discovery
from pg_server import Catalog
from sessionref.catalog.connection import connect

WORDS = ("alpha", "beta", "gamma", "delta", "billing", "retry", "deploy", "zebra", "quartz", "api")
FOLDERS = ("api", "web", "infra", "docs", "my_tools.v2")
SEPARATORS = (" ", " ", " ", "-", "_", "/", ". ", ":", "\\")
LONG = "x" * 900
"""Makes a title too long for the listing indexes' copy of the search text (decided from the table)."""


@pytest.fixture(scope="module")
def many(catalog: Catalog) -> Iterator[list[tuple[str, str, str | None, int, str]]]:
    """1,500 sessions of alice's and bob's (bob shares some with alice), words of every frequency."""
    rng = random.Random(7)
    rows: list[tuple[str, str, str | None, int, str]] = []
    catalog.admin("DELETE FROM sessionref.sessions")
    for number in range(1_500):
        owner = "alice" if rng.random() < 0.7 else "bob"
        words = rng.sample(WORDS, rng.randint(1, 3))
        if rng.random() < 0.01:
            words.append("unicorn")  # a rare word
        title = rng.choice(SEPARATORS).join(words)
        if rng.random() < 0.05:
            title = f"{title} {LONG}"
        cwd = None if rng.random() < 0.1 else f"/home/{owner}/{rng.choice(FOLDERS)}"
        updated = 1_000_000 + number * 1_000 + rng.randint(0, 999)
        rows.append((f"id-{number:05d}", owner, cwd, updated, title))
    import psycopg

    with psycopg.connect(catalog.server.conninfo(database=catalog.database)) as connection:
        connection.cursor().executemany(
            "INSERT INTO sessionref.sessions (id, owner, machine, source, title, cwd, created_at, updated_at)"
            " VALUES (%s, %s, %s || '-box', 'store', %s, %s, 0, %s)",
            [
                (session_id, owner, owner, title, cwd, updated)
                for session_id, owner, cwd, updated, title in rows
            ],
        )
    shared = [row[0] for row in rows if row[1] == "bob"][::3]
    catalog.admin(
        "INSERT INTO sessionref.shares (session_key, shared_with, owner)"
        " SELECT key, 'alice'::regrole, owner FROM sessionref.sessions WHERE id = ANY(%s)",
        shared,
    )
    visible = [row for row in rows if row[1] == "alice" or row[0] in set(shared)]
    yield visible
    catalog.admin("DELETE FROM sessionref.sessions")


def _expected(
    visible: list[tuple[str, str, str | None, int, str]],
    needle: str,
    folder: str | None,
    exclude_id: str = "",
    exclude_machine: str = "-",
) -> list[str]:
    def rank(cwd: str | None) -> int:
        if cwd is not None and folder is not None and cwd.rsplit("/", 1)[-1] == folder:
            return 0
        return 1 if cwd is None else 2

    matching = [
        row
        for row in visible
        if needle in f"{row[0]}\x1f{row[4]}\x1f{row[2] or ''}".lower()
        and row[0] != exclude_id
        and f"{row[1]}-box" != exclude_machine
    ]
    matching.sort(key=lambda row: (rank(row[2]), -row[3]))
    return [row[0] for row in matching[:50]]


NEEDLES = (
    "",
    "a",
    "ap",
    "api",
    "bill",
    "billing retry",
    "billing-retry",
    "alpha_be",
    "a/b",
    "ta. ga",
    "y:z",
    "a\\d",
    "unic",
    "unicorn",
    "xxxx",
    "unicorn xx",
    "id-0001",
    "zzz",
    "web",
    "/home/bob/",
    "my_tools.v",
    "ools.v2",
    "gamma",
    "s-0",  # under a trigram without its separator: the joined names' index
    "./",
)


@pytest.mark.parametrize(
    ("probe_rows", "read_on_rows"),
    [(1_000, 20_000), (40, 20_000), (5, 20_000), (5, 400), (40, 600)],
)
def test_every_plan_gives_the_exact_answer(
    catalog: Catalog,
    many: list[tuple[str, str, str | None, int, str]],
    probe_rows: int,
    read_on_rows: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(discovery, "PROBE_ROWS", probe_rows)  # small probes force the other plans
    monkeypatch.setattr(discovery, "READ_ON_ROWS", read_on_rows)  # a short read on: then the index
    plans: Counter[str] = Counter()
    read_on, indexed = discovery._recent, discovery._indexed

    def counted_read_on(*arguments: Any) -> discovery.Probe:
        plans["read on"] += 1
        return read_on(*arguments)

    def counted_index(*arguments: Any) -> list[discovery.CatalogSession]:
        plans["index"] += 1
        return indexed(*arguments)

    monkeypatch.setattr(discovery, "_recent", counted_read_on)
    monkeypatch.setattr(discovery, "_indexed", counted_index)
    connection = connect(catalog.url("alice"))
    try:
        for folder in (None, "api", "docs", "my_tools.v2"):
            for needle in NEEDLES:
                found = discovery.find_sessions(
                    connection, needle=needle, folder=folder, exclude_id="", exclude_machine="-", limit=50
                )
                expected = _expected(many, needle, folder)
                assert [session.id for session in found] == expected, (folder, needle)
    finally:
        connection.close()
    if read_on_rows < 1_000:  # small probes and a short read on sent keystrokes to each plan
        assert plans["read on"] > 0 and plans["index"] > 0, plans


def test_every_plan_leaves_out_this_machine_and_this_session(
    catalog: Catalog, many: list[tuple[str, str, str | None, int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(discovery, "PROBE_ROWS", 5)
    monkeypatch.setattr(discovery, "READ_ON_ROWS", 60)
    connection = connect(catalog.url("alice"))
    newest_of_alice = max((row for row in many if row[1] == "alice"), key=lambda row: row[3])[0]
    try:
        for needle in ("", "bill", "unicorn", "gamma", "/home/"):
            for exclude_id, exclude_machine in ((newest_of_alice, "-"), ("", "bob-box"), ("", "alice-box")):
                found = discovery.find_sessions(
                    connection,
                    needle=needle,
                    folder="api",
                    exclude_id=exclude_id,
                    exclude_machine=exclude_machine,
                    limit=50,
                )
                expected = _expected(many, needle, "api", exclude_id, exclude_machine)
                assert [session.id for session in found] == expected, (needle, exclude_id, exclude_machine)
    finally:
        connection.close()


def test_the_joined_names_replace_separators_as_the_needle_is_replaced(catalog: Catalog) -> None:
    title = "Fix: the api-gateway/retry_loop.v2 \\ now"
    cwd = "/home/alice/my_tools.v2"
    catalog.admin(
        "INSERT INTO sessionref.sessions (id, owner, machine, source, title, cwd, created_at, updated_at)"
        " VALUES ('joined-1', 'alice', 'alice-box', 'store', %s, %s, 0, 0)",
        title,
        cwd,
    )
    try:
        rows = catalog.admin(
            "SELECT names_joined, search_short FROM sessionref.sessions WHERE id = 'joined-1'"
        )
        places = catalog.admin("SELECT search FROM sessionref.places WHERE cwd = %s", cwd)
        alice = connect(catalog.url("alice"))  # the owner moves it, through row-level security
        try:
            with alice.transaction():
                alice.execute("UPDATE sessionref.sessions SET cwd = '/srv/Moved' WHERE id = 'joined-1'")
        finally:
            alice.close()
        moved = catalog.admin("SELECT search FROM sessionref.places WHERE cwd = '/srv/Moved'")
    finally:
        catalog.admin("DELETE FROM sessionref.sessions WHERE id = 'joined-1'")
    names, short = rows[0]
    assert discovery.joined_pattern(f"joined-1\x1f{title}".lower()) == f"%{names}%"
    assert " " not in str(names) and "/" not in str(names)
    assert short == f"joined-1\x1f{title}\x1f{cwd}".lower()
    assert places == [(cwd.lower(),)]  # a new cwd is a place as soon as a session has it
    assert moved == [("/srv/moved",)]
