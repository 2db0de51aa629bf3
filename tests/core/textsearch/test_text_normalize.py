"""Folding shared by the index, queries and snippets."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from sessionref.textsearch.normalize import (
    IDENTITY_RANGES,
    expand_cjk,
    fold,
    fold_char,
    fold_with_offsets,
    index_form,
    query_cjk_form,
)

MIXED = st.text(
    alphabet=st.one_of(
        st.sampled_from("aZß İ\u0308\u0301éÉÅﬁＡ數据库\ud800 \n\t,._-ｶﾞが\u3099ᄀ"),
        st.characters(exclude_categories=()),
    ),
    max_size=40,
)


def test_fold_ignores_case_diacritics_and_compatibility_forms() -> None:
    assert fold("Zürich CAFÉ") == "zurich cafe"
    assert fold("Zu\u0308rich") == "zurich"  # decomposed input folds the same
    assert fold("ＡＢＣ ﬁle Straße") == "abc file strasse"
    assert fold("ΣΊΣΥΦΟΣ") == "σισυφοσ"
    assert fold("PLAIN ascii") == "plain ascii"


def test_fold_keeps_marks_that_change_a_letter_outside_latin_greek_cyrillic() -> None:
    assert fold("が") == "が"  # the voicing mark is not a diacritic to drop
    assert fold("ｶﾞ") == "ガ"  # half-width kana become full-width


def test_ascii_is_indexed_as_is_and_the_tokenizer_folds_its_case() -> None:
    text = "Run PG_DUMP --no-owner"
    assert index_form(text) is text


def test_cjk_runs_become_bigrams_and_their_last_character() -> None:
    assert expand_cjk("数据库") == " 数据 据库 库 "
    assert expand_cjk("用pg") == " 用 pg"
    assert index_form("数据库迁移，很慢") == " 数据 据库 库迁 迁移 移 , 很慢 慢 "


def test_a_query_run_ending_the_term_gives_only_bigrams() -> None:
    # "数据" may continue in the text ("数据库"), so its last character is not required to end a run.
    assert query_cjk_form("数据").split() == ["数据"]
    # A run followed by more words must end where the indexed run ends, like the index writes it.
    assert query_cjk_form("据库pg").split() == ["据库", "库", "pg"]
    assert query_cjk_form("数").split() == ["数"]


@settings(max_examples=300, deadline=None)
@given(MIXED)
def test_offsets_map_every_folded_position_back_in_order(text: str) -> None:
    folded, to_original = fold_with_offsets(text)
    assert folded == fold(text)
    positions = [to_original(index) for index in range(len(folded) + 1)]
    assert positions == sorted(positions)
    assert all(0 <= position <= len(text) for position in positions)
    assert to_original(len(folded)) == len(text)
    # Every folded character comes from the original character it maps to (with the one after
    # it, for a voicing mark composed into it).
    for index, char in enumerate(folded):
        owner = to_original(index)
        assert char in fold(text[owner]) or char in fold(text[owner : owner + 2])


def test_decomposed_and_half_width_kana_fold_like_composed_kana() -> None:
    assert fold("データカ\u3099") == fold("データガ") == fold("ﾃﾞｰﾀｶﾞ")


def test_identity_ranges_really_fold_to_themselves() -> None:
    for low, high in IDENTITY_RANGES:
        for code in range(low, high + 1):
            assert fold_char(chr(code)) == chr(code), hex(code)
