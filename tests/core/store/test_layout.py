from __future__ import annotations

import pytest
from sessionref.store import StoreError, encode_session_segment, project_key
from sessionref.store.layout import decode_session_segment


@pytest.mark.parametrize(
    ("session_id", "segment"),
    [
        ("abc-DEF_1.2", "abc-DEF_1.2"),
        ("a b", "a~0020b"),
        ("~", "~007E"),
        ("a/b", "a~002Fb"),
        (".", "~002E"),
        ("..", "~002E~002E"),
        ("...", "..."),
        ("é", "~00E9"),
        ("😀", "~D83D~DE00"),
    ],
)
def test_session_segment_escapes_utf16_units(session_id: str, segment: str) -> None:
    assert encode_session_segment(session_id) == segment
    assert decode_session_segment(segment) == session_id


def test_empty_or_oversized_id_is_rejected() -> None:
    for bad in ("", "\u00e9" * 60):
        with pytest.raises(StoreError) as caught:
            encode_session_segment(bad)
        assert caught.value.code == "STORE_INVALID_ID"


def test_decode_rejects_foreign_folder_names() -> None:
    assert decode_session_segment("a b") is None
    assert decode_session_segment("~12") is None
    assert decode_session_segment("~zzzz") is None


@pytest.mark.parametrize(
    ("cwd", "key"),
    [
        (None, "_no-cwd"),
        ("/home/ana/my app", "--home-ana-my~0020app--"),
        ("C:\\Users\\ana", "--C-Users-ana--"),
        ("/", "--root--"),
        ("///a//b", "--a-b--"),
        ("/tmp/~x", "--tmp-~007Ex--"),
    ],
)
def test_project_key(cwd: str | None, key: str) -> None:
    assert project_key(cwd) == key


def test_project_key_is_bounded() -> None:
    key = project_key("/" + "a" * 400)
    assert key == "--" + "a" * 251 + "--"
