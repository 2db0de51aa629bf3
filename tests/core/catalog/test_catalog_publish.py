"""Publishing: exactly the snapshot projection, redacted, opt-in, incremental, idempotent, and
nothing lost or doubled when the server is killed in the middle of a publish."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_fixtures import machine_store
from log_events import answered, injected, said, tool_output
from pg_server import Catalog
from sessionref.catalog.errors import CATALOG_UNREACHABLE, CatalogError
from sessionref.catalog.publisher import Publisher
from sessionref.service.conversation_rows import conversation_rows
from sessionref.store import SessionStore

SECRET = "sk-proj-" + "K" * 40


@pytest.fixture
def laptop(tmp_path: Path) -> SessionStore:
    """alice's laptop: a session with a secret, tool output and injected context, and one more."""
    store = machine_store(
        tmp_path / "laptop",
        {
            "s-billing": (
                "/home/alice/billing",
                "billing retries",
                [
                    said(f"my key is {SECRET}, why does billing retry forever"),
                    tool_output("TOOL OUTPUT: 500 lines of logs"),
                    injected("INJECTED: the workspace rules"),
                    answered("the retry budget is unbounded"),
                ],
            ),
            "s-notes": ("/home/alice/notes", "notes", [said("remember the milk")]),
        },
    )
    yield store
    store.close()


def _messages(catalog: Catalog, role: str = "alice") -> list[tuple[object, ...]]:
    return catalog.admin(
        "SELECT s.id, s.machine, m.seq, m.role, m.kind, m.text FROM sessionref.messages m"
        " JOIN sessionref.sessions s ON s.key = m.session_key WHERE s.owner = %s ORDER BY s.id, m.seq",
        role,
    )


def _clear(catalog: Catalog) -> None:
    catalog.admin("DELETE FROM sessionref.sessions")


async def test_what_is_published_is_the_snapshot_projection_redacted(
    catalog: Catalog, laptop: SessionStore
) -> None:
    _clear(catalog)
    publisher = Publisher(catalog.url("alice"), laptop, machine="laptop", sources=["store"])
    try:
        report = await publisher.publish()
    finally:
        publisher.close()
    assert (report.sessions, report.unchanged) == (2, 0)
    surface = await laptop.read_surface("s-billing")
    expected = [
        (row.seq, row.role, row.text.replace(SECRET, "[REDACTED:openai-api-key]"))
        for row in conversation_rows(surface)
    ]
    published = [
        (seq, role, text)
        for session_id, _, seq, role, _, text in _messages(catalog)
        if session_id == "s-billing"
    ]
    assert published == expected
    texts = " ".join(str(row[5]) for row in _messages(catalog))
    assert SECRET not in texts and "TOOL OUTPUT" not in texts and "INJECTED" not in texts
    facts = catalog.admin(
        "SELECT id, owner, machine, source, title, cwd, folder FROM sessionref.sessions ORDER BY id"
    )
    assert facts == [
        ("s-billing", "alice", "laptop", "store", "billing retries", "/home/alice/billing", "billing"),
        ("s-notes", "alice", "laptop", "store", "notes", "/home/alice/notes", "notes"),
    ]


async def test_publishing_is_opt_in_by_source(catalog: Catalog, laptop: SessionStore) -> None:
    _clear(catalog)
    publisher = Publisher(catalog.url("alice"), laptop, machine="laptop", sources=["claude-code"])
    try:
        report = await publisher.publish()
    finally:
        publisher.close()
    assert report.sessions == 0
    assert catalog.admin("SELECT count(*) FROM sessionref.sessions") == [(0,)]


async def test_publishing_again_sends_only_what_changed_and_stores_each_message_once(
    catalog: Catalog, laptop: SessionStore
) -> None:
    _clear(catalog)
    publisher = Publisher(catalog.url("alice"), laptop, machine="laptop", sources=["store"])
    try:
        await publisher.publish()
        before = _messages(catalog)
        again = await publisher.publish()
        assert (again.sessions, again.unchanged) == (0, 2)
        assert _messages(catalog) == before
        laptop.append("s-notes", [answered("and the eggs")], time_ms=9_000)
        changed = await publisher.publish()
        assert (changed.sessions, changed.messages, changed.unchanged) == (1, 2, 1)
    finally:
        publisher.close()
    notes = [row[5] for row in _messages(catalog) if row[0] == "s-notes"]
    assert notes == ["remember the milk", "and the eggs"]


async def test_one_session_only(catalog: Catalog, laptop: SessionStore) -> None:
    _clear(catalog)
    publisher = Publisher(catalog.url("alice"), laptop, machine="laptop", sources=["store"])
    try:
        await publisher.publish(["s-notes"])
    finally:
        publisher.close()
    assert catalog.admin("SELECT id FROM sessionref.sessions") == [("s-notes",)]


def _many_sessions(root: Path, count: int) -> SessionStore:
    return machine_store(
        root,
        {
            f"bulk-{number:04d}": (
                "/home/alice/bulk",
                f"bulk {number}",
                [said(f"question {number} {word}") for word in range(30)],
            )
            for number in range(count)
        },
    )


async def test_a_server_killed_mid_publish_loses_and_doubles_nothing(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sessionref.catalog.publisher as publisher_module

    _clear(catalog)
    store = _many_sessions(tmp_path / "bulk", 40)
    monkeypatch.setattr(publisher_module, "BATCH_SESSIONS", 5)  # eight transactions
    publisher = Publisher(catalog.url("alice"), store, machine="laptop", sources=["store"])
    original = publisher_module.write_batch
    batches = 0

    def kill_during_the_third_batch(connection: object, machine: str, batch: object) -> None:
        nonlocal batches
        batches += 1
        if batches == 3:
            catalog.server.stop(mode="immediate")  # the server dies with this transaction open
        original(connection, machine, batch)  # type: ignore[arg-type]

    monkeypatch.setattr(publisher_module, "write_batch", kill_during_the_third_batch)
    try:
        with pytest.raises(CatalogError) as raised:
            await publisher.publish()
        assert raised.value.code == CATALOG_UNREACHABLE
        catalog.server.start()
        committed = catalog.admin("SELECT count(*) FROM sessionref.sessions")[0][0]
        assert committed == 10  # the first two batches, nothing of the third
        report = await publisher.publish()
    finally:
        publisher.close()
        store.close()
    assert (report.sessions, report.unchanged) == (30, 10)
    rows = catalog.admin(
        "SELECT count(*), count(DISTINCT (session_key, seq)) FROM sessionref.messages m"
        " JOIN sessionref.sessions s ON s.key = m.session_key WHERE s.id LIKE 'bulk-%%'"
    )
    assert rows == [(40 * 30, 40 * 30)]
    assert catalog.admin("SELECT min(messages), max(messages) FROM sessionref.sessions") == [(30, 30)]
