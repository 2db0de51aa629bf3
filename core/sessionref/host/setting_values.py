"""Parsers of one setting's value, as read from an environment variable or from `config.toml`.

Each takes a raw value (an env string or a TOML value) and returns it typed. Every failure is a
`BadValue` with the reason (the caller adds the key and where it came from, and raises
SETTINGS_INVALID); a value echoed in a message is cut to `SHOWN_VALUE_CHARS` characters, so a
5,000-digit or 10 MB value never becomes a message that size.
"""

from __future__ import annotations

import math
import re
from typing import Final
from urllib.parse import urlsplit

from pydantic import SecretStr

from sessionref.contract.excerpts import bounded_excerpt
from sessionref.contract.options import MAX_SAFE_INTEGER, PLACEMENTS, Placement
from sessionref.contract.terminal_text import has_unsafe_characters
from sessionref.models.base import DEFAULT_BASE_URL

SHOWN_VALUE_CHARS: Final = 80
"""At most this many characters of a bad value (head…tail) are quoted in an error message."""
SHOWN_PATH_CHARS: Final = 512
"""Likewise for a configuration path that could not be read (a real path is shorter than this)."""
_UNDECODABLE = re.compile("[\ud800-\udfff]")  # how os.environ carries bytes that are not UTF-8


class BadValue(ValueError):
    """Raised by a parser with the reason; the caller adds the key and its source."""


def shown_value(value: object) -> str:
    """`repr(value)` cut to SHOWN_VALUE_CHARS characters."""
    try:
        shown = repr(value)
    except ValueError:  # an integer past Python's int-to-text limit
        return "an integer too long to show"
    return bounded_excerpt(shown, SHOWN_VALUE_CHARS)


def parse_text(value: object) -> str:
    """A string, stripped; not a string or not UTF-8 text is refused."""
    if not isinstance(value, str):
        raise BadValue("must be a string")
    if _UNDECODABLE.search(value):
        raise BadValue("must be UTF-8 text")
    return value.strip()


def parse_secret(value: object) -> SecretStr | None:
    """An API key: no spaces or control characters; empty means none."""
    text = parse_text(value)
    if has_unsafe_characters(text) or " " in text:
        raise BadValue("must not contain spaces or control characters")
    return SecretStr(text) if text else None


def parse_base_url(value: object) -> str:
    """An http(s) URL with a host, without its trailing slashes."""
    text = parse_text(value)
    try:
        parts = urlsplit(text)
        host = parts.hostname
    except ValueError:  # e.g. an unclosed IPv6 bracket: "http://[::1"
        host = None
    if host is None or parts.scheme not in ("http", "https") or has_unsafe_characters(text) or " " in text:
        raise BadValue(f"must be an http(s) URL such as {DEFAULT_BASE_URL}, got {shown_value(text)}")
    return text.rstrip("/")


def parse_model_id(value: object) -> str:
    """A model id: non-empty, no spaces or control characters."""
    text = parse_text(value)
    if not text or has_unsafe_characters(text) or any(ch.isspace() for ch in text):
        raise BadValue(f"must be a model id without spaces, got {shown_value(text)}")
    return text


def parse_positive_int(value: object) -> int:
    """A whole number from 1 to 2**53 - 1 (the contract's safe integers); ASCII digits and `_` in strings."""
    if isinstance(value, bool):
        raise BadValue("must be a positive integer")
    too_large = f"must be a positive integer up to {MAX_SAFE_INTEGER}"
    if isinstance(value, str):
        text = value.strip().replace("_", "")
        if not (text.isascii() and text.isdigit()):
            raise BadValue(f"must be a positive integer, got {shown_value(value.strip())}")
        if len(text.lstrip("0")) > len(str(MAX_SAFE_INTEGER)):  # never converted: Python limits int()
            raise BadValue(f"{too_large}, got {shown_value(value.strip())}")
        value = int(text)
    if not isinstance(value, int) or value < 1:
        raise BadValue(f"must be a positive integer, got {shown_value(value)}")
    if value > MAX_SAFE_INTEGER:
        raise BadValue(f"{too_large}, got {shown_value(value)}")
    return value


MAX_SETTING_SECONDS: Final = 86_400.0
"""The longest time a setting may name (a day): beyond it a timer overflows or never fires."""


def parse_seconds(value: object, *, allow_zero: bool, at_most: float = MAX_SETTING_SECONDS) -> float:
    """A finite number of seconds above zero (or zero too, with `allow_zero`) up to `at_most`, from a
    number or text."""
    if isinstance(value, bool):
        raise BadValue("must be a number of seconds")
    number: float
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise BadValue(f"must be a number of seconds, got {shown_value(value.strip())}") from None
    elif isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond the float range
            number = math.inf
    else:
        raise BadValue("must be a number of seconds")
    if not math.isfinite(number) or number < 0 or (number == 0 and not allow_zero):
        bound = "zero or more" if allow_zero else "more than zero"
        raise BadValue(f"must be a finite number of seconds, {bound}, got {shown_value(value)}")
    if number > at_most:
        raise BadValue(f"must be at most {at_most:g} seconds, got {shown_value(value)}")
    return number


_TRUE_WORDS: Final = frozenset({"1", "true", "yes", "on"})
_FALSE_WORDS: Final = frozenset({"0", "false", "no", "off"})


def parse_boolean(value: object) -> bool:
    """A TOML boolean, or one of the words 1/0, true/false, yes/no, on/off (any case)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
        shown = value.strip()[:40]
        raise BadValue(f"must be true or false (or 1/0, yes/no, on/off), got {shown!r}")
    raise BadValue("must be true or false")


def parse_placement(value: object) -> Placement:
    """`before` or `after` (any case)."""
    text = parse_text(value).lower()
    for placement in PLACEMENTS:
        if text == placement:
            return placement
    raise BadValue(f'must be "before" or "after", got {shown_value(text)}')
