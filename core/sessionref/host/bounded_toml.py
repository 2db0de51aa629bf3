"""Parse a TOML file someone else wrote (``config.toml``) within documented bounds.

``tomllib`` is recursive: an array or inline table nested a few hundred levels
deep raises ``RecursionError`` at a depth that depends on the caller's stack,
and an integer literal longer than Python's int-string limit raises a bare
``ValueError``. This module refuses such files with one exception type,
:class:`TomlRejected`, whose message says why in words fit for a person:

* a file larger than ``MAX_TOML_BYTES`` (1 MiB; a configuration is a few hundred bytes);
* text that is not UTF-8;
* arrays, inline tables and table headers nested deeper than ``MAX_TOML_DEPTH`` (32),
  checked by a linear scan before ``tomllib`` sees the text;
* anything ``tomllib`` rejects, and integer literals too long for Python to convert.
"""

from __future__ import annotations

import re
import tomllib
from itertools import accumulate
from typing import Any, Final

__all__ = ["MAX_TOML_BYTES", "MAX_TOML_DEPTH", "TomlRejected", "parse_bounded_toml", "toml_nesting_depth"]

MAX_TOML_BYTES: Final = 1024 * 1024
"""Largest TOML file accepted, in bytes."""
MAX_TOML_DEPTH: Final = 32
"""Deepest nesting of arrays, inline tables and table-header brackets accepted."""

# Strings and comments hide brackets. Each alternative also takes an unterminated
# string to the end of the text, so the scan stays linear on any input.
_HIDDEN = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*+(?:"""|\Z)'
    r"|'''(?:[^']|'(?!''))*+(?:'''|\Z)"
    r'|"(?:[^"\\\n]|\\.)*+(?:"|$)'
    r"|'[^'\n]*+(?:'|$)"
    r"|#[^\n]*+",
    re.DOTALL | re.MULTILINE,
)
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]++")
_BRACKET_STEP: Final = {"[": 1, "{": 1, "]": -1, "}": -1}
_LONG_DIGIT_RUN = re.compile(r"[0-9_]{4000,}")


class TomlRejected(ValueError):
    """A TOML text refused for a reason stated in the message (too large, not UTF-8, too deep, invalid)."""


def toml_nesting_depth(text: str) -> int:
    """How deep brackets and braces nest in TOML `text`, outside strings and comments (linear time)."""
    if "[" not in text and "{" not in text:
        return 0
    brackets = _NOT_A_BRACKET.sub("", _HIDDEN.sub("", text))
    return max(0, max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0))


def parse_bounded_toml(raw: bytes) -> dict[str, Any]:
    """The table in `raw` TOML bytes; :class:`TomlRejected` when a bound is exceeded or it is not TOML."""
    if len(raw) > MAX_TOML_BYTES:
        raise TomlRejected(f"is larger than {MAX_TOML_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TomlRejected("is not UTF-8 text") from None
    if toml_nesting_depth(text) > MAX_TOML_DEPTH:
        raise TomlRejected(f"nests arrays or tables deeper than {MAX_TOML_DEPTH} levels")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise TomlRejected(f"is not valid TOML: {error}") from None
    except RecursionError:  # the scan above is an over-estimate for real TOML; kept as a last resort
        raise TomlRejected(f"nests arrays or tables deeper than {MAX_TOML_DEPTH} levels") from None
    except ValueError:  # an integer literal longer than Python converts
        raise TomlRejected(f"is not valid TOML: {_too_long_integer(text)}") from None


def _too_long_integer(text: str) -> str:
    """Where the integer literal that Python refused to convert is, in words."""
    found = _LONG_DIGIT_RUN.search(text)
    where = "" if found is None else f" (line {text.count(chr(10), 0, found.start()) + 1})"
    return f"an integer literal is too long{where}; TOML integers are 64-bit"
