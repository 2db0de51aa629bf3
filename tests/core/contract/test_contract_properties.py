"""Properties of the pure contract over generated inputs (hypothesis).

Generated strings include every Unicode category, explicit lone surrogates and
surrogate pairs given as two code points, so JavaScript string semantics are
exercised, not just well-formed Python text.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from sessionref.contract.js_json import stringify_tag_safe_json, to_js_string, utf8_len
from sessionref.contract.projection import ProjectedItem
from sessionref.contract.reference_budget import retain_projected_items, snapshot_data
from sessionref.contract.uri import (
    decode_session_reference_uri,
    encode_session_reference_uri,
    format_session_reference_mention,
    parse_session_reference_text,
)

NOTICE = re.compile(r"\n\[… omitted (\d+) UTF-8 bytes …\]\Z")
SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=())
ANY_CHARACTER = st.characters(exclude_categories=())
# Pieces, not characters, so a surrogate pair can arrive as two separate code points.
ANY_PIECE = st.one_of(ANY_CHARACTER, SURROGATES, st.sampled_from(["\ud83d\ude00", "\ufeff", "\\", "]"]))
ANY_TEXT = st.lists(ANY_PIECE, max_size=40).map("".join)
PLAIN_TEXT = st.text(alphabet=st.sampled_from("abc XYZ.,!?"))
# Message text without U+FEFF: a BOM at a cut is dropped from the text yet counted as kept,
# which would make the byte accounting below inexact by design.
MESSAGE_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from('ab <>&\\"\n\t\x00\x7f\u2028'),
        st.sampled_from("界é\U0001f600"),
        SURROGATES,
    ),
    max_size=120,
)
SETTINGS = settings(max_examples=300, deadline=None)


@SETTINGS
@given(ANY_TEXT)
def test_decode_inverts_encode(session_id: str) -> None:
    uri = encode_session_reference_uri(session_id)
    assert re.fullmatch(r"dsh-session:[A-Za-z0-9_-]+", uri)
    assert decode_session_reference_uri(uri) == to_js_string(session_id)


@SETTINGS
@given(ANY_TEXT, st.one_of(st.none(), ANY_TEXT), PLAIN_TEXT, PLAIN_TEXT)
def test_parse_inverts_format(session_id: str, label: str | None, before: str, after: str) -> None:
    mention = format_session_reference_mention({"sessionId": session_id, "label": label})
    parsed = parse_session_reference_text(before + mention + after)
    shown = to_js_string(session_id if label is None else label)
    assert parsed.text == before + "@" + shown + after
    assert [(ref.session_id, ref.label) for ref in parsed.references] == [(to_js_string(session_id), shown)]


@SETTINGS
@given(ANY_TEXT, PLAIN_TEXT)
def test_a_bare_uri_parses_to_its_id(session_id: str, after: str) -> None:
    uri = encode_session_reference_uri(session_id)
    parsed = parse_session_reference_text(f"see {uri} {after}")
    assert parsed.text == f"see @{to_js_string(session_id)} {after}"


@SETTINGS
@given(ANY_TEXT)
def test_tag_safe_json_has_no_less_than_and_counts_like_javascript(text: str) -> None:
    serialized = stringify_tag_safe_json({"text": text})
    assert "<" not in serialized
    serialized.encode("utf-8")  # always well-formed: lone surrogates are escaped


ITEMS = st.lists(
    st.builds(ProjectedItem, st.sampled_from(["user", "assistant"]), MESSAGE_TEXT, st.booleans()),
    max_size=12,
)


@settings(max_examples=400, deadline=None)
@given(ITEMS, st.integers(min_value=0, max_value=1500), st.sampled_from(["L", "label <with> 界"]))
def test_retention_fits_keeps_what_it_must_and_accounts_every_byte(
    projected: list[ProjectedItem], max_bytes: int, label: str
) -> None:
    retained = retain_projected_items(
        projected, session_id="s", label=label, cwd=None, captured_through_seq=7, max_bytes=max_bytes
    )
    if retained is None:
        return
    assert retained.data_bytes == utf8_len(stringify_tag_safe_json(retained.data)) <= max_bytes
    kept = retained.kept_indices
    assert {index for index, item in enumerate(projected) if item.checkpoint} <= set(kept)
    if projected:
        assert kept[-1] == len(projected) - 1
    stats = retained.stats
    assert stats.original_messages == len(projected)
    assert stats.retained_messages == len(kept)
    assert stats.omitted_messages == len(projected) - len(kept)
    dropped = sum(utf8_len(item.text) for index, item in enumerate(projected) if index not in kept)
    shortened = 0
    for index, item in zip(kept, retained.data["conversation"], strict=True):
        original = to_js_string(projected[index].text)
        assert item["role"] == projected[index].role
        if item["text"] == original:
            continue
        notice = NOTICE.search(item["text"])
        if notice is None:
            assert item["text"] == ""
            shortened += utf8_len(original)
            continue
        omitted = int(notice.group(1))
        assert utf8_len(item["text"][: notice.start()]) + omitted == utf8_len(original)
        shortened += omitted
    assert stats.omitted_bytes == dropped + shortened
    assert stats.truncated == (stats.omitted_messages > 0 or stats.omitted_bytes > 0)
    assert stats.compacted == any(item.checkpoint for item in projected)
    full = [item["text"] for item in retained.full_data["conversation"]]
    assert full == [to_js_string(item.text) for item in projected]


@settings(max_examples=200, deadline=None)
@given(ITEMS, st.integers(min_value=0, max_value=1500))
def test_retention_keeps_everything_when_it_fits(projected: list[ProjectedItem], max_bytes: int) -> None:
    retained = retain_projected_items(
        projected, session_id="s", label="L", cwd="/w", captured_through_seq=None, max_bytes=max_bytes
    )
    whole = snapshot_data("s", "L", "/w", None, [(item.role, item.text) for item in projected])
    if utf8_len(stringify_tag_safe_json(whole)) <= max_bytes:
        assert retained is not None
        assert retained.data == retained.full_data
        assert not retained.stats.truncated
    else:
        assert retained is None or retained.stats.truncated
