"""Helpers for the store tests with other agents' histories: private fixture roots and small records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from histories import copy_root
from sessionref.store import SessionStore, open_store
from sessionref.store.foreign_state import ForeignRoot

KINDS = ("claude-code", "codex", "gemini")
CART = "claude-code:5f1c2a9e-3b7d-4c1e-9a2f-0d8e6b4c1a01"
BLOG = "claude-code:3c8d2e11-9f40-4a7b-b5c6-1e2f3a4b5c03"
SPLIT = "codex:2c3d4e5f-1111-4b6c-9d0e-000000000002"
TRIAGE = "codex:1b2c3d4e-0000-4a5b-8c9d-000000000001"
CI = "gemini:9d8c7b6a-1111-4222-8333-444455556666"
FIXTURE_SESSIONS = 12
"""Sessions in the three fixture roots together (4 each)."""


def fixture_roots(tmp_path: Path) -> dict[str, Path]:
    """Private copies of the three fixture roots under `tmp_path / "homes"`."""
    homes = tmp_path / "homes"
    return {kind: copy_root(kind, homes) for kind in KINDS}


def sources_of(roots: dict[str, Path], *kinds: str) -> list[ForeignRoot]:
    """The store's sources for `kinds` (all three when none is named)."""
    return [ForeignRoot.of(kind, roots[kind]) for kind in (kinds or KINDS)]  # type: ignore[arg-type]


def open_with(tmp_path: Path, roots: dict[str, Path], *kinds: str, **options: Any) -> SessionStore:
    """The store at `tmp_path / "store"` reading the given sources of `roots`."""
    return open_store(tmp_path / "store", sources=sources_of(roots, *kinds), **options)


def line(record: dict[str, Any]) -> str:
    """One JSONL line."""
    return json.dumps(record, separators=(",", ":")) + "\n"


def claude_prompt(
    session: str, uuid: str, parent: str | None, text: str, when: str, cwd: str
) -> dict[str, Any]:
    """A Claude Code `user` line a person typed."""
    return {
        "parentUuid": parent, "isSidechain": False, "type": "user", "cwd": cwd, "sessionId": session,
        "message": {"role": "user", "content": text}, "uuid": uuid, "timestamp": when,
    }  # fmt: skip


def claude_answer(session: str, uuid: str, parent: str, text: str, when: str, cwd: str) -> dict[str, Any]:
    """A Claude Code `assistant` line with one text block."""
    return {
        "parentUuid": parent, "isSidechain": False, "type": "assistant", "cwd": cwd, "sessionId": session,
        "message": {"id": f"msg-{uuid}", "role": "assistant", "model": "claude-test",
                    "content": [{"type": "text", "text": text}]},
        "uuid": uuid, "timestamp": when,
    }  # fmt: skip


def write_claude_session(root: Path, project: str, native_id: str, prompt: str, when: str, cwd: str) -> Path:
    """A small Claude Code session file (one prompt, one answer)."""
    path = root / "projects" / project / f"{native_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        line(claude_prompt(native_id, f"{native_id}-u1", None, prompt, when, cwd))
        + line(claude_answer(native_id, f"{native_id}-a1", f"{native_id}-u1", "Sure.", when, cwd)),
        encoding="utf-8",
    )
    return path
