"""dsh-session: URIs, mention formatting, mention parsing and mention spans."""

from __future__ import annotations

import base64

import pytest
from sessionref.contract.errors import (
    ContractRangeError,
    ContractSyntaxError,
    ContractTypeError,
    ErrorCode,
    SessionReferenceError,
)
from sessionref.contract.excerpts import bounded_excerpt
from sessionref.contract.js_json import MAX_JSON_DEPTH
from sessionref.contract.uri import (
    QUOTED_URI_EXCERPT,
    QUOTED_URI_LIMIT,
    SESSION_REFERENCE_SCHEME,
    SessionReference,
    decode_session_reference_uri,
    encode_session_reference_uri,
    find_mention_spans,
    format_session_reference_mention,
    parse_session_reference_text,
)

ABC = "dsh-session:ImFiYyI"
ODD_ID = 'unicode/引号"/slash\\/line\n'
ODD_URI = "dsh-session:InVuaWNvZGUv5byV5Y-3XCIvc2xhc2hcXC9saW5lXG4i"


@pytest.mark.parametrize(
    ("session_id", "uri"),
    [
        ("abc", ABC),
        ("", "dsh-session:IiI"),
        ("source]", "dsh-session:InNvdXJjZV0i"),
        ("\ud800", "dsh-session:Ilx1ZDgwMCI"),
        ("\U0001f600", "dsh-session:IvCfmIAi"),
        ("\ud83d\ude00", "dsh-session:IvCfmIAi"),
        ("\u2028", "dsh-session:IuKAqCI"),
        (ODD_ID, ODD_URI),
    ],
)
def test_encode_and_decode_round_trip(session_id: str, uri: str) -> None:
    assert SESSION_REFERENCE_SCHEME == "dsh-session:"
    assert encode_session_reference_uri(session_id) == uri
    assert "=" not in uri
    assert decode_session_reference_uri(uri) == ("\U0001f600" if session_id == "\ud83d\ude00" else session_id)


def test_encode_refuses_a_non_string() -> None:
    with pytest.raises(TypeError):
        encode_session_reference_uri(42)  # type: ignore[arg-type]


def decode_failure(uri: str) -> SessionReferenceError:
    with pytest.raises(SessionReferenceError) as raised:
        decode_session_reference_uri(uri)
    error = raised.value
    assert error.code is ErrorCode.INVALID_REFERENCE
    return error


@pytest.mark.parametrize(
    "uri",
    [
        "https://example.test",
        " dsh-session:ImFiYyI",
        "DSH-SESSION:ImFiYyI",
        "dsh-session:",
        "dsh-session:%%%",
        "dsh-session:ImFiYyI=",
        "dsh-session:ImFiYyI+",
        "dsh-session:ImFi YyI",
    ],
)
def test_scheme_and_alphabet_failures_have_no_cause(uri: str) -> None:
    error = decode_failure(uri)
    assert error.cause is None
    assert error.message == f'invalid session reference URI "{uri}"'


@pytest.mark.parametrize(
    ("uri", "cause_type", "cause_message"),
    [
        ("dsh-session:IiJ", ContractTypeError, "URI is not canonical"),
        ("dsh-session:ImFiYyJ", ContractTypeError, "URI is not canonical"),
        ("dsh-session:Ilx1MDA2MWJjIg", ContractTypeError, "URI is not canonical"),  # "\u0061bc"
        ("dsh-session:IlwvIg", ContractTypeError, "URI is not canonical"),  # "\/"
        ("dsh-session:eyJpZCI6IngifQ", ContractTypeError, "decoded session id is not a string"),
        ("dsh-session:MQ", ContractTypeError, "decoded session id is not a string"),
        ("dsh-session:A", ContractSyntaxError, None),
        ("dsh-session:ImFi", ContractSyntaxError, None),
    ],
)
def test_payload_failures_carry_the_cause(uri: str, cause_type: type, cause_message: str | None) -> None:
    error = decode_failure(uri)
    assert isinstance(error.cause, cause_type)
    assert error.__cause__ is error.cause
    if cause_message is not None:
        assert str(error.cause) == cause_message


def test_escaped_surrogate_pair_is_not_canonical_but_a_lone_one_is() -> None:
    pair = "dsh-session:" + "Ilx1ZDgzZFx1ZGUwMCI"  # "\ud83d\ude00" spelled as two escapes
    decode_failure(pair)
    assert decode_session_reference_uri("dsh-session:Ilx1ZDgwMCI") == "\ud800"


def test_the_message_quotes_the_uri_as_javascript_json() -> None:
    error = decode_failure('dsh-session:"\ud800\n')
    assert error.message == 'invalid session reference URI "dsh-session:\\"\\ud800\\n"'


def test_format_mentions() -> None:
    assert format_session_reference_mention({"sessionId": "abc"}) == f"@[abc]({ABC})"
    assert format_session_reference_mention({"sessionId": "abc", "label": None}) == f"@[abc]({ABC})"
    assert format_session_reference_mention({"sessionId": "abc", "label": ""}) == f"@[]({ABC})"
    assert format_session_reference_mention(SessionReference("abc", "a]b\\c[d")) == f"@[a\\]b\\\\c[d]({ABC})"
    paren = format_session_reference_mention({"sessionId": "abc", "label": "paren)(\n"})
    assert paren == f"@[paren)(\n]({ABC})"
    assert format_session_reference_mention(SessionReference("source]")) == (
        "@[source\\]](dsh-session:InNvdXJjZV0i)"
    )


@pytest.mark.parametrize("ref", [{}, {"sessionId": 1}, {"sessionId": "a", "label": 2}])
def test_format_refuses_malformed_references(ref: dict[str, object]) -> None:
    with pytest.raises(TypeError):
        format_session_reference_mention(ref)


def parsed(text: str) -> tuple[str, list[tuple[str, str | None]]]:
    result = parse_session_reference_text(text)
    return result.text, [(ref.session_id, ref.label) for ref in result.references]


def test_parse_round_trips_mentions_and_bare_uris() -> None:
    mention = format_session_reference_mention({"sessionId": ODD_ID, "label": "源]会话"})
    assert parsed(f"compare {mention} and {ODD_URI}") == (
        f"compare @源]会话 and @{ODD_ID}",
        [(ODD_ID, "源]会话"), (ODD_ID, ODD_ID)],
    )


def test_bare_uris_stop_at_punctuation() -> None:
    assert parsed(f"see {ABC}. and `{ABC}`") == ("see @abc. and `@abc`", [("abc", "abc"), ("abc", "abc")])


@pytest.mark.parametrize(
    "text", ["what is a dsh-session: URI?", "see dsh-session:%%%", "DSH-SESSION:ImFiYyI", ""]
)
def test_text_without_references_is_unchanged(text: str) -> None:
    assert parsed(text) == (text, [])


@pytest.mark.parametrize(
    "text",
    [
        "see dsh-session:IiJ",
        "@[bad](dsh-session:%%%)",
        "@[x](dsh-session:)",
        f"@[x]({ABC}.)",
        f"@[x]({ABC}\x85)",
        f"@[x]({ABC}\x1c)",
        "dsh-session:dsh-session:ImFiYyI",
        f"fine {ABC} then dsh-session:IiJ",
    ],
)
def test_one_bad_uri_fails_the_whole_parse(text: str) -> None:
    with pytest.raises(SessionReferenceError) as raised:
        parse_session_reference_text(text)
    assert raised.value.code is ErrorCode.INVALID_REFERENCE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"@[]({ABC})", ("@", [("abc", "")])),
        (f"@[a\\xb]({ABC})", ("@axb", [("abc", "axb")])),
        (f"@[a\\]({ABC})", ("@[a\\](@abc)", [("abc", "abc")])),
        (f"@[a]b]({ABC})", ("@[a]b](@abc)", [("abc", "abc")])),
        (f"@[x]({ABC} extra)", ("@[x](@abc extra)", [("abc", "abc")])),
        (f"@[x]({ABC}\ufeff)", ("@[x](@abc\ufeff)", [("abc", "abc")])),
        (f"@[a\\\nb]({ABC})", ("@[a\\\nb](@abc)", [("abc", "abc")])),
        (f"@[a\\\x85b]({ABC})", ("@a\x85b", [("abc", "a\x85b")])),
        (f"@[a\nb]({ABC})", ("@a\nb", [("abc", "a\nb")])),
        (f"x{ABC}", ("x@abc", [("abc", "abc")])),
        (f"[x]({ABC})", ("[x](@abc)", [("abc", "abc")])),
        (f"@@[x]({ABC})", ("@@x", [("abc", "x")])),
        (f"@[$&]({ABC})", ("@$&", [("abc", "$&")])),
        (f"{ABC} {ABC}", ("@abc @abc", [("abc", "abc"), ("abc", "abc")])),
    ],
)
def test_parse_edge_cases_pinned_by_upstream(text: str, expected: tuple[str, list[tuple[str, str]]]) -> None:
    assert parsed(text) == expected


def test_mention_spans_locate_valid_and_invalid_references() -> None:
    text = f"a @[Lab\\]el]({ABC}) b dsh-session:IiJ c {ABC}"
    spans = find_mention_spans(text)
    assert [(span.kind, span.valid, span.session_id, span.label) for span in spans] == [
        ("mention", True, "abc", "Lab]el"),
        ("bare", False, None, None),
        ("bare", True, "abc", "abc"),
    ]
    assert [text[span.start : span.end] for span in spans] == [f"@[Lab\\]el]({ABC})", "dsh-session:IiJ", ABC]
    assert spans[1].error is not None
    assert spans[1].error.code is ErrorCode.INVALID_REFERENCE
    assert spans[0].uri == ABC


def test_invalid_mention_span_keeps_its_label() -> None:
    [span] = find_mention_spans("@[bad\\]](dsh-session:%%%)")
    assert (span.kind, span.valid, span.label, span.uri) == ("mention", False, "bad]", "dsh-session:%%%")


def test_mention_span_positions_index_the_text_as_given() -> None:
    text = f"\ud83d\ude00 {ABC}"  # a pair given as two code points before the URI
    [span] = find_mention_spans(text)
    assert text[span.start : span.end] == ABC


def test_no_spans_in_plain_text() -> None:
    assert find_mention_spans("nothing to see dsh-session: here") == []


def payload_uri(payload: str) -> str:
    return SESSION_REFERENCE_SCHEME + base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def deep_uri(depth: int, opening: str = "[") -> str:
    return payload_uri(opening * depth)


@pytest.mark.parametrize("opening", ["[", '{"a":'])
def test_a_deeply_nested_payload_is_an_invalid_reference_not_a_crash(opening: str) -> None:
    uri = deep_uri(100_000, opening)
    error = decode_failure(uri)
    assert isinstance(error.cause, ContractRangeError)
    assert error.message.startswith('invalid session reference URI "dsh-session:')
    for text in (f"see {uri} now", f"see @[deep]({uri}) now"):
        with pytest.raises(SessionReferenceError) as raised:
            parse_session_reference_text(text)
        assert raised.value.code is ErrorCode.INVALID_REFERENCE
        [span] = find_mention_spans(text)
        assert not span.valid
        assert span.error is not None
        assert isinstance(span.error.cause, ContractRangeError)


def test_nesting_up_to_the_bound_is_parsed_and_found_not_to_be_a_string() -> None:
    at_bound = decode_failure(payload_uri("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH))
    assert isinstance(at_bound.cause, ContractTypeError)
    assert str(at_bound.cause) == "decoded session id is not a string"
    past_bound = decode_failure(payload_uri("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)))
    assert isinstance(past_bound.cause, ContractRangeError)


def test_uris_up_to_the_bound_are_quoted_whole() -> None:
    uri = SESSION_REFERENCE_SCHEME + "A" * (QUOTED_URI_LIMIT - len(SESSION_REFERENCE_SCHEME))
    assert len(uri) == QUOTED_URI_LIMIT
    assert decode_failure(uri).message == f'invalid session reference URI "{uri}"'


@pytest.mark.parametrize("length", [QUOTED_URI_LIMIT + 1, 10 * 1024 * 1024])
def test_longer_uris_are_quoted_as_a_head_and_tail_excerpt(length: int) -> None:
    uri = SESSION_REFERENCE_SCHEME + "A" * (length - len(SESSION_REFERENCE_SCHEME) - 1) + "B"
    message = decode_failure(uri).message
    assert message == 'invalid session reference URI "' + bounded_excerpt(uri, QUOTED_URI_EXCERPT) + '"'
    assert message.startswith('invalid session reference URI "dsh-session:AAA')
    assert message.endswith('AAB"')
    assert f"[{length - QUOTED_URI_EXCERPT} characters left out]" in message
    assert len(message) < QUOTED_URI_EXCERPT + 100
    with pytest.raises(SessionReferenceError) as raised:
        parse_session_reference_text(f"look {uri}")
    assert raised.value.message == message


def test_the_excerpt_of_a_long_bad_uri_is_still_javascript_json() -> None:
    uri = 'dsh-session:"\n' + "\U0001f600" * QUOTED_URI_LIMIT + "\ud800"
    message = decode_failure(uri).message
    assert message.startswith('invalid session reference URI "dsh-session:\\"\\n\U0001f600')
    assert message.endswith('\U0001f600\\ud800"')
    assert "[15375 characters left out]" in message
    message.encode("utf-8")  # the lone surrogate is escaped, not raw
