from __future__ import annotations

import json

import pytest
from sessionref.contract.titles import (
    FALLBACK_TITLE_CHARS,
    TITLE_BYTE_BUDGET,
    fallback_title,
    normalize_title,
    prompt_title,
)
from sessionref.contract.uri import encode_session_reference_uri
from store_fixtures import dsh_log_folders

URI = encode_session_reference_uri("s-1")


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


def test_fallback_title_begins_like_every_dsh_fallback_title() -> None:
    """DSH writes its own fallback (the prompt's first five words, cut at 40 characters) as a
    `session/title` event, which wins; ours, for a session without one, says more but the same first."""
    compared = 0
    for folder in dsh_log_folders():
        events = [json.loads(line) for line in (folder / "session.jsonl").read_text().splitlines() if line]
        by_seq = {event.get("seq"): event for event in events}
        for event in events:
            data = event.get("data") or {}
            if event.get("type") == "session/title" and data["source"]["kind"] == "fallback":
                ours = fallback_title(by_seq[data["messageSeqs"][0]]["data"])
                assert ours is not None
                words = ours.removesuffix("…")
                assert words.startswith(data["title"]) or data["title"].startswith(words), (ours, data)
                compared += 1
    assert compared >= 100


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("Add cursor pagination to GET /invoices", "Add cursor pagination to GET /invoices"),
        (
            "Add cursor pagination to GET /invoices and keep the old offset parameter for a release",
            "Add cursor pagination to GET /invoices and keep the old…",
        ),
        ("Fix the flaky test.\nIt fails one run in ten on CI.", "Fix the flaky test."),
        ("\n\n  second line wins  \nthird", "second line wins"),
        (
            f"Compare with @[Reject empty payloads]({URI}) first",
            "Compare with Reject empty payloads first",
        ),
        (f"See @[a \\] b]({URI}) and {URI}", "See a ] b and s-1"),  # a bare URI: its id
        ("See @[a](dsh-session:YWJj) first", "See @[a](dsh-session:YWJj) first"),  # no id: left as typed
        ("x" * 80, "x" * 59 + "…"),
        (f"@[\x1b[2J]({URI})", None),
    ],
)
def test_prompt_title_is_the_first_line_with_mentions_as_labels(prompt: str, expected: str | None) -> None:
    assert prompt_title(prompt) == expected


def test_prompt_title_stays_within_its_length() -> None:
    for words in range(1, 40):
        title = prompt_title(" ".join(f"word{n}" for n in range(words)))
        assert title is not None and len(title) <= FALLBACK_TITLE_CHARS


def test_fallback_title_of_empty_or_non_text_message() -> None:
    assert fallback_title({"content": [{"type": "image"}]}) is None
    assert fallback_title({"content": [{"type": "text", "text": " \x1b[1m "}]}) is None
