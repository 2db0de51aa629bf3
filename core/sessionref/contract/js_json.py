"""JavaScript-compatible JSON text, tag-safe escaping and UTF-8 byte counts (docs/contract.md §2).

Byte budgets upstream are measured over `JSON.stringify` output as Node prints
it, so this module reproduces that text exactly: insertion key order (with
array-index keys first, as JS objects enumerate them), no spaces, lower-case
`\\u00xx` escapes, lone surrogates escaped as `\\udxxx`, and JS number spelling
(`1e+21`, `1e-7`, `-0` -> `0`, non-finite -> `null`).

Strings are treated as JavaScript strings: a surrogate pair that arrives as two
Python code points is one character (`to_js_string` combines them), and an
unpaired surrogate is a lone UTF-16 unit that UTF-8 encoders turn into U+FFFD.
`js_json_parse` follows the same rule: a high and a low surrogate that meet in
one string literal (raw, escaped, or one of each) are one character, as in
JavaScript.

Nesting is bounded. JSON with more than `MAX_JSON_DEPTH` nested arrays and
objects is refused before it is parsed, with `ContractRangeError` (a
`ValueError`): Python's parser is recursive and would otherwise fail with
`RecursionError` at a depth that depends on the caller's stack. No contract
value comes close (a URI payload is a string, depth 0; a snapshot is depth 3).
JavaScript engines accept deeper input, so for such input only the error's
cause differs from upstream, never its code or message.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate
from json.encoder import encode_basestring
from typing import Any, Final

from sessionref.contract.errors import ContractRangeError, ContractSyntaxError
from sessionref.contract.options import MAX_SAFE_INTEGER

__all__ = [
    "MAX_JSON_DEPTH",
    "UNDEFINED",
    "Undefined",
    "encode_utf8",
    "has_surrogates",
    "js_json_parse",
    "js_json_stringify",
    "json_nesting_depth",
    "json_number_text",
    "json_string_literal",
    "stringify_tag_safe_json",
    "tag_safe_string_bytes",
    "to_js_string",
    "utf8_len",
]

NOT_SERIALIZABLE_MESSAGE: Final = "session-reference data is not JSON-serializable"
MAX_JSON_DEPTH: Final = 128
"""Deepest nesting of arrays and objects `js_json_parse` accepts (see the module docstring)."""
_MAX_ARRAY_INDEX: Final = 4294967294
_SAFE_INTEGER_DIGITS: Final = len(str(MAX_SAFE_INTEGER))
_SURROGATE = re.compile("[\ud800-\udfff]")
# The quoting json.dumps(ensure_ascii=False) applies to a str, without its per-call overhead.
_quote: Callable[[str], str] = encode_basestring


class Undefined:
    """The type of `UNDEFINED`, the stand-in for JavaScript `undefined`."""

    _instance: Undefined | None = None

    def __new__(cls) -> Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __bool__(self) -> bool:
        return False


UNDEFINED: Final = Undefined()


def has_surrogates(text: str) -> bool:
    """True when `text` holds any surrogate code point (paired or lone)."""
    return _SURROGATE.search(text) is not None


def to_js_string(text: str) -> str:
    """`text` with every high+low surrogate code-point pair combined into one astral character.

    Unpaired surrogates are kept as they are. Strings without surrogates are returned unchanged.
    """
    if not has_surrogates(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def utf8_len(text: str) -> int:
    """`Buffer.byteLength(text, "utf8")`: UTF-8 length where a lone surrogate counts 3 bytes."""
    if text.isascii():
        return len(text)
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return len(to_js_string(text).encode("utf-8", "surrogatepass"))


def encode_utf8(text: str) -> bytes:
    """`TextEncoder().encode(text)`: UTF-8 bytes with every lone surrogate replaced by U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", to_js_string(text)).encode("utf-8")


def _escape_lone_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_string_literal(text: str) -> str:
    """`JSON.stringify(text)` for a string: quoted, with JS escapes and `\\udxxx` for lone surrogates."""
    literal = _quote(text)
    if not literal.isascii() and has_surrogates(literal):
        literal = _SURROGATE.sub(_escape_lone_surrogate, _quote(to_js_string(text)))
    return literal


def tag_safe_string_bytes(text: str) -> int:
    """UTF-8 byte length of the tag-safe JSON literal of `text` (each `<` costs 6 bytes)."""
    literal = _quote(text)
    extra = 5 * text.count("<")
    if literal.isascii():
        return len(literal) + extra
    try:
        return len(literal.encode("utf-8")) + extra
    except UnicodeEncodeError:
        return utf8_len(json_string_literal(text)) + extra


def json_number_text(number: int | float) -> str:
    """How `JSON.stringify` spells a number: shortest round-trip digits in JS layout, `null` if not finite."""
    if isinstance(number, int):
        if -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
            return str(number)
        try:
            number = float(number)
        except OverflowError:
            return "null"
    if not math.isfinite(number):
        return "null"
    if number == 0:
        return "0"
    mantissa, _, exponent_text = repr(abs(number)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    all_digits = whole + fraction
    point = len(whole) + (int(exponent_text) if exponent_text else 0)
    stripped = all_digits.lstrip("0")
    point -= len(all_digits) - len(stripped)
    digits = stripped.rstrip("0")
    sign = "-" if number < 0 else ""
    count = len(digits)
    if count <= point <= 21:
        body = digits + "0" * (point - count)
    elif 0 < point <= 21:
        body = f"{digits[:point]}.{digits[point:]}"
    elif -6 < point <= 0:
        body = "0." + "0" * (-point) + digits
    else:
        exponent = point - 1
        exponent_sign = "+" if exponent >= 0 else "-"
        head = digits if count == 1 else f"{digits[0]}.{digits[1:]}"
        body = f"{head}e{exponent_sign}{abs(exponent)}"
    return sign + body


def _is_array_index(key: str) -> bool:
    if not (key.isascii() and key.isdigit()):
        return False
    if len(key) > 1 and key[0] == "0":
        return False
    return int(key) <= _MAX_ARRAY_INDEX


def _js_key_order(keys: list[str]) -> list[str]:
    """Keys in the order a JS object enumerates them: array indices ascending, then insertion order."""
    indices = [key for key in keys if _is_array_index(key)]
    if not indices:
        return keys
    others = [key for key in keys if not _is_array_index(key)]
    return sorted(indices, key=int) + others


def _object_key(key: object) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, int) and not isinstance(key, bool):
        return str(key)
    raise TypeError(f"object key of type {type(key).__name__} is not JSON-serializable")


def _write(value: Any, out: list[str], active: set[int]) -> bool:
    """Append the JSON text of `value` to `out`; False (and nothing appended) for an undefined value."""
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(json_string_literal(value))
    elif isinstance(value, int | float):
        out.append(json_number_text(value))
    elif isinstance(value, Undefined):
        return False
    elif isinstance(value, Mapping):
        _write_object(value, out, active)
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        _write_array(value, out, active)
    else:
        raise TypeError(f"value of type {type(value).__name__} is not JSON-serializable")
    return True


def _enter(value: object, active: set[int]) -> None:
    if id(value) in active:
        raise TypeError("cannot serialize a circular structure to JSON")
    active.add(id(value))


def _write_object(value: Mapping[Any, Any], out: list[str], active: set[int]) -> None:
    _enter(value, active)
    keyed = {_object_key(key): item for key, item in value.items()}
    out.append("{")
    first = True
    for key in _js_key_order(list(keyed)):
        mark = len(out)
        if not first:
            out.append(",")
        out.append(json_string_literal(key))
        out.append(":")
        if _write(keyed[key], out, active):
            first = False
        else:
            del out[mark:]
    out.append("}")
    active.discard(id(value))


def _write_array(value: Sequence[Any], out: list[str], active: set[int]) -> None:
    _enter(value, active)
    out.append("[")
    for index, item in enumerate(value):
        if index:
            out.append(",")
        if not _write(item, out, active):
            out.append("null")
    out.append("]")
    active.discard(id(value))


def js_json_stringify(value: Any) -> str | Undefined:
    """`JSON.stringify(value)`: the exact Node text, or `UNDEFINED` when `value` is undefined.

    Mappings are objects (undefined members omitted), sequences are arrays
    (undefined items become `null`). Raises `TypeError` for values JSON cannot
    hold (other Python types, circular structures).
    """
    out: list[str] = []
    if not _write(value, out, set()):
        return UNDEFINED
    return "".join(out)


def stringify_tag_safe_json(value: Any) -> str:
    """`JSON.stringify(value)` with every `<` written as `\\u003c`, so data can never open or close a tag.

    Raises `TypeError("session-reference data is not JSON-serializable")` when
    there is no JSON text (an undefined value, or anything JSON cannot hold).
    """
    try:
        text = js_json_stringify(value)
    except (TypeError, RecursionError) as error:
        raise TypeError(NOT_SERIALIZABLE_MESSAGE) from error
    if isinstance(text, Undefined):
        raise TypeError(NOT_SERIALIZABLE_MESSAGE)
    return text.replace("<", "\\u003c")


def _object_from_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for key, item in pairs:
        merged[key] = item
    return {key: merged[key] for key in _js_key_order(list(merged))}


def _number_from_int_text(text: str) -> int | float:
    if len(text) <= _SAFE_INTEGER_DIGITS + 1:  # + 1 for a minus sign; longer is never safe
        number = int(text)
        if -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
            return number
    return float(text)  # like JavaScript, any length: rounded, or infinite past the double range


def _reject_constant(name: str) -> Any:
    raise ContractSyntaxError(f"Unexpected token {name[0]} in JSON")


# A string literal, or an unterminated one running to the end; possessive, so the scan stays linear.
_JSON_STRING_LITERAL = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]++")
_BRACKET_STEP: Final = {"[": 1, "{": 1, "]": -1, "}": -1}
# A `\\uXXXX` escape of a surrogate, with the escapes before it consumed so `\\\\ud800` is not one.
_ESCAPE = re.compile(r"\\(?:u([dD][89a-fA-F][0-9a-fA-F]{2})|.)", re.DOTALL)


def json_nesting_depth(text: str) -> int:
    """How deep arrays and objects nest in JSON `text`, never less than the parser would go.

    Brackets inside string literals do not count. For text that is not JSON
    the answer is an upper bound of how deep a parser gets before it fails.
    Linear in the length of `text`.
    """
    if "[" not in text and "{" not in text:
        return 0
    brackets = _NOT_A_BRACKET.sub("", _JSON_STRING_LITERAL.sub("", text))
    return max(0, max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0))


def _decode_surrogate_escapes(text: str) -> str:
    """`text` with each `\\udXXX` surrogate escape written as the raw code point it stands for."""

    def decode(match: re.Match[str]) -> str:
        hex_digits = match.group(1)
        return match.group() if hex_digits is None else chr(int(hex_digits, 16))

    return _ESCAPE.sub(decode, text)


def js_json_parse(text: str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`JSON.parse(text)`: JS object key order, last duplicate wins, big integers rounded to doubles.

    Strings are JavaScript strings: a high and a low surrogate next to each
    other in one literal become one character however each was written.
    Raises `ContractSyntaxError` (code `JSON_INVALID`) for text that is not
    JSON, including `NaN`/`Infinity` which Python would accept, and
    `ContractRangeError` (code `JSON_TOO_DEEP`) for nesting deeper than
    `max_depth`. Both are `ValueError`s and `CodedError`s.
    """
    if text.count("[") + text.count("{") > max_depth and json_nesting_depth(text) > max_depth:
        raise ContractRangeError(f"JSON nested deeper than {max_depth} levels")
    if has_surrogates(text):
        if "\\" in text:
            text = _decode_surrogate_escapes(text)
        text = to_js_string(text)
    try:
        return json.loads(
            text,
            object_pairs_hook=_object_from_pairs,
            parse_int=_number_from_int_text,
            parse_constant=_reject_constant,
        )
    except ContractSyntaxError:
        raise
    except ValueError as error:  # json.JSONDecodeError, or an integer past Python's digit limit
        raise ContractSyntaxError(str(error)) from None
