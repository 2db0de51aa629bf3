"""Reading: two machines publish to one catalog and read each other's shared sessions beside their
own, in one ranked list, captured from the catalog's copy like any snapshot; a catalog that is
down or slow leaves local sessions working, with a one-line note."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from log_events import answered, said, tool_output
from pg_server import Catalog
from pydantic import SecretStr
from sessionref.catalog.connection import connect
from sessionref.catalog.publisher import Publisher
from sessionref.catalog.sharing import share
from sessionref.host.catalog_link import CatalogLink, open_catalog_link
from sessionref.host.catalog_settings import CatalogSettings
from sessionref.service.references import SessionReferences
from sessionref.store import SessionStore, open_store


@dataclass(frozen=True)
class Agent:
    """Who a list is asked for: no session of its own, a cwd."""

    id: str
    cwd: str | None


def _store(
    root: Path, sessions: list[tuple[str, str | None, str, int, list[dict[str, Any]]]]
) -> SessionStore:
    """A store with `(id, cwd, title, last activity ms, events)` sessions."""
    store = open_store(root)
    for session_id, cwd, title, at, events in sessions:
        store.create_session(cwd=cwd, session_id=session_id, created_at=at - 100)
        store.append(session_id, events, time_ms=at - 50)
        store.rename(session_id, title, time_ms=at)
    return store


async def _publish(catalog: Catalog, role: str, store: SessionStore, machine: str) -> None:
    publisher = Publisher(catalog.url(role), store, machine=machine, sources=["store"])
    try:
        await publisher.publish()
    finally:
        publisher.close()


def _link(catalog: Catalog, role: str, machine: str, *, deadline: float = 5.0) -> CatalogLink:
    settings = CatalogSettings(url=SecretStr(catalog.url(role)), machine=machine)
    link = open_catalog_link(settings, deadline=deadline)
    assert link is not None
    return link


@dataclass
class TwoMachines:
    """alice's laptop and bob's desktop, both published; alice shared one session with bob."""

    catalog: Catalog
    laptop: SessionStore
    desktop: SessionStore


@pytest.fixture
async def machines(catalog: Catalog, tmp_path: Path) -> Iterator[TwoMachines]:
    catalog.admin("DELETE FROM sessionref.sessions")
    laptop = _store(
        tmp_path / "laptop",
        [
            (
                "a-billing",
                "/home/alice/billing",
                "billing retries",
                3_000,
                [
                    said("why does billing retry forever"),
                    tool_output("TOOL LOGS"),
                    answered("the retry budget is unbounded"),
                ],
            ),
            ("a-private", "/home/alice/diary", "private notes", 4_000, [said("nobody else reads this")]),
        ],
    )
    desktop = _store(
        tmp_path / "desktop",
        [
            (
                "b-deploy",
                "/srv/bob/deploy",
                "deploy script",
                2_000,
                [said("the deploy needs a retry budget too")],
            ),
            ("b-billing", "/srv/bob/billing", "bob billing", 1_000, [said("billing on the desktop")]),
        ],
    )
    await _publish(catalog, "alice", laptop, "laptop")
    await _publish(catalog, "bob", desktop, "desktop")
    for role, session_id, other in (("alice", "a-billing", "bob"), ("bob", "b-deploy", "alice")):
        connection = connect(catalog.url(role))
        try:
            share(connection, session_id, other)
        finally:
            connection.close()
    yield TwoMachines(catalog, laptop, desktop)
    laptop.close()
    desktop.close()


async def test_each_machine_lists_the_others_shared_sessions_beside_its_own(machines: TwoMachines) -> None:
    link = _link(machines.catalog, "bob", "desktop")
    try:
        references = SessionReferences(link.sessions(machines.desktop))
        found = await references.list_candidates(Agent("", "/srv/bob/billing"), "", 10)
    finally:
        link.close()
    # bob's own billing folder first; alice's a-billing counts as this folder too (same folder name),
    # and is newer; a-private was never shared with bob.
    assert [candidate.session_id for candidate in found] == ["a-billing", "b-billing", "b-deploy"]
    assert link.machine_of("a-billing") == "laptop" and link.machine_of("b-billing") is None
    link = _link(machines.catalog, "alice", "laptop")
    try:
        found = await SessionReferences(link.sessions(machines.laptop)).list_candidates(
            Agent("", None), "", 10
        )
    finally:
        link.close()
    # alice's own published sessions are listed once (from her store), bob's shared one beside them.
    assert [candidate.session_id for candidate in found] == ["a-private", "a-billing", "b-deploy"]


async def test_a_needle_filters_remote_sessions_by_title_id_and_cwd(machines: TwoMachines) -> None:
    link = _link(machines.catalog, "bob", "desktop")
    try:
        references = SessionReferences(link.sessions(machines.desktop))
        by_title = await references.list_candidates(Agent("", None), "RETRIES", 10)
        by_cwd = await references.list_candidates(Agent("", None), "alice/bill", 10)
        nothing = await references.list_candidates(Agent("", None), "nobody else", 10)
    finally:
        link.close()
    assert [candidate.session_id for candidate in by_title] == ["a-billing"]
    assert [candidate.label for candidate in by_title] == ["billing retries"]
    assert [candidate.session_id for candidate in by_cwd] == ["a-billing"]
    assert nothing == []


async def test_a_remote_session_is_captured_from_the_catalogs_copy_exactly_like_the_local_one(
    machines: TwoMachines,
) -> None:
    local = SessionReferences(machines.laptop)
    prepared_there = await local.prepare(
        Agent("x", None), [], [{"sessionId": "a-billing", "label": "billing"}]
    )
    link = _link(machines.catalog, "bob", "desktop")
    try:
        remote = SessionReferences(link.sessions(machines.desktop))
        prepared_here = await remote.prepare(
            Agent("x", None), [], [{"sessionId": "a-billing", "label": "billing"}]
        )
        with pytest.raises(Exception) as hidden:
            await remote.prepare(Agent("x", None), [], [{"sessionId": "a-private", "label": "private"}])
    finally:
        link.close()
    assert prepared_here.additional_context is not None and prepared_there.additional_context is not None
    here, there = dict(prepared_here.additional_context), dict(prepared_there.additional_context)
    assert here.pop("id") != there.pop("id")  # every context message has its own id
    assert here == there
    assert "TOOL LOGS" not in str(prepared_here.additional_context)
    assert getattr(hidden.value, "code", None) == "SESSION_REFERENCE_READ_FAILED"


async def test_conversation_search_finds_what_was_said_on_the_other_machine(machines: TwoMachines) -> None:
    link = _link(machines.catalog, "alice", "laptop")
    try:
        references = SessionReferences(link.sessions(machines.laptop), conversations=link.conversations(None))
        result = await references.search_conversations(Agent("", "/home/alice/deploy"), "deploy retr", 10)
        private = await references.search_conversations(Agent("", None), "nobody else", 10)
    finally:
        link.close()
    assert [(match.session_id, match.label, match.same_workspace) for match in result.matches] == [
        ("b-deploy", "deploy script", True)
    ]
    assert result.matches[0].snippet == "the deploy needs a retry budget too"
    assert private.matches == ()  # alice's own session is searched by her local index, not here


async def test_a_catalog_that_is_down_leaves_local_results_and_a_note(machines: TwoMachines) -> None:
    link = _link(machines.catalog, "bob", "desktop", deadline=30.0)  # a refused connection answers at once
    machines.catalog.server.stop(mode="immediate")
    try:
        references = SessionReferences(link.sessions(machines.desktop))
        found = await references.list_candidates(Agent("", None), "", 10)
    finally:
        machines.catalog.server.start()
        link.close()
    assert [candidate.session_id for candidate in found] == ["b-deploy", "b-billing"]
    assert link.note is not None and "CATALOG_UNREACHABLE" in link.note and "local sessions only" in link.note


async def test_a_catalog_slower_than_the_deadline_leaves_local_results_and_a_note(
    machines: TwoMachines,
) -> None:
    # Only the lock may make the catalog late: before and after it, a loaded machine's slowness must
    # not, so the 150 ms deadline is in force only while the table is locked.
    link = _link(machines.catalog, "bob", "desktop", deadline=60.0)
    references = SessionReferences(link.sessions(machines.desktop))
    await references.list_candidates(Agent("", None), "", 10)  # connected, schema checked
    assert link.note is None
    locker = psycopg.connect(machines.catalog.server.conninfo(database=machines.catalog.database))
    released = threading.Event()
    try:
        locker.execute("LOCK TABLE sessionref.sessions IN ACCESS EXCLUSIVE MODE")  # every read now waits
        link.deadline = 0.150
        found = await references.list_candidates(Agent("", None), "", 10)
        assert [candidate.session_id for candidate in found] == ["b-deploy", "b-billing"]
        assert link.note == "the catalog did not answer within 150 ms: local sessions only"
    finally:
        link.deadline = 60.0
        locker.rollback()
        locker.close()
        released.set()
    found = await references.list_candidates(Agent("", None), "", 10)
    link.close()
    assert "a-billing" in [candidate.session_id for candidate in found]
    assert link.note is None
