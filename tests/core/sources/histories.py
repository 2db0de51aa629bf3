"""Helpers for the foreign-history reader tests: fixture roots, readers by kind, a tiny SessionQuery."""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sessionref.contract.projection import project_session_conversation
from sessionref.service.protocols import SessionRecord, SurfaceSnapshot
from sessionref.sources import ForeignSession, ForeignSummary, claude_code, codex, gemini
from sessionref.sources.reader import WalkContext
from sessionref.sources.registry import SOURCES, registered

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "histories"
GOLDEN = FIXTURES / "golden"
ROOTS = {"claude-code": FIXTURES / "claude-code", "codex": FIXTURES / "codex", "gemini": FIXTURES / "gemini"}
"""The first three sources' fixture roots (`fixture_sessions` reads them through their functions)."""
READER_ROOTS = {info.kind: FIXTURES / info.kind for info in SOURCES}
"""Every registered source's fixture root, read through its `READER` (`discover`, `read_listed`)."""


@dataclass(frozen=True)
class FixtureSession:
    """One session of a fixture root, with functions to read it in full and to scan it for discovery."""

    kind: str
    key: str
    read: Callable[[], ForeignSession]
    scan: Callable[[], ForeignSummary]


def _claude(root: Path) -> Iterable[FixtureSession]:
    for path in claude_code.walk(root):
        yield FixtureSession(
            "claude-code",
            path.stem,
            lambda path=path: claude_code.read_session(root, path),
            lambda path=path: claude_code.scan_session_file(root, path).summary(),
        )


def _codex(root: Path) -> Iterable[FixtureSession]:
    for files in codex.walk(root):

        def scan(files: codex.CodexSessionFiles = files) -> ForeignSummary:
            scans = [codex.scan_session_file(root, path) for path in files.paths]
            return codex.summarize(files.native_id, scans, codex.scan_thread_names(root).names)

        yield FixtureSession(
            "codex", files.native_id, lambda files=files: codex.read_session(root, files), scan
        )


def _gemini(root: Path) -> Iterable[FixtureSession]:
    for path in gemini.walk(root):
        yield FixtureSession(
            "gemini",
            path.name,
            lambda path=path: gemini.read_session(root, path),
            lambda path=path: gemini.scan_session_file(root, path).summary(gemini.project_cwd(root, path)),
        )


def fixture_sessions(roots: Mapping[str, Path] = ROOTS) -> list[FixtureSession]:
    """Every session of every fixture root, in walk order."""
    return [*_claude(roots["claude-code"]), *_codex(roots["codex"]), *_gemini(roots["gemini"])]


def copy_root(kind: str, destination: Path) -> Path:
    """A private copy of one fixture root (for tests that add files, links or bytes)."""
    target = destination / kind
    shutil.copytree(READER_ROOTS[kind], target, symlinks=True)
    return target


def discover(kind: str, root: Path | None = None, context: WalkContext | None = None) -> list[ForeignSummary]:
    """What the store would list of one root: walk, scan and summarize with the source's reader."""
    reader = registered(kind).reader()
    root = READER_ROOTS[kind] if root is None else root
    context = WalkContext() if context is None else context
    found: list[ForeignSummary] = []
    for files in reader.walk(root):
        if files.database:
            assert reader.database is not None
            found.extend(reader.database.sessions(root, files, {}).changed)
            continue
        scans = [reader.scan(root, path, None) for path in files.paths]
        summary = reader.summarize(root, files.native_id, scans, context)
        if summary is not None:
            found.append(summary)
    return found


def read_listed(summary: ForeignSummary, root: Path | None = None) -> ForeignSession:
    """One listed session read in full through its reader."""
    reader = registered(summary.source_kind).reader()
    root = READER_ROOTS[summary.source_kind] if root is None else root
    return reader.read(root, summary.native_id, list(summary.paths))


def projected(session: ForeignSession) -> list[tuple[str, str, bool]]:
    """A read session's projection as `(role, text, checkpoint)`."""
    return [
        (item.role, item.text, item.checkpoint) for item in project_session_conversation(session.snapshot)
    ]


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any] | str], *, end: str = "\n") -> Path:
    """Write records (dicts as compact JSON, strings as they are) one per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [item if isinstance(item, str) else json.dumps(item, separators=(",", ":")) for item in records]
    path.write_text("\n".join(lines) + (end if lines else ""), encoding="utf-8")
    return path


def tree_state(root: Path) -> dict[str, tuple[bytes, int]]:
    """Bytes and mtime of every file under `root` (links not followed), to prove nothing was written."""
    state: dict[str, tuple[bytes, int]] = {}
    for directory, _, files in os.walk(root):
        for name in files:
            path = Path(directory) / name
            if path.is_symlink():
                state[str(path)] = (os.readlink(path).encode(), 0)
            else:
                state[str(path)] = (path.read_bytes(), path.stat().st_mtime_ns)
    return state


class SnapshotQuery:
    """A `SessionQuery` serving foreign sessions read in advance (deep copies, like a real backend)."""

    def __init__(self, sessions: Sequence[ForeignSession]) -> None:
        self.sessions = {session.session_id: session for session in sessions}

    async def list_sessions(self) -> Sequence[SessionRecord]:
        ordered = sorted(
            self.sessions.values(), key=lambda session: (-session.updated_at, session.session_id)
        )
        return [SessionRecord(s.session_id, s.created_at, s.cwd, s.updated_at) for s in ordered]

    async def read_surface(self, session_id: str) -> SurfaceSnapshot:
        if session_id not in self.sessions:
            raise LookupError(f"session {session_id!r} not found")
        return copy.deepcopy(self.sessions[session_id].snapshot)  # type: ignore[return-value]

    async def read_titles(self, session_ids: Sequence[str]) -> Mapping[str, str | None]:
        return {sid: self.sessions[sid].title if sid in self.sessions else None for sid in session_ids}
