"""Where a session lives on disk: DSH directory layout (contract.md §3.1).

`<root>/<project key of cwd>/<escaped id>/session.jsonl` (or `session.jsonl.zstd` for
compressed DSH logs). The project key is lossy on purpose: the header's `cwd` is the truth.
"""

from __future__ import annotations

import re
from pathlib import Path

from sessionref.store.errors import STORE_INVALID_ID, StoreError

LOG_NAME = "session.jsonl"
ZSTD_LOG_NAME = "session.jsonl.zstd"
NO_CWD_DIR = "_no-cwd"
SAFE_SEGMENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
"""The characters a path segment keeps as they are; every other one is escaped (`~XXXX`)."""
_PLAIN_SEGMENT = re.compile(r"[A-Za-z0-9._-]+")
_SEPARATORS = frozenset("/\\:")
_PROJECT_KEY_CHARS = 251
_MAX_SEGMENT_BYTES = 255


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def _escape_unit(unit: int) -> str:
    return f"~{unit:04X}"


def encode_session_segment(session_id: str) -> str:
    """Escape `session_id` into one path segment: every UTF-16 unit outside `[A-Za-z0-9._-]` becomes `~XXXX`.

    `.` and `..` are escaped whole; an empty id or one whose segment would not fit a file name
    raises `StoreError(STORE_INVALID_ID)`.
    """
    if not isinstance(session_id, str) or session_id == "":
        raise StoreError(STORE_INVALID_ID, "a session id must be a non-empty string")
    if session_id in (".", ".."):
        return "~002E" * len(session_id)
    parts: list[str] = []
    for unit in _utf16_units(session_id):
        char = chr(unit) if unit < 0xD800 or unit > 0xDFFF else ""
        parts.append(char if char in SAFE_SEGMENT_CHARS and char else _escape_unit(unit))
    segment = "".join(parts)
    if len(segment) > _MAX_SEGMENT_BYTES:
        raise StoreError(STORE_INVALID_ID, "the session id is too long to be stored")
    return segment


def decode_session_segment(segment: str) -> str | None:
    """The id a segment written by `encode_session_segment` stands for, or None if it is not one."""
    if "~" not in segment:
        return segment if _PLAIN_SEGMENT.fullmatch(segment) and segment not in (".", "..") else None
    units: list[int] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "~":
            digits = segment[i + 1 : i + 5]
            if len(digits) != 4 or any(d not in "0123456789ABCDEF" for d in digits):
                return None
            units.append(int(digits, 16))
            i += 5
        elif char in SAFE_SEGMENT_CHARS:
            units.append(ord(char))
            i += 1
        else:
            return None
    data = b"".join(u.to_bytes(2, "little") for u in units)
    try:
        return data.decode("utf-16-le", "surrogatepass")
    except UnicodeDecodeError:
        return None


def project_key(cwd: str | None) -> str:
    """The project directory name for `cwd` (`_no-cwd` when there is none), as DSH names it."""
    if cwd is None:
        return NO_CWD_DIR
    parts: list[str] = []
    previous_was_separator = False
    for unit in _utf16_units(cwd):
        char = chr(unit) if unit < 0xD800 or unit > 0xDFFF else ""
        if char and char in _SEPARATORS:
            if not previous_was_separator:
                parts.append("-")
            previous_was_separator = True
            continue
        previous_was_separator = False
        parts.append(char if char and char in SAFE_SEGMENT_CHARS else _escape_unit(unit))
    body = "".join(parts).lstrip("-") or "root"
    return f"--{body[:_PROJECT_KEY_CHARS]}--"


def session_dir(root: Path, session_id: str, cwd: str | None) -> Path:
    """The folder a new session with this id and cwd is written to."""
    return root / project_key(cwd) / encode_session_segment(session_id)
