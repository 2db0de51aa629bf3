"""Context injected by something else (a DSH runtime plugin) is marked as context, not as the user's words."""

from __future__ import annotations

from pathlib import Path

from app_factory import build_harness, session_id_for
from sessionref.agent import make_user_message
from sessionref_tui.widgets.transcript import ContextView, UserMessageView

RUNTIME = "@deepseek-ai/dsh-system-prompt"


async def test_a_runtime_context_message_is_a_dim_labelled_context_row(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="trip")
    injected = make_user_message(
        "Runtime context:\n- cwd: /home/ana/notes\n- date: 2027-01-15", {"kind": "plugin", "plugin": RUNTIME}
    )
    harness.store.append(
        session_id_for("trip"),
        [{"type": "user/message", "data": injected, "surfaceOp": "append"}],
    )
    async with harness.app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        (context,) = pilot.app.query(ContextView)
        assert context.source == RUNTIME and context.collapsed
        title = f"Context from {RUNTIME} · Runtime context: - cwd: /home/ana/notes - date: 2027-01-15"
        assert str(context.title) == title
        assert context.has_class("context") and not context.has_class("user-message")
        prompts = [view.text for view in pilot.app.query(UserMessageView)]
        assert prompts == ["Ideas for a rainy weekend in Lisbon?"]


async def test_context_arriving_live_is_marked_too(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, open_session="trip")
    async with harness.app.run_test(size=(140, 40)) as pilot:
        injected = make_user_message("<goal>ship it</goal>", {"kind": "plugin", "plugin": "goal"})
        harness.store.append(
            session_id_for("trip"), [{"type": "user/message", "data": injected, "surfaceOp": "append"}]
        )
        await pilot.pause()
        await pilot.pause()
        assert [view.source for view in pilot.app.query(ContextView)] == ["goal"]
        assert len(pilot.app.query(UserMessageView)) == 1
