"""Helpers for the store tests: the 121 real DSH logs laid out as a sessions root, zstd frames."""

from __future__ import annotations

import json
from pathlib import Path

import zstandard
from sessionref.store import encode_session_segment, project_key
from sessionref.store.locking import LOCK_FILE_NAME

DSH_LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "dsh-logs"


def mark_as_ours(log: Path) -> Path:
    """Give a hand-written log's folder the lock file `create_session` makes: the session is then ours."""
    (log.parent / LOCK_FILE_NAME).write_bytes(b"")
    return log


def write_zstd_frames(path: Path, data: bytes, frames: int = 3) -> None:
    """Write `data` as several concatenated zstd frames (as DSH's streaming writer does)."""
    compressor = zstandard.ZstdCompressor()
    step = max(1, len(data) // frames + 1)
    path.write_bytes(b"".join(compressor.compress(data[i : i + step]) for i in range(0, len(data), step)))


def dsh_log_folders() -> list[Path]:
    """The real DSH log folders, sorted by name."""
    return sorted(path.parent for path in DSH_LOGS.glob("*/session.jsonl"))


def layout_dsh_root(root: Path, cwd: str, *, zstd_every: int = 3) -> dict[str, dict]:
    """Lay out every DSH log under `root` with its folder name as id; every `zstd_every`-th as .zstd.

    Returns the rewritten header of each session by id.
    """
    headers: dict[str, dict] = {}
    for number, folder in enumerate(dsh_log_folders()):
        session_id = folder.name
        text = (folder / "session.jsonl").read_text("utf-8")
        text = text.replace("{{sessionId}}", session_id).replace("{{cwd}}", cwd)
        first, _, rest = text.partition("\n")
        header = json.loads(first)
        header["id"] = session_id
        headers[session_id] = header
        data = (json.dumps(header, ensure_ascii=False, separators=(",", ":")) + "\n" + rest).encode("utf-8")
        target = root / project_key(header.get("cwd")) / encode_session_segment(session_id)
        target.mkdir(parents=True)
        if number % zstd_every == 0:
            write_zstd_frames(target / "session.jsonl.zstd", data)
        else:
            (target / "session.jsonl").write_bytes(data)
    return headers
