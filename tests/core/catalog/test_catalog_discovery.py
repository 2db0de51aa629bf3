"""Title discovery answers exactly what a plain scan would, whichever plan answers a keystroke."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
import sessionref.catalog.discovery as discovery
from pg_server import Catalog
from sessionref.catalog.connection import connect

WORDS = ("alpha", "beta", "gamma", "delta", "billing", "retry", "deploy", "zebra", "quartz", "api")
FOLDERS = ("api", "web", "infra", "docs")


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
        title = " ".join(words)
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
    visible: list[tuple[str, str, str | None, int, str]], needle: str, folder: str | None
) -> list[str]:
    def rank(cwd: str | None) -> int:
        if cwd is not None and folder is not None and cwd.rsplit("/", 1)[-1] == folder:
            return 0
        return 1 if cwd is None else 2

    matching = [row for row in visible if needle in f"{row[0]}\x1f{row[4]}\x1f{row[2] or ''}".lower()]
    matching.sort(key=lambda row: (rank(row[2]), -row[3]))
    return [row[0] for row in matching[:50]]


@pytest.mark.parametrize("probe_rows", [1_000, 40, 5])
def test_every_plan_gives_the_exact_answer(
    catalog: Catalog,
    many: list[tuple[str, str, str | None, int, str]],
    probe_rows: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(discovery, "PROBE_ROWS", probe_rows)  # small probes force the index plans
    needles = [
        "",
        "a",
        "ap",
        "api",
        "bill",
        "billing retry",
        "unic",
        "unicorn",
        "id-0001",
        "zzz",
        "web",
        "gamma",
    ]
    connection = connect(catalog.url("alice"))
    try:
        for folder in (None, "api", "docs"):
            for needle in needles:
                found = discovery.find_sessions(
                    connection, needle=needle, folder=folder, exclude_id="", exclude_machine="-", limit=50
                )
                expected = _expected(many, needle, folder)
                assert [session.id for session in found] == expected, (folder, needle)
    finally:
        connection.close()
