"""Strings behave as JavaScript's UTF-16 strings wherever the contract builds them from pieces.

The model below represents a JavaScript string as a list of UTF-16 code units
and implements each operation on code units, as the engine does: the label
unescape (`\\X` -> `X`), the text rewrite (`@` + label in place of each match),
`JSON.stringify` of a string and `JSON.parse` of a string literal. Concatenating
unit lists makes a high surrogate that ends one piece and a low surrogate that
starts the next one character, which is what the implementation must reproduce
on Python's code-point strings.
"""

from __future__ import annotations

import struct

from hypothesis import example, given, settings
from hypothesis import strategies as st
from mention_regex_reference import regex_matches
from sessionref.contract.errors import SessionReferenceError
from sessionref.contract.js_json import js_json_parse, stringify_tag_safe_json, to_js_string
from sessionref.contract.text_retainer import head_tail_retain, truncate_with_notice
from sessionref.contract.uri import (
    decode_session_reference_uri,
    encode_session_reference_uri,
    find_mention_spans,
    format_session_reference_mention,
    parse_session_reference_text,
)

HIGH, LOW = "\ud83d", "\ude00"  # the halves of U+1F600
Units = list[int]


def units(text: str) -> Units:
    """The UTF-16 code units of a Python string (a lone surrogate is its own unit)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return list(struct.unpack(f"<{len(data) // 2}H", data))


def from_units(code_units: Units) -> str:
    """The Python string a JavaScript string of these units is: valid pairs become one character."""
    return struct.pack(f"<{len(code_units)}H", *code_units).decode("utf-16-le", "surrogatepass")


def code_point_length(code_units: Units, index: int) -> int:
    """How many units the code point at `index` takes (2 for a valid pair), as the `u` flag reads it."""
    pair = (
        index + 1 < len(code_units)
        and 0xD800 <= code_units[index] <= 0xDBFF
        and 0xDC00 <= code_units[index + 1] <= 0xDFFF
    )
    return 2 if pair else 1


def js_unescape_label(raw: Units) -> Units:
    """`raw.replace(/\\\\(.)/gsu, "$1")` on code units."""
    out: Units = []
    index = 0
    while index < len(raw):
        if raw[index] == ord("\\") and index + 1 < len(raw):
            width = code_point_length(raw, index + 1)
            out += raw[index + 1 : index + 1 + width]
            index += 1 + width
        else:
            out.append(raw[index])
            index += 1
    return out


def js_parse(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The contract's parse on code units: matches from the regex, the output built by concatenating units."""
    js_text = to_js_string(text)
    out: Units = []
    references = []
    position = 0
    for start, end, raw_label, uri in regex_matches(js_text):
        session_id = decode_session_reference_uri(uri)
        label = units(session_id) if raw_label is None else js_unescape_label(units(raw_label))
        out += units(js_text[position:start]) + units("@") + label
        references.append((session_id, from_units(label)))
        position = end
    out += units(js_text[position:])
    return from_units(out), references


_SHORT_ESCAPES = {0x22: '\\"', 0x5C: "\\\\", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}


def js_stringify_string(code_units: Units) -> str:
    """`JSON.stringify(string)` (ES2019 well-formed): pairs raw, lone surrogates as lower-case escapes."""
    out = ['"']
    index = 0
    while index < len(code_units):
        unit = code_units[index]
        if code_point_length(code_units, index) == 2:
            out.append(from_units(code_units[index : index + 2]))
            index += 2
            continue
        if unit in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[unit])
        elif unit < 0x20 or 0xD800 <= unit <= 0xDFFF:
            out.append(f"\\u{unit:04x}")
        else:
            out.append(chr(unit))
        index += 1
    out.append('"')
    return "".join(out)


# Texts where halves of a pair are likely to meet: around escapes, at label ends, after bare URIs.
ID_WITH_HIGH_END = encode_session_reference_uri("id" + HIGH)
ID_WITH_LOW_START = encode_session_reference_uri(LOW + "id")
PIECES = st.sampled_from(
    [
        HIGH, LOW, "\ud800", "\udfff", "\U0001f600", "\\", "@[", "]", "](", ")", "x", " ",
        "dsh-session:ImFiYyI", ID_WITH_HIGH_END, ID_WITH_LOW_START,
    ]
)  # fmt: skip
TEXT = st.lists(PIECES, max_size=30).map("".join)


@settings(max_examples=1000, deadline=None)
@given(TEXT)
@example(f"@[\\{HIGH}\\{LOW}](dsh-session:ImFiYyI)")
@example(f"@[a\\{HIGH}{LOW}](dsh-session:ImFiYyI)")
@example(f"@[a{HIGH}](dsh-session:ImFiYyI){LOW}")
@example(f"{ID_WITH_HIGH_END}{LOW}")
@example(f"{HIGH}{ID_WITH_LOW_START}")
def test_parse_matches_javascript_on_code_units(text: str) -> None:
    try:
        expected_text, expected_references = js_parse(text)
    except SessionReferenceError:
        return  # which URI fails, and how, is the subject of the scanner's own tests
    parsed = parse_session_reference_text(text)
    assert parsed.text == expected_text
    assert [(ref.session_id, ref.label) for ref in parsed.references] == expected_references
    # The bytes stringify emits for the rewritten text and each label are JavaScript's.
    assert stringify_tag_safe_json(parsed.text) == js_stringify_string(units(expected_text)).replace(
        "<", "\\u003c"
    )
    for reference, (_, label) in zip(parsed.references, expected_references, strict=True):
        assert stringify_tag_safe_json(reference.label) == js_stringify_string(units(label))
    spans = find_mention_spans(text)
    assert [span.label for span in spans] == [label for _, label in expected_references]


def test_escaped_halves_of_a_pair_unescape_to_one_character() -> None:
    parsed = parse_session_reference_text(f"@[\\{HIGH}\\{LOW}](dsh-session:ImFiYyI)")
    assert parsed.references[0].label == "\U0001f600"
    assert parsed.text == "@\U0001f600"
    assert stringify_tag_safe_json(parsed.text) == '"@\U0001f600"'


def test_a_label_ending_in_a_high_half_pairs_with_the_text_after_the_mention() -> None:
    parsed = parse_session_reference_text(f"@[a{HIGH}](dsh-session:ImFiYyI){LOW}!")
    assert parsed.references[0].label == "a" + HIGH  # on its own the label keeps its lone half
    assert parsed.text == "@a\U0001f600!"
    bare = parse_session_reference_text(f"{ID_WITH_HIGH_END}{LOW}")
    assert bare.text == "@id\U0001f600"


def test_span_positions_still_index_the_text_as_given() -> None:
    text = f"{HIGH}{LOW} @[\\{HIGH}\\{LOW}](dsh-session:ImFiYyI) {HIGH}{LOW}"
    [span] = find_mention_spans(text)
    assert text[span.start : span.end] == f"@[\\{HIGH}\\{LOW}](dsh-session:ImFiYyI)"
    assert span.label == "\U0001f600"


def test_format_writes_a_label_given_as_two_halves_as_one_character() -> None:
    mention = format_session_reference_mention({"sessionId": "abc", "label": HIGH + LOW})
    assert mention == "@[\U0001f600](dsh-session:ImFiYyI)"
    mention.encode("utf-8")


# JSON string literals from pieces: raw characters (a lone half included) or \uXXXX escapes of any unit.
ESCAPED_UNITS = [0xD83D, 0xDE00, 0xD800, 0xDFFF, 0x41, 0x0A]
LITERAL_PIECE = st.one_of(
    st.sampled_from([HIGH, LOW, "\U0001f600", "a", "<"]).map(lambda raw: (raw, units(raw))),
    st.sampled_from(ESCAPED_UNITS).map(lambda unit: (f"\\u{unit:04x}", [unit])),
    st.sampled_from([0xD83D, 0xDE00]).map(lambda unit: (f"\\u{unit:04X}", [unit])),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(LITERAL_PIECE, max_size=12))
@example([("\\ud83d", [0xD83D]), (LOW, [0xDE00])])
@example([(HIGH, [0xD83D]), ("\\ude00", [0xDE00])])
def test_json_parse_joins_halves_however_each_is_written(pieces: list[tuple[str, Units]]) -> None:
    literal = '"' + "".join(spelling for spelling, _ in pieces) + '"'
    expected = from_units([unit for _, code_units in pieces for unit in code_units])
    assert js_json_parse(literal) == expected
    assert js_json_parse("{" + literal + ":[" + literal + "]}") == {expected: [expected]}


def test_json_parse_keeps_an_escaped_backslash_before_u_literal() -> None:
    assert js_json_parse(f'"\\\\ud83d{LOW}"') == "\\ud83d" + LOW


RETAINED_TEXT = st.lists(st.sampled_from([HIGH, LOW, "\U0001f600", "a", "\ufeff"]), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(RETAINED_TEXT, st.data())
def test_retained_pieces_never_hold_a_surrogate_so_joining_is_safe(text: str, data: st.DataObject) -> None:
    # Each piece is decoded from UTF-8 on its own, where a surrogate cannot occur (TextEncoder wrote U+FFFD).
    head = data.draw(st.integers(0, 40))
    tail = data.draw(st.integers(0, 40))
    retained = head_tail_retain(text, head, tail)
    assert not any("\ud800" <= character <= "\udfff" for character in retained.text)
    shortened = truncate_with_notice(text, data.draw(st.integers(0, 200)))
    if shortened.omitted_bytes:
        assert not any("\ud800" <= character <= "\udfff" for character in shortened.text)
