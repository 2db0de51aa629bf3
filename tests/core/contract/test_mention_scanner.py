"""The linear mention scan finds exactly what the contract's regular expression finds.

The reference model is the regex itself (`mention_regex_reference.py`), run by
Python's backtracking engine, which tries the alternatives in order at each
position like JavaScript's. Texts are drawn from a small adversarial alphabet
so that labels, escapes, URI runs and bare URIs collide often.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from mention_regex_reference import regex_matches, regex_parse
from sessionref.contract.errors import ErrorCode, SessionReferenceError
from sessionref.contract.js_json import to_js_string
from sessionref.contract.mention_scanner import scan_mentions
from sessionref.contract.uri import (
    encode_session_reference_uri,
    find_mention_spans,
    parse_session_reference_text,
)

ABC = "dsh-session:ImFiYyI"
JS_SPACES = ["\t", " ", "\u00a0", "\u2000", "\u3000", "\ufeff", "\u000b"]
LINE_TERMINATORS = ["\n", "\r", "\u2028", "\u2029"]
NOT_JS_SPACE = ["\x85", "\x1c"]  # Python's \s matches these, JavaScript's does not
PIECES = st.sampled_from(
    [
        "@", "[", "]", "(", ")", "\\", "dsh-session:", ":", ".", "x",
        "A", "a", "0", "-", "_", "ImFiYyI", "IiI", "IiJ", "@[", "](", "\\]", "\\\\",
        "](dsh-session:", ABC, "\U0001f600", "\ud83d", "\ude00", "\ud800", "\udfff",
        *JS_SPACES, *LINE_TERMINATORS, *NOT_JS_SPACE,
    ]
)  # fmt: skip
ADVERSARIAL_TEXT = st.lists(PIECES, max_size=48).map("".join)
SETTINGS = settings(max_examples=1500, deadline=None)


def scanned(text: str) -> list[tuple[int, int, str | None, str]]:
    return [tuple(match) for match in scan_mentions(to_js_string(text))]


@SETTINGS
@given(ADVERSARIAL_TEXT)
@example("@[@[x](dsh-session:ImFiYyI)")
@example("@[\\](dsh-session:ImFiYyI)@[x](dsh-session:ImFiYyI)")
@example("@[a\\\n@[b](dsh-session:ImFiYyI)")
@example("@[a\\\\](dsh-session:ImFiYyI)")
@example("@[a\\\\\\](dsh-session:ImFiYyI)](dsh-session:ImFiYyI)")
@example("@[](dsh-session:@[](dsh-session:ImFiYyI)")
@example("dsh-session:A@[x](dsh-session:ImFiYyI)dsh-session:B")
@example("@[x](dsh-session:ImFiYyI\ufeff)@[y](dsh-session:ImFiYyI)")
@example("\\@[x](dsh-session:ImFiYyI)")
@example("@[\u2028\\\u2028](dsh-session:ImFiYyI)")
def test_the_linear_scan_finds_what_the_regex_finds(text: str) -> None:
    js_text = to_js_string(text)
    assert scanned(text) == regex_matches(js_text)


@settings(max_examples=800, deadline=None)
@given(ADVERSARIAL_TEXT)
def test_parse_and_spans_agree_with_the_regex_implementation(text: str) -> None:
    try:
        expected_text, expected_refs = regex_parse(text)
    except SessionReferenceError as expected:
        with pytest.raises(SessionReferenceError) as raised:
            parse_session_reference_text(text)
        assert raised.value.message == expected.message
        assert any(not span.valid for span in find_mention_spans(text))
        return
    parsed = parse_session_reference_text(text)
    # The regex implementation kept pieces as code points; JavaScript pairs the halves that meet.
    assert parsed.text == to_js_string(expected_text)
    labels = [(ref.session_id, to_js_string(ref.label or "")) for ref in expected_refs]
    assert [(ref.session_id, ref.label) for ref in parsed.references] == labels
    spans = find_mention_spans(text)
    assert all(span.valid for span in spans)
    assert [(span.session_id, span.label) for span in spans] == labels


def test_every_match_position_is_found_in_order() -> None:
    text = f"a {ABC} @[x]({ABC}) dsh-session:IiJ @[y](dsh-session:%%%) end"
    assert [(start, end) for start, end, _, _ in scan_mentions(text)] == [
        (start, end) for start, end, _, _ in regex_matches(text)
    ]
    assert len(list(scan_mentions(text))) == 4


MEBIBYTE = 1024 * 1024


def repeated(unit: str, size: int = MEBIBYTE) -> str:
    return unit * (size // len(unit))


# Each of these took minutes to hours with the backtracking scan (quadratic); the suite runs them
# whole so a regression shows as a suite that no longer finishes, not as a flaky timing assertion.
@pytest.mark.parametrize(
    "unit",
    [
        "@[",
        "@[\\",
        "@[\\\\",
        "@[]",
        "@[" + "label " * 50,
        "](dsh-session:",
        "@[](dsh-session:",
        "\\\\\\]\n\\\n",
    ],
)
def test_a_mebibyte_of_adversarial_text_without_mentions_is_left_alone(unit: str) -> None:
    text = repeated(unit)
    assert parse_session_reference_text(text).text == text
    assert find_mention_spans(text) == []


def test_a_mebibyte_of_mentions_parses_every_one() -> None:
    unit = f"@[label]({ABC}) "
    text = repeated(unit)
    parsed = parse_session_reference_text(text)
    count = len(text) // len(unit)
    assert parsed.text == "@label " * count
    assert len(parsed.references) == count
    assert len(find_mention_spans(text)) == count


def test_a_mebibyte_of_scheme_runs_fails_on_the_first_and_spans_every_one() -> None:
    text = repeated("dsh-session:")
    with pytest.raises(SessionReferenceError) as raised:
        parse_session_reference_text(text)
    assert raised.value.code is ErrorCode.INVALID_REFERENCE
    assert raised.value.message == 'invalid session reference URI "dsh-session:dsh-session"'
    spans = find_mention_spans(text)
    assert len(spans) == len(text) // len("dsh-session:dsh-session:")
    assert not any(span.valid for span in spans)


def test_a_mention_after_a_mebibyte_of_open_labels_is_still_found() -> None:
    text = repeated("@[") + f"@[x]({ABC})"
    # Every `@[` opens a label that runs to the final `]`, so the whole text is one mention.
    parsed = parse_session_reference_text(text)
    assert parsed.text == "@" + text[2 : text.rindex("](")]
    assert [span.start for span in find_mention_spans(text)] == [0]


def test_bare_uri_of_an_id_with_a_lone_surrogate_is_found_like_any_other() -> None:
    uri = encode_session_reference_uri("a\ud83d")
    assert scanned(f"{uri}!") == [(0, len(uri), None, uri)]
