"""GitHub Copilot CLI: a session folder's events and workspace file, titles, what is projected."""

from __future__ import annotations

import os
from pathlib import Path

from histories import copy_root, discover, projected, read_listed
from sessionref.sources.copilot import READER, parse_workspace

HOOKS = "copilot:7f1e2d3c-0000-4000-8000-0000000000c1"
DARK = "copilot:8a2b3c4d-0000-4000-8000-0000000000c2"


def test_a_folder_with_a_conversation_is_a_session() -> None:
    listed = {summary.session_id: summary for summary in discover("copilot")}
    assert set(listed) == {HOOKS, DARK}  # the third only started and shut down
    assert listed[HOOKS].cwd == "/home/ana/hooks"  # workspace.yaml wins over session.start
    assert [path.name for path in listed[HOOKS].paths] == ["events.jsonl", "workspace.yaml"]


def test_a_user_rename_wins_and_a_placeholder_summary_is_no_title() -> None:
    listed = {summary.session_id: summary for summary in discover("copilot")}
    assert listed[HOOKS].title == "Webhook retries"
    assert listed[DARK].title == "Add a dark mode toggle to settings"  # "New session - …" is a placeholder


def test_only_messages_are_projected_never_tools_or_reasoning() -> None:
    (hooks,) = [summary for summary in discover("copilot") if summary.session_id == HOOKS]
    session = read_listed(hooks)
    assert projected(session) == [
        ("user", "Find why the webhook retries twice", False),
        ("assistant", "The queue re-delivers before the ack is stored.", False),
        ("user", "Store the ack first then", False),
        ("assistant", "Done: the ack is written before delivery.", False),
    ]
    assert session.title == "Webhook retries"


def test_a_rename_in_the_workspace_file_is_a_change_of_the_session(tmp_path: Path) -> None:
    root = copy_root("copilot", tmp_path)
    (hooks,) = [summary for summary in discover("copilot", root) if summary.session_id == HOOKS]
    workspace = hooks.paths[1]
    scan = READER.scan(root, workspace, None)
    workspace.write_text('cwd: /home/ana/hooks\nname: "Ack ordering"\nuser_named: true\n')
    os.utime(workspace, ns=(scan.mtime_ns + 1_000_000, scan.mtime_ns + 1_000_000))
    again = READER.scan(root, workspace, scan)
    assert again is not scan and again.named == "Ack ordering"


def test_the_workspace_file_is_read_as_flat_scalars() -> None:
    text = "a: plain # note\nb: 'it''s'\nc: \"q\\\"d\"\nnested:\n  d: no\n- e\nf: |\n  block\n"
    assert parse_workspace(text) == {"a": "plain", "b": "it's", "c": 'q"d'}
    assert READER.default_root({}, Path("/h")) == Path("/h/.copilot")
