"""Esc with the `@` menu open: closes it at once, and the next key is typed as itself (issue 9, item 6).

Keys go in as raw bytes through the pipe, as a terminal writes them: ESC is `\\x1b`, Alt+b is
`\\x1bb` in one write, Alt+Enter `\\x1b\\r`.
"""

from __future__ import annotations

from repl_harness import Harness
from sessionref_tui.repl.keys import ESCAPE_SEQUENCE_WAIT_SECONDS


async def menu_for(harness: Harness, text: str) -> None:
    harness.type(text)
    await harness.until(lambda: harness.completions)


async def test_esc_closes_the_menu_as_soon_as_the_key_is_read(harness: Harness) -> None:
    await menu_for(harness, "see @ab")
    before = harness.keys_processed
    harness.pipe.send_bytes(b"\x1b")
    await harness.until(lambda: harness.keys_processed > before)  # the Esc reached the key processor
    assert harness.completions == []  # closed by that very key, not after a Meta-prefix timeout
    assert harness.mode.session.app.key_processor.key_buffer == []  # nothing held back
    assert harness.mode.session.app.ttimeoutlen == ESCAPE_SEQUENCE_WAIT_SECONDS


async def test_esc_then_b_types_b_instead_of_jumping_a_word(harness: Harness) -> None:
    await menu_for(harness, "see @ab")
    harness.pipe.send_bytes(b"\x1b")
    harness.pipe.send_bytes(b"b")  # both bytes land in one read: the worst case
    await harness.until(
        lambda: (
            harness.text != "see @ab" or harness.mode.session.default_buffer.cursor_position != len("see @ab")
        )
    )
    assert harness.text == "see @abb"
    assert harness.mode.session.default_buffer.cursor_position == len("see @abb")
    assert harness.completions == []  # the dismissed word stays closed while it grows


async def test_a_second_esc_in_the_dismissed_word_is_not_a_meta_prefix(harness: Harness) -> None:
    await menu_for(harness, "see @ab")
    harness.pipe.send_bytes(b"\x1b")
    await harness.until(lambda: not harness.completions)
    harness.pipe.send_bytes(b"\x1bf")
    await harness.until(lambda: harness.text != "see @ab")
    assert harness.text == "see @abf"


async def test_alt_enter_with_the_menu_open_inserts_a_newline_and_never_sends(harness: Harness) -> None:
    await menu_for(harness, "see @ab")
    harness.pipe.send_bytes(b"\x1b\r")
    await harness.until(lambda: "\n" in harness.text)
    assert harness.text == "see @ab\n"
    assert harness.completions == [] and harness.events() == []


async def test_alt_b_outside_an_at_word_still_moves_back_a_word(harness: Harness) -> None:
    harness.type("two words")
    await harness.until(lambda: harness.text == "two words")
    harness.pipe.send_bytes(b"\x1bb")
    await harness.until(lambda: harness.mode.session.default_buffer.cursor_position == len("two "))
    assert harness.text == "two words"
