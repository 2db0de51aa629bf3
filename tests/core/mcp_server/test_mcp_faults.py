"""Faults around the MCP server: a store another process writes meanwhile, a source that disappears,
the SDK not installed; and the pieces under the tools, in process: the caller's live session,
cursors, argument checking and the response cap."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp_world import McpProcess, answered, build_store, said, server_env
from sessionref.host.settings import load_settings
from sessionref.mcp import limits
from sessionref.mcp.arguments import ListSessionsArguments, parse_arguments
from sessionref.mcp.cursors import CursorSigner
from sessionref.mcp.errors import MCP_INVALID_ARGUMENTS, MCP_INVALID_CURSOR, McpError
from sessionref.mcp.live_sessions import LIVE_SECONDS
from sessionref.mcp.readonly_sessions import ReadOnlySessions
from sessionref.mcp.server import fitting
from sessionref.store import open_store

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

NOW_MS = 1_800_000_000_000


@pytest.fixture(scope="module")
def changing(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A server over a store and a Codex home that the tests change while it runs."""
    base = tmp_path_factory.mktemp("faults")
    here = base / "project"
    here.mkdir()
    build_store(base / "store", str(here))
    home = base / "home"
    from histories import ROOTS

    shutil.copytree(ROOTS["codex"], home / ".codex", symlinks=True)
    args = ["-m", "sessionref_tui.cli", "mcp", "--store", str(base / "store"), "--sources", "codex"]
    process = McpProcess(args, server_env(home), here, base / "stderr.txt")
    process.start()
    try:
        yield process, base
    finally:
        process.close()


def test_a_store_written_meanwhile_keeps_being_answered(changing: Any) -> None:
    process, base = changing
    before = process.tool("get_messages", {"session": "pricing"}).structured_content["total"]
    writer = open_store(base / "store")
    try:
        writer.append("pricing", [said("one more question"), answered("one more answer")])
    finally:
        writer.close()
    after = process.tool("get_messages", {"session": "pricing"}).structured_content
    assert after["total"] == before + 2  # reads always read the log itself
    assert not process.tool("list_sessions", {"limit": 5}).is_error


def test_a_source_that_disappears_is_an_error_for_its_sessions_only(changing: Any) -> None:
    process, base = changing
    listing = process.tool("list_sessions", {"limit": 100, "query": "codex:"}).structured_content["sessions"]
    assert listing
    shutil.rmtree(base / "home" / ".codex")
    failed = process.tool("get_snapshot", {"session": listing[0]["id"]})
    assert failed.is_error and failed.content[0].text.split(":", 1)[0].isupper()
    assert not process.tool("get_snapshot", {"session": "pricing"}).is_error
    assert "Traceback" not in process.stderr


def test_without_the_sdk_the_command_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from sessionref_tui.cli import main, mcp_command

    monkeypatch.setattr(mcp_command, "find_spec", lambda name: None)
    status = main(["mcp", "--store", str(tmp_path / "store")])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert "MCP_SDK_MISSING" in err and "pip install 'sessionref[mcp]'" in err
    assert not (tmp_path / "store").exists()


def test_the_help_shows_the_setup_of_every_agent(capsys: pytest.CaptureFixture[str]) -> None:
    from sessionref_tui.cli import main

    assert main(["mcp", "--help"]) == 0
    shown = capsys.readouterr().out
    for setup in ("claude mcp add sessionref -- sessionref mcp", "[mcp_servers.sessionref]", "mcpServers"):
        assert setup in shown
    assert "~/.cursor/mcp.json" in shown and "context_servers" in shown


# -- in process -----------------------------------------------------------------------------------


def sessions_at(root: Path, here: str, now_ms: float) -> ReadOnlySessions:
    return ReadOnlySessions(root, load_settings({}, store_root=root), cwd=here, clock=lambda: now_ms / 1000)


def test_the_callers_live_session_is_hidden_until_it_has_been_quiet(tmp_path: Path) -> None:
    root, here = tmp_path / "store", "/work/project"
    store = open_store(root)
    store.create_session(cwd=here, session_id="live", created_at=NOW_MS - 5_000)
    store.append("live", [said("working on it")], time_ms=NOW_MS - 1_000)
    store.create_session(cwd="/elsewhere", session_id="busy-elsewhere", created_at=NOW_MS - 5_000)
    store.append("busy-elsewhere", [said("another project")], time_ms=NOW_MS - 1_000)
    store.close()

    async def listed(now_ms: float) -> list[str]:
        sessions = sessions_at(root, here, now_ms)
        try:
            page = await sessions.page("", 0, 10)
            return [candidate.session_id for candidate in page.sessions]
        finally:
            await sessions.close()

    assert asyncio.run(listed(NOW_MS)) == ["busy-elsewhere"]
    assert asyncio.run(listed(NOW_MS + LIVE_SECONDS * 1000)) == ["live", "busy-elsewhere"]


def test_pages_stay_full_when_hidden_sessions_are_left_out(tmp_path: Path) -> None:
    root, here = tmp_path / "store", "/work/project"
    store = open_store(root)
    for number in range(30):
        store.create_session(cwd=here, session_id=f"s{number:02d}", created_at=NOW_MS - 100_000 + number)
        store.append(f"s{number:02d}", [said("x")], time_ms=NOW_MS - 100_000 + number)
    store.close()
    excluded = [f"s{number:02d}" for number in range(29, 9, -1)]

    async def page() -> tuple[list[str], int | None]:
        sessions = sessions_at(root, here, NOW_MS + LIVE_SECONDS * 1000)
        try:
            found = await sessions.page("", 0, 5, excluded)
            return [candidate.session_id for candidate in found.sessions], found.next_offset
        finally:
            await sessions.close()

    assert asyncio.run(page()) == (["s09", "s08", "s07", "s06", "s05"], 5)


def test_a_cursor_belongs_to_one_listing_of_one_server() -> None:
    signer = CursorSigner()
    cursor = signer.make(("list_sessions", "q", "/here"), 40)
    assert signer.offset(cursor, ("list_sessions", "q", "/here")) == 40
    for listing in [("list_sessions", "other", "/here"), ("resources/list", "/here")]:
        with pytest.raises(McpError) as refused:
            signer.offset(cursor, listing)
        assert refused.value.code == MCP_INVALID_CURSOR
    with pytest.raises(McpError):
        CursorSigner().offset(cursor, ("list_sessions", "q", "/here"))
    tampered = cursor[:-2] + ("AA" if cursor[-2:] != "AA" else "BB")
    with pytest.raises(McpError):
        signer.offset(tampered, ("list_sessions", "q", "/here"))


def test_arguments_are_strict_and_errors_never_echo_values() -> None:
    with pytest.raises(McpError) as refused:
        parse_arguments(ListSessionsArguments, "list_sessions", {"limit": "secret-value", "extra": 1})
    assert refused.value.code == MCP_INVALID_ARGUMENTS
    assert "limit" in refused.value.message and "extra" in refused.value.message
    assert "secret-value" not in refused.value.message
    assert parse_arguments(ListSessionsArguments, "list_sessions", None).limit is None


def test_a_listing_drops_its_last_items_to_stay_under_the_cap() -> None:
    items = [{"text": "x" * 10_000} for _ in range(100)]
    count = fitting(items, lambda some: str(some))
    assert 1 <= count < 100
    assert len(str(items[:count]).encode()) <= limits.RESPONSE_MAX_BYTES
    assert (
        limits.clamp(None, 20, 100) == 20
        and limits.clamp(0, 20, 100) == 1
        and limits.clamp(10**9, 20, 100) == 100
    )
