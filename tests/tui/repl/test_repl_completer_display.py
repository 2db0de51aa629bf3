"""How one candidate is displayed in the completion menu: label, id when different, cwd, age, all inert."""

from __future__ import annotations

from sessionref.contract.uri import parse_session_reference_text
from sessionref.service.candidates import Candidate
from sessionref_tui.repl.completer import (
    candidate_label_fragments,
    candidate_meta_fragments,
    highlighted,
    mention_for,
)

DAY_MS = 86_400_000


def plain(fragments: list[tuple[str, str]]) -> str:
    return "".join(text for _style, text in fragments)


def test_meta_shows_the_id_only_when_it_differs_from_the_label() -> None:
    titled = Candidate("s-1", "Parser notes", "/home/a", 0, True)
    untitled = Candidate("s-2", "s-2", None, 0, False)
    assert plain(candidate_meta_fragments(titled, "", 3 * DAY_MS)) == "s-1 · ● /home/a · 3d"
    assert plain(candidate_meta_fragments(untitled, "", 3 * DAY_MS)) == "(no cwd) · 3d"


def test_hostile_label_id_and_cwd_are_shown_escaped() -> None:
    hostile = Candidate("id\x1b[2J", "title\x9b31m", "/tmp/\x07bell", 0, False)
    label = plain(candidate_label_fragments(hostile, ""))
    meta = plain(candidate_meta_fragments(hostile, "", 0))
    assert label == "title\\x9b31m"
    assert meta.startswith("id\\x1b[2J · /tmp/\\x07bell")
    assert not any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for char in label + meta)


def test_every_occurrence_of_the_query_is_highlighted_case_insensitively() -> None:
    fragments = highlighted("Abc abc", "AB", "class:l", "class:m")
    assert fragments == [
        ("class:l class:m", "Ab"),
        ("class:l", "c "),
        ("class:l class:m", "ab"),
        ("class:l", "c"),
    ]


def test_long_labels_are_cut_so_rows_stay_short() -> None:
    long = Candidate("x", "word " * 40, None, 0, False)
    assert plain(candidate_label_fragments(long, "")).endswith("…")


def test_the_inserted_token_has_the_neutral_label_and_the_raw_id() -> None:
    token = mention_for(Candidate("id\x1b[2J", "id\x1b[2J", None, 0, False))
    assert "\x1b" not in token
    reference = parse_session_reference_text(token).references[0]
    assert (reference.session_id, reference.label) == ("id\x1b[2J", "id")  # the sequence is removed


def test_the_age_is_the_time_since_the_last_activity() -> None:
    old_but_active = Candidate("s-1", "Parser notes", "/home/a", 0, True, updated_at=2 * DAY_MS)
    assert plain(candidate_meta_fragments(old_but_active, "", 3 * DAY_MS)).endswith(" · 1d")
