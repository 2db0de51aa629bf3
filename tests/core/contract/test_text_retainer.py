"""TextRetainer head/tail/headTail semantics and truncate_with_notice."""

from __future__ import annotations

import re

import pytest
from sessionref.contract.js_json import encode_utf8, utf8_len
from sessionref.contract.text_retainer import (
    PushResult,
    RetainedText,
    TextRetainer,
    TruncatedText,
    head_tail_retain,
    truncate_with_notice,
)

NOTICE = re.compile(r"\n\[… omitted (\d+) UTF-8 bytes …\]\Z")


def retain(retainer: TextRetainer, *chunks: str | bytes) -> tuple[list[PushResult], RetainedText]:
    pushes = [retainer.push(chunk) for chunk in chunks]
    return pushes, retainer.finish()


def test_everything_fits_and_nothing_is_omitted() -> None:
    pushes, result = retain(TextRetainer.head_tail(6, 6), "abcde", "fghij")
    assert result == RetainedText("abcdefghij", False, None)
    assert pushes == [PushResult(True, False), PushResult(True, False)]
    assert result.to_json() == {"text": "abcdefghij", "truncated": False, "omittedBytes": {"kind": "none"}}


def test_head_keeps_the_start() -> None:
    pushes, result = retain(TextRetainer.head(4), "ab", "cdefgh", "")
    assert result == RetainedText("abcd", True, 4)
    assert pushes == [PushResult(True, False), PushResult(False, True), PushResult(True, True)]
    assert result.to_json()["omittedBytes"] == {"kind": "exact", "count": 4}


def test_tail_keeps_the_end_across_chunks() -> None:
    pushes, result = retain(TextRetainer.tail(3), "abc", "de", "f")
    assert result == RetainedText("def", True, 3)
    assert [push.kept for push in pushes] == [True, False, False]


def test_head_tail_joins_the_pieces_without_a_marker() -> None:
    assert head_tail_retain("abcdefghij", 2, 3) == RetainedText("abhij", True, 5)


def test_cuts_are_repaired_to_code_point_boundaries() -> None:
    # 界 is 3 bytes: a head cut inside it drops it, a tail cut inside it drops its continuation bytes.
    assert head_tail_retain("界界界界", 4, 0) == RetainedText("界", True, 9)
    assert head_tail_retain("界界界界", 0, 4) == RetainedText("界", True, 9)
    assert head_tail_retain("a\U0001f600b\U0001f600c", 2, 2) == RetainedText("ac", True, 9)


def test_lone_surrogates_are_pushed_as_replacement_characters() -> None:
    assert head_tail_retain("x\ud800y", 1, 1) == RetainedText("xy", True, 3)
    assert head_tail_retain("x\ud800y", 5, 0) == RetainedText("x\ufffdy", False, None)


def test_each_piece_drops_one_leading_bom_but_counts_it_as_kept() -> None:
    assert head_tail_retain("\ufeffabcdef", 3, 3) == RetainedText("def", True, 3)
    assert head_tail_retain("\ufeff", 0, 0) == RetainedText("", True, 3)
    assert head_tail_retain("\ufeff\ufeffab", 10, 0) == RetainedText("\ufeffab", False, None)


def test_a_bom_inside_the_whole_text_is_kept() -> None:
    assert head_tail_retain("ab\ufeffcd", 10, 0) == RetainedText("ab\ufeffcd", False, None)
    assert head_tail_retain("abc\ufeffxy", 3, 5) == RetainedText("abc\ufeffxy", False, None)
    assert head_tail_retain("abcd\ufeffxy", 3, 5) == RetainedText("abcxy", True, 1)


def test_raw_bytes_decode_with_replacement() -> None:
    _, result = retain(TextRetainer.head(33), bytes([128, 233]), "e", bytes([195, 177]))
    assert result == RetainedText("\ufffd\ufffdeñ", False, None)


@pytest.mark.parametrize(
    ("factory", "field"),
    [
        (lambda: TextRetainer.head(None), "maxBytes"),
        (lambda: TextRetainer.tail("3"), "maxBytes"),
        (lambda: TextRetainer.head(-1), "maxBytes"),
        (lambda: TextRetainer.head(1.5), "maxBytes"),
        (lambda: TextRetainer.head(True), "maxBytes"),
        (lambda: TextRetainer.head(float("inf")), "maxBytes"),
        (lambda: TextRetainer.head_tail(None, 3), "headBytes"),
        (lambda: TextRetainer.head_tail(None, None), "headBytes"),
        (lambda: TextRetainer.head_tail(3, -2), "tailBytes"),
    ],
)
def test_budgets_must_be_non_negative_integers(factory: object, field: str) -> None:
    with pytest.raises(ValueError) as raised:
        factory()  # type: ignore[operator]
    assert str(raised.value) == f"{field} must be a non-negative integer"


def test_integral_floats_are_accepted_budgets() -> None:
    assert head_tail_retain("abcdef", 3.0, 0).text == "abc"  # type: ignore[arg-type]


def test_strategy_objects() -> None:
    assert TextRetainer.from_strategy({"kind": "head", "maxBytes": 2}).push("abc") == PushResult(False, True)
    assert TextRetainer.from_strategy({"kind": "tail", "maxBytes": 3}).push("abc") == PushResult(True, False)
    retainer = TextRetainer.from_strategy({"kind": "headTail", "headBytes": 1, "tailBytes": 1})
    assert retain(retainer, "abc")[1] == RetainedText("ac", True, 1)
    with pytest.raises(ValueError, match="unknown retention strategy"):
        TextRetainer.from_strategy({"kind": "middle"})


def test_truncate_returns_a_fitting_text_unchanged() -> None:
    assert truncate_with_notice("abc", 3) == TruncatedText("abc", 0)
    assert truncate_with_notice("a\ud800", 4) == TruncatedText("a\ud800", 0)


def test_truncate_appends_the_exact_notice() -> None:
    text = "abcdefghijklmnopqrstuvwxyz" * 4
    result = truncate_with_notice(text, 60)
    assert result.text == "abcdefghijklmnnopqrstuvwxyz\n[… omitted 77 UTF-8 bytes …]"
    assert result.omitted_bytes == 77
    assert utf8_len(result.text) <= 60


def test_truncate_to_a_budget_smaller_than_any_notice_gives_empty_text() -> None:
    assert truncate_with_notice("x" * 200, 20).text == ""
    assert truncate_with_notice("x" * 200, 20).omitted_bytes == 200
    assert truncate_with_notice("界" * 10, 0).omitted_bytes == 30


def test_truncate_turns_lone_surrogates_into_replacement_characters() -> None:
    result = truncate_with_notice("x\ud800" * 40, 45)
    assert "\ud800" not in result.text
    assert "\ufffd" in result.text


TEXTS = [
    "abcdefghijklmnopqrstuvwxyz" * 7,
    "界\U0001f600" * 50,
    "x\ud800y" * 60,
    '\0\n\r\t"\\' * 40,
    "head\n" + "界😀" * 100 + "\ntail",
]


@pytest.mark.parametrize("text", TEXTS)
def test_truncate_fits_and_accounts_for_every_byte(text: str) -> None:
    total = len(encode_utf8(text))
    for budget in range(0, total, 7):
        result = truncate_with_notice(text, budget)
        assert utf8_len(result.text) <= budget
        if result.text == "":
            assert result.omitted_bytes == total
            continue
        notice = NOTICE.search(result.text)
        assert notice is not None
        assert int(notice.group(1)) == result.omitted_bytes
        kept = result.text[: notice.start()]
        assert utf8_len(kept) + result.omitted_bytes == total


def test_truncate_keeps_more_as_the_budget_grows() -> None:
    text = "abcdefghijklmnopqrstuvwxyz" * 20
    omitted = [truncate_with_notice(text, budget).omitted_bytes for budget in range(40, 500, 20)]
    assert omitted == sorted(omitted, reverse=True)
    assert omitted[0] > omitted[-1]
