"""Titles of foreign sessions, under the same rules as the store's titles.

`normalize_title` must give exactly what `sessionref.store.titles.normalize_title` gives (a
test holds the two together over random text). It is restated here because importing
`sessionref.store.titles` runs `sessionref.store/__init__`, which loads the whole store
(SQLite, the log writer); the readers must stay importable without it. Once the store's
title rules move to a pure module, this file should import them instead.

* `normalize_title`: escape sequences (OSC, DCS/SOS/PM/APC, CSI, other ESC sequences, 7-bit
  and 8-bit introducers), C0/C1 controls, lone surrogates and bidi/invisible format
  characters removed; whitespace runs collapsed to one space; trimmed; cut to 256 UTF-8 bytes
  on a code-point boundary; None when nothing is left.
* `prompt_title`: the store's fallback title of a first prompt: the first five words of the
  normalised start of the prompt, at most 40 characters.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["TITLE_BYTE_BUDGET", "normalize_title", "prompt_title"]

TITLE_BYTE_BUDGET: Final = 256
PROMPT_TITLE_WORDS: Final = 5
PROMPT_TITLE_CHARS: Final = 40
PROMPT_SCAN_CHARS: Final = 4096

_TERMINAL_SEQUENCES: Final = re.compile(
    r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # operating system command
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?"  # device control and strings
    r"|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"  # control sequence
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"  # any other escape
)
_FORMAT_CHARACTERS: Final = frozenset(
    "\u00ad\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\u206a\u206b\u206c\u206d\u206e\u206f"
    "\ufeff\ufff9\ufffa\ufffb"
)
_KEPT_CONTROLS: Final = frozenset("\t\n\v\f\r")
_NEEDS_CHECK: Final = re.compile(r"[^\x20-\x7e\t\n\v\f\r]")
_SPACES: Final = re.compile(r"\s+")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char in _FORMAT_CHARACTERS:
        return ""
    if char not in _KEPT_CONTROLS and unicodedata.category(char) in ("Cc", "Cf", "Cs"):
        return ""
    return char


def normalize_title(text: object) -> str | None:
    """Inert one-line title for `text` within `TITLE_BYTE_BUDGET` UTF-8 bytes, or None if nothing is left."""
    if not isinstance(text, str):
        return None
    cleaned = _NEEDS_CHECK.sub(_visible, _TERMINAL_SEQUENCES.sub("", text))
    collapsed = _SPACES.sub(" ", cleaned).strip()
    encoded = collapsed.encode("utf-8")
    if len(encoded) > TITLE_BYTE_BUDGET:
        collapsed = encoded[:TITLE_BYTE_BUDGET].decode("utf-8", "ignore").rstrip()
    return collapsed or None


def prompt_title(prompt: str) -> str | None:
    """The fallback title of a first prompt: its first five words, at most 40 characters, or None."""
    normalized = normalize_title(prompt[:PROMPT_SCAN_CHARS])
    if normalized is None:
        return None
    words = " ".join(normalized.split(" ")[:PROMPT_TITLE_WORDS])
    return words[:PROMPT_TITLE_CHARS].rstrip() or None
