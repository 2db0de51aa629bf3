"""The composer accepts a candidate with the tested `mentions.accept_mention` edit (as one undoable
text-area edit): the draft and the cursor it leaves are what that function gives."""

from __future__ import annotations

import pytest
from composer_harness import SESSIONS, ComposerHarness, FakeSource, settle, type_text
from sessionref_tui.mentions import accept_mention, active_mention_token_in, mention_for


@pytest.mark.parametrize(("before", "after"), [("see @res", ""), ("see @res", " and more")])
async def test_picking_gives_the_draft_and_cursor_accept_mention_gives(before: str, after: str) -> None:
    app = ComposerHarness(FakeSource(SESSIONS))
    async with app.run_test() as pilot:
        field = app.composer.input
        await type_text(pilot, before + after)
        for _ in after:
            await pilot.press("left")
        await settle(pilot)
        token = active_mention_token_in(field.chips, field.cursor_offset)
        assert token is not None and app.composer.popup.is_open
        expected, cursor = accept_mention(field.chips, token, mention_for(SESSIONS[0]))
        await pilot.press("tab")
        await settle(pilot)
        assert field.chips == expected
        assert field.cursor_offset == cursor
        field.undo()  # one edit: undo gives back what was typed
        assert field.text == before + after
