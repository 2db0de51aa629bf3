"""Foreign session ids round-trip through dsh-session URIs; titles are cut on code-point boundaries."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import strategies as st
from sessionref.contract.titles import normalize_title
from sessionref.contract.uri import (
    decode_session_reference_uri,
    encode_session_reference_uri,
    format_session_reference_mention,
    parse_session_reference_text,
)
from sessionref.sources import (
    ForeignSourceError,
    ForeignSourceErrorCode,
    foreign_session_id,
    parse_foreign_session_id,
)

HOSTILE_TEXT = st.text(
    alphabet=st.sampled_from(
        [
            "a",
            "Z",
            " ",
            "\t",
            "\n",
            "\x1b",
            "[",
            "]",
            "\x07",
            "\x9b",
            "\x9d",
            "\\",
            "P",
            "m",
            "0",
            ";",
            "\u202e",
            "\u200b",
            "\ufeff",
            "\x85",
            "é",
            "漢",
            "😀",
            "\ud800",
            "\x00",
            "\x7f",
            "\u2028",
        ]
    ),
    max_size=400,
)


@pytest.mark.parametrize(
    "session_id",
    [
        "claude-code:5f1c2a9e-3b7d-4c1e-9a2f-0d8e6b4c1a01",
        "codex:1b2c3d4e-0000-4a5b-8c9d-000000000001",
        "gemini:9d8c7b6a-1111-4222-8333-444455556666",
    ],
)
def test_foreign_ids_round_trip_through_uris_and_mentions(session_id: str) -> None:
    kind, native = session_id.split(":", 1)
    assert foreign_session_id(kind, native) == session_id  # type: ignore[arg-type]
    assert parse_foreign_session_id(session_id) == (kind, native)
    uri = encode_session_reference_uri(session_id)
    assert decode_session_reference_uri(uri) == session_id
    parsed = parse_session_reference_text(
        "see " + format_session_reference_mention({"sessionId": session_id, "label": "a label"})
    )
    assert [reference.session_id for reference in parsed.references] == [session_id]


@pytest.mark.parametrize("session_id", ["5f1c2a9e", "dsh:abc", "claude:abc", "", "codex"])
def test_other_ids_are_not_foreign(session_id: str) -> None:
    assert parse_foreign_session_id(session_id) is None


@pytest.mark.parametrize("native", ["", ".", "..", "../etc/passwd", "a/b", "a\\b", "a\x00b"])
def test_a_foreign_id_that_could_name_another_file_is_refused(native: str) -> None:
    with pytest.raises(ForeignSourceError) as raised:
        parse_foreign_session_id("claude-code:" + native)
    assert raised.value.code is ForeignSourceErrorCode.INVALID_ID


def test_long_titles_are_cut_on_a_code_point_boundary() -> None:
    title = normalize_title("漢" * 200)
    assert title is not None and len(title.encode()) <= 256 and title == "漢" * 85


def test_importing_the_readers_loads_neither_the_store_nor_sqlite() -> None:
    code = (
        "import sys, sessionref.sources;"
        "print(sorted(m for m in sys.modules if m.startswith('sessionref.store') or m == 'sqlite3'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
