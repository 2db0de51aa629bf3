"""TOML from a file someone else wrote: refused with a reason, never a RecursionError or bare ValueError."""

from __future__ import annotations

import pytest
from sessionref.host.bounded_toml import (
    MAX_TOML_BYTES,
    MAX_TOML_DEPTH,
    TomlRejected,
    parse_bounded_toml,
    toml_nesting_depth,
)


def rejected(text: str | bytes) -> str:
    with pytest.raises(TomlRejected) as raised:
        parse_bounded_toml(text if isinstance(text, bytes) else text.encode())
    return str(raised.value)


def test_a_plain_configuration_parses() -> None:
    text = '[model]\nmodel = "x"  # a comment with [[brackets\n[references]\nmaxReferences = 2\n'
    assert parse_bounded_toml(text.encode()) == {"model": {"model": "x"}, "references": {"maxReferences": 2}}


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("a = 1", 0),
        ("[model]\na = [1, [2]]", 2),
        ("[[list]]\n", 2),
        ("a = {b = {c = [1]}}", 3),
        ("a = \"[[[[[\" # ]]]\nb = '{{{'", 0),
        ("a = \"\"\"\n[[[\n\"\"\"\nb = '''\n{{{\n'''", 0),
        ('a = "\\"[[" \nb = [1]', 1),
        ('a = "unterminated [[[\nb = [1]', 1),
    ],
)
def test_nesting_is_measured_outside_strings_and_comments(text: str, depth: int) -> None:
    assert toml_nesting_depth(text) == depth


@pytest.mark.parametrize("opening", ["[", "{b = "])
def test_nesting_past_the_bound_is_refused(opening: str) -> None:
    closing = "]" if opening == "[" else "}"
    at_bound = "a = " + opening * MAX_TOML_DEPTH + "1" + closing * MAX_TOML_DEPTH
    parse_bounded_toml(at_bound.encode())
    for depth in (MAX_TOML_DEPTH + 1, 5_000):
        text = "a = " + opening * depth + "1" + closing * depth
        assert rejected(text) == f"nests arrays or tables deeper than {MAX_TOML_DEPTH} levels"
    assert rejected("a = " + opening * 100_000).startswith("nests")


def test_size_encoding_and_syntax_are_refused_with_a_reason() -> None:
    assert rejected(b"#" * (MAX_TOML_BYTES + 1)) == f"is larger than {MAX_TOML_BYTES} bytes"
    assert rejected(b"a = '\xff'") == "is not UTF-8 text"
    assert rejected("a = ").startswith("is not valid TOML: ")


def test_an_integer_python_cannot_convert_is_invalid_toml_naming_its_line() -> None:
    message = rejected("[model]\ncontext_window = " + "9" * 5000)
    assert message == "is not valid TOML: an integer literal is too long (line 2); TOML integers are 64-bit"
    assert len(message) < 200
