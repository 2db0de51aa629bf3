"""Projection and retention run in a worker thread, so a UI's event loop never stalls on a large source."""

from __future__ import annotations

import threading

import pytest
import sessionref.service.references as references_module
from fakes import Agent, FakeSessions, SessionBuilder
from sessionref.service.references import SessionReferences


@pytest.fixture
def retention_threads(monkeypatch: pytest.MonkeyPatch) -> list[threading.Thread]:
    seen: list[threading.Thread] = []
    real = references_module.retain_referenced_session

    def recording(*args: object, **kwargs: object) -> object:
        seen.append(threading.current_thread())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(references_module, "retain_referenced_session", recording)
    return seen


def _service() -> SessionReferences:
    source = SessionBuilder("source", cwd="/work")
    source.user("a fact worth keeping")
    return SessionReferences(FakeSessions.of(source, SessionBuilder("target", cwd="/work")))


async def test_prepare_retains_off_the_event_loop_thread(retention_threads: list[threading.Thread]) -> None:
    prepared = await _service().prepare(Agent("target", "/work"), [], [{"sessionId": "source"}])
    assert prepared.additional_context is not None
    assert retention_threads and all(t is not threading.main_thread() for t in retention_threads)


async def test_preview_retains_off_the_event_loop_thread(retention_threads: list[threading.Thread]) -> None:
    preview = await _service().preview(Agent("target", "/work"), "source")
    assert preview.message_count == 1
    assert retention_threads and all(t is not threading.main_thread() for t in retention_threads)
