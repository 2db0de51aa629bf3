"""Runner for `prepare` conformance vectors (`vectors/prepare.jsonl` format).

`run_prepare_vector(request)` builds a fake session query over
`request["snapshots"]` (ids in `readFailures` or absent fail with
`session not found: "<id>"`, the vector harness's wording), runs
`SessionReferences.prepare` with the byte-exact rc.8 profile, and returns the
upstream response shape `{"ok": {content, additionalContext?}}` or
`{"error": {name, code, message, cause?}}`. The random message `id` is left out.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
from collections.abc import Mapping, Sequence
from typing import Any

from sessionref.contract.errors import SessionReferenceError, js_error_name
from sessionref.contract.js_json import json_string_literal
from sessionref.service.protocols import SessionRecord, SurfaceSnapshot
from sessionref.service.references import SessionReferences


class _VectorAgent:
    """The target agent of a vector (a plain class: this module may be loaded outside sys.modules)."""

    def __init__(self, agent_id: str) -> None:
        self.id = agent_id


class VectorSessions:
    """A `SessionQuery` over the snapshots of one vector request."""

    def __init__(self, snapshots: Mapping[str, Any], read_failures: Sequence[str]) -> None:
        self.snapshots = dict(snapshots)
        self.read_failures = set(read_failures)

    async def list_sessions(self) -> Sequence[SessionRecord]:
        return []

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        if session_id in self.read_failures or session_id not in self.snapshots:
            raise Exception(f"session not found: {json_string_literal(session_id)}")
        return copy.deepcopy(self.snapshots[session_id])

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        return {}


def _error_shape(error: BaseException) -> dict[str, Any]:
    if isinstance(error, SessionReferenceError):
        return error.to_json()
    return {"name": js_error_name(error), "code": getattr(error, "code", None), "message": str(error)}


async def _prepare(request: Mapping[str, Any]) -> dict[str, Any]:
    query = VectorSessions(request.get("snapshots") or {}, request.get("readFailures") or [])
    service = SessionReferences(query, request.get("config"), profile="rc8")
    result = await service.prepare(
        _VectorAgent(request["agentId"]), request.get("content") or [], request.get("references") or []
    )
    shape = result.to_json()
    context = shape.get("additionalContext")
    if context is not None:
        shape["additionalContext"] = {key: value for key, value in context.items() if key != "id"}
    return shape


async def _respond(request: Mapping[str, Any]) -> dict[str, Any]:
    try:
        return {"ok": await _prepare(request)}
    except Exception as error:
        return {"error": _error_shape(error)}


def run_prepare_vector(request: dict[str, Any]) -> dict[str, Any]:
    """The response to one `prepare` vector request; works inside or outside a running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_respond(request))
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _respond(request)).result()
