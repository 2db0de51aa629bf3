from __future__ import annotations

import json

import pytest
from sessionref.contract.titles import TITLE_BYTE_BUDGET, fallback_title, normalize_title
from store_fixtures import dsh_log_folders


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  hello \n\t world  ", "hello world"),
        ("\x1b]0;pwned\x07Title", "Title"),
        ("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1b[31mred\x1b[0m text", "red text"),
        ("\x9b31mC1 csi", "C1 csi"),
        ("a\x00b\x07c\x7fd\x85e", "abcde"),
        ("left\u202eright\u2066iso\u2069", "leftrightiso"),
        ("zero\u200bwidth\ufeff", "zerowidth"),
        ("\x1bPdcs payload\x1b\\after", "after"),
        ("\x1b7saved", "saved"),
        ("[bold]markup[/bold]", "[bold]markup[/bold]"),
        ("", None),
        ("\x1b[2J \u200b ", None),
    ],
)
def test_normalize_title_strips_hostile_sequences(raw: str, expected: str | None) -> None:
    assert normalize_title(raw) == expected


def test_normalize_title_rejects_non_text() -> None:
    assert normalize_title(None) is None
    assert normalize_title(42) is None


def test_normalize_title_bounds_bytes_on_code_point_boundaries() -> None:
    title = normalize_title("é" * 300)
    assert title is not None
    assert len(title.encode("utf-8")) <= TITLE_BYTE_BUDGET
    assert title == "é" * (TITLE_BYTE_BUDGET // 2)
    emoji = normalize_title("a" + "😀" * 100)
    assert emoji is not None and emoji.encode("utf-8").decode("utf-8") == emoji
    assert len(emoji.encode("utf-8")) == 1 + 4 * 63


def test_fallback_title_matches_every_dsh_fallback_title() -> None:
    compared = 0
    for folder in dsh_log_folders():
        events = [json.loads(line) for line in (folder / "session.jsonl").read_text().splitlines() if line]
        by_seq = {event.get("seq"): event for event in events}
        for event in events:
            data = event.get("data") or {}
            if event.get("type") == "session/title" and data["source"]["kind"] == "fallback":
                message = by_seq[data["messageSeqs"][0]]["data"]
                assert fallback_title(message) == data["title"]
                compared += 1
    assert compared >= 100


def test_fallback_title_of_empty_or_non_text_message() -> None:
    assert fallback_title({"content": [{"type": "image"}]}) is None
    assert fallback_title({"content": [{"type": "text", "text": " \x1b[1m "}]}) is None
