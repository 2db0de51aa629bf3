"""Session titles: normalisation (inert, bounded text) and the fallback title of a session.

A title is shown in terminals and pickers, so everything that could steer a terminal or
reorder text is removed before it is stored or returned: whole escape sequences, every character
of `sessionref.contract.terminal_text`'s unsafe set, and on top of that (a title is one short line
people compare by eye) every other invisible format character. The whitespace controls and the
line/paragraph separators are not removed but collapsed into one space with the other whitespace.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from sessionref.contract.errors import SessionReferenceError
from sessionref.contract.projection import message_text
from sessionref.contract.terminal_text import UNSAFE_CHARACTER
from sessionref.contract.uri import parse_session_reference_text

TITLE_BYTE_BUDGET = 256
FALLBACK_TITLE_CHARS = 60

# OSC ... (BEL | ST), DCS/SOS/PM/APC ... ST, CSI ... final byte, and two-character ESC sequences.
# Both the 7-bit (ESC x) and 8-bit (C1) introducers are recognised.
_ESCAPE_SEQUENCE = re.compile(
    r"""
    (?:\x1b\]|\x9d) [^\x07\x1b\x9c]* (?:\x07|\x1b\\|\x9c)?          # OSC
    | (?:\x1b[PX^_]|[\x90\x98\x9e\x9f]) [^\x1b\x9c]* (?:\x1b\\|\x9c)? # DCS, SOS, PM, APC
    | (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]?         # CSI
    | \x1b [\x20-\x2f]* [\x30-\x7e]?                                 # other ESC sequences
    """,
    re.VERBOSE,
)
# Invisible characters beyond the unsafe set: zero-width ones, invisible operators, deprecated
# format controls, BOM, soft hyphen, Mongolian vowel separator and the interlinear annotations
# (most are category Cf and would go anyway; U+180E is not, in current Unicode).
_INVISIBLE = frozenset(
    "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\u206a\u206b\u206c\u206d\u206e\u206f"
    "\ufeff\u00ad\u180e\ufff9\ufffa\ufffb"
)
# Unsafe, but whitespace to a reader: collapsed into one space with the rest (JavaScript whitespace
# too). NEL and the separators U+001C-U+001F are not in this list: they are removed.
_COLLAPSED_TO_SPACE = frozenset("\t\n\v\f\r\u2028\u2029")
_WHITESPACE_RUN = re.compile(r"\s+")
# Printable ASCII and whitespace controls never need the per-character check.
_SUSPECT = re.compile(r"[^\x20-\x7e\t\n\v\f\r]")
FALLBACK_SCAN_CHARS = 4096


def _is_stripped(char: str) -> bool:
    if char in _COLLAPSED_TO_SPACE:
        return False
    if UNSAFE_CHARACTER.fullmatch(char) or char in _INVISIBLE:
        return True
    return unicodedata.category(char) == "Cf"  # any other format character


def _drop_if_stripped(match: re.Match[str]) -> str:
    char = match.group()
    return "" if _is_stripped(char) else char


def _clip_to_bytes(text: str, budget: int) -> str:
    encoded = text.encode("utf-8")
    if len(encoded) <= budget:
        return text
    return encoded[:budget].decode("utf-8", "ignore")


def normalize_title(text: object) -> str | None:
    """Inert one-line title for `text` within `TITLE_BYTE_BUDGET` UTF-8 bytes, or None if nothing is left.

    Escape sequences and control/bidi/invisible characters are removed, whitespace runs become
    one space, the ends are trimmed and the result is cut on a code-point boundary.
    """
    if not isinstance(text, str):
        return None
    without_sequences = _ESCAPE_SEQUENCE.sub("", text)
    visible = _SUSPECT.sub(_drop_if_stripped, without_sequences)
    collapsed = _WHITESPACE_RUN.sub(" ", visible).strip()
    clipped = _clip_to_bytes(collapsed, TITLE_BYTE_BUDGET).rstrip()
    return clipped or None


def is_direct_user_message(message: object) -> bool:
    """True for a user message typed by a person (`source.kind == "user"`)."""
    if not isinstance(message, dict):
        return False
    source = message.get("source")
    return isinstance(source, dict) and source.get("kind") == "user"


def prompt_title(prompt: str, mentioned: Sequence[str] = ()) -> str | None:
    """The title of a session known only by its first prompt: its first line, mentions as their
    labels, at most `FALLBACK_TITLE_CHARS` characters (cut at a word, with "…"), or None.

    A draft's `@[label](uri)` mentions are rewritten to `@label` as sending does
    (`parse_session_reference_text`; a text with a URI that does not decode stays as it is), and
    every `@label` of those and of `mentioned` (the labels of the sessions an already sent prompt
    went with) is shown as `label`. Only for sessions with no `session/title` event: such an
    event (DSH writes one with the prompt's first five words) always wins. See docs/contract.md,
    §3.1.
    """
    scanned = prompt[:FALLBACK_SCAN_CHARS]
    labels = list(mentioned)
    try:
        parsed = parse_session_reference_text(scanned)
    except SessionReferenceError:
        pass
    else:
        scanned = parsed.text
        labels += [reference.label for reference in parsed.references if reference.label]
    for label in sorted(set(labels), key=len, reverse=True):
        if label:
            scanned = scanned.replace("@" + label, label)
    first_line = next((line for line in scanned.splitlines() if line.strip()), "")
    normalized = normalize_title(first_line)
    if normalized is None:
        return None
    if len(normalized) <= FALLBACK_TITLE_CHARS:
        return normalized
    room = normalized[: FALLBACK_TITLE_CHARS - 1]
    at_word = room.rfind(" ")
    cut = room[:at_word] if at_word >= FALLBACK_TITLE_CHARS // 2 else room
    return cut.rstrip(" ,;:.-") + "…"


def fallback_title(message: Mapping[str, Any], mentioned: Sequence[str] = ()) -> str | None:
    """The fallback title of a direct user message (`prompt_title` of its text)."""
    return prompt_title(message_text(message.get("content")), mentioned)


def reference_labels(message: Mapping[str, Any]) -> list[str]:
    """The labels a snapshot message (`source.kind == "session-reference"`) lists; else none."""
    source = message.get("source")
    if not isinstance(source, dict) or source.get("kind") != "session-reference":
        return []
    references = source.get("references")
    if not isinstance(references, list):
        return []
    return [ref["label"] for ref in references if isinstance(ref, dict) and isinstance(ref.get("label"), str)]
