"""Terminal-safe text: the one definition of the characters data may never put on a terminal raw.

Everything sessionref shows from data — titles, ids, cwds, message text, error messages that quote
input — passes through here first (docs/architecture.md). The characters below are *unsafe*:

* **C0 controls, U+0000–U+001F.** ESC (U+001B) starts escape sequences that recolour the screen,
  move the cursor, set the window title or write the clipboard (OSC 52); CR and BS overwrite what
  is already shown; BEL rings; LF and TAB break a one-line layout.
* **DEL, U+007F, and the C1 controls, U+0080–U+009F.** A terminal in 8-bit mode reads U+009B as
  CSI and U+009D as OSC, the same sequences as ESC `[` and ESC `]` in one character.
* **Bidirectional controls**: U+061C (Arabic letter mark), U+200E and U+200F (left-to-right and
  right-to-left marks), U+202A–U+202E (embeddings and overrides) and U+2066–U+2069 (isolates).
  They reorder how a line is displayed, so what is shown is not what is there ("Trojan Source").
* **U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR.** Some terminals and toolkits break a
  line there, so one line of data could pose as two.
* **Lone surrogates, U+D800–U+DFFF.** A Python string can hold them (a lone `\\ud800` is valid
  JSON) but no UTF-8 stream can: printing one raises `UnicodeEncodeError`.

Every other character is shown as it is, including zero-width and other invisible format
characters: they cannot drive a terminal, and stripping them would change emoji sequences.
(Titles are normalised more strictly, in `sessionref.contract.titles`, on top of this set.)

What the functions promise:

* `inert(text)`: one line of plain text where each unsafe character is spelled out, `\\xNN` for
  C0, DEL and C1 (so LF is `\\x0a`), `\\uNNNN` for the rest. Markup such as `[bold]` is left as
  literal characters: it stays harmless only if the caller renders the result as plain text
  (`rich.text.Text`, a prompt_toolkit plain fragment), never as markup.
* `inert_lines(text)`: `inert` per line, keeping the line breaks (`\\n`), for multi-line bodies.
* `terminal_safe_json(value)`: JSON text that decodes to the same value, with every unsafe
  character that `json.dumps` would write raw `\\u`-escaped; other non-ASCII text stays readable
  (an indented document keeps its line breaks).
* `has_unsafe_characters(text)`: whether any unsafe character is present (to refuse a value).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = [
    "UNSAFE_CHARACTER",
    "has_unsafe_characters",
    "inert",
    "inert_lines",
    "terminal_safe_json",
]

UNSAFE_CHARACTER: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f"  # C0 controls, DEL, C1 controls
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidirectional controls
    "\u2028\u2029"  # line and paragraph separators
    "\ud800-\udfff]"  # surrogates (only a lone one can be in a str)
)
"""Matches one unsafe character (the set described in the module docstring)."""

_LAST_BYTE_ESCAPED: Final = 0x9F
"""C0, DEL and C1 (up to U+009F) are spelled `\\xNN`; higher code points `\\uNNNN`."""


def _spelled(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= _LAST_BYTE_ESCAPED else f"\\u{code:04x}"


def _json_escaped(match: re.Match[str]) -> str:
    char = match.group()
    # json.dumps already escaped every C0 control inside a string: one here is layout (indent's \n).
    return char if ord(char) < 0x20 else f"\\u{ord(char):04x}"


def has_unsafe_characters(text: str) -> bool:
    """True when `text` holds any character that must not reach a terminal raw."""
    return UNSAFE_CHARACTER.search(text) is not None


def inert(text: str) -> str:
    """`text` as one line with every unsafe character spelled out (`\\x1b`, `\\x0a`, `\\u202e`, `\\ud800`).

    The result is always encodable as UTF-8 and never moves the cursor, changes a colour or
    reorders the line. Text without unsafe characters is returned as it is.
    """
    # str.isprintable() is False for every unsafe character (categories Cc, Cf, Zl, Zp, Cs), so
    # the usual text skips the regex at C speed; a non-printable that is safe (e.g. U+00A0) is
    # simply checked by the regex and kept.
    if text.isprintable():
        return text
    return UNSAFE_CHARACTER.sub(_spelled, text)


def inert_lines(text: str) -> str:
    """`inert` applied to each line of `text`; the `\\n` between lines stay line breaks."""
    return "\n".join(inert(line) for line in text.split("\n"))


def terminal_safe_json(value: Any, *, indent: int | None = 2, compact: bool = False) -> str:
    """`value` as JSON text safe to print: non-ASCII kept, every unsafe character `\\u`-escaped.

    `json.dumps` already escapes C0 controls inside strings; DEL, C1, bidirectional controls, the
    separators and lone surrogates are escaped here, so the text parses back to exactly `value`.
    The only raw control left is the line break between lines of an indented document. `compact`
    drops the spaces after separators (one dense line; implies no indent).
    """
    if compact:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    else:
        text = json.dumps(value, ensure_ascii=False, indent=indent)
    return UNSAFE_CHARACTER.sub(_json_escaped, text)
