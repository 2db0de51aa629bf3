"""`sessionref mcp` end to end: the SDK's stdio client against the real server process.

Every tool, resource (listing pages, read, template) and prompt; clamping; coded errors; many
requests at once; a cancelled request; hostile session text inside the frame; and, last, that
nothing was written in the store or in the agents' homes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from histories import tree_state
from mcp.shared.exceptions import MCPError
from mcp_world import (
    HOSTILE_ID,
    HOSTILE_TEXT,
    HOSTILE_TITLE,
    LONG_ID,
    LONG_MESSAGES,
    TWIN_A,
    McpProcess,
    store_state,
)
from sessionref.contract.context_message import PROMPT_PREFIX
from sessionref.contract.uri import encode_session_reference_uri, format_session_reference_mention
from sessionref.mcp import limits
from sessionref.mcp.framing import FRAME_CLOSE, FRAME_OPEN

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def before(world: dict[str, Path]) -> dict[str, Any]:
    """The store's and the homes' files before the server started (taken before `server`)."""
    return {"store": store_state(world["store"]), "home": tree_state(world["home"])}


@pytest.fixture(scope="module")
def mcp(before: dict[str, Any], server: McpProcess) -> McpProcess:
    """The server, started after `before` was taken."""
    return server


def text_of(result: Any) -> str:
    assert len(result.content) == 1
    return str(result.content[0].text)


def error_code(result: Any) -> str:
    assert result.is_error
    return text_of(result).split(":", 1)[0]


def assert_framed_once(text: str) -> None:
    """The frame opens and closes exactly once, and nothing from a session escapes it."""
    assert text.count(FRAME_OPEN.strip()) == 1
    assert text.count(FRAME_CLOSE.strip()) == 1
    assert text.index(FRAME_OPEN) < text.index(FRAME_CLOSE)
    inside = text.split(FRAME_OPEN, 1)[1].split(FRAME_CLOSE, 1)[0]
    assert "<" not in inside
    assert "\x1b" not in text and "\x07" not in text


def test_initialize_names_the_server_and_what_it_offers(mcp: McpProcess) -> None:
    result = mcp.initialize_result
    assert result.server_info.name == "sessionref"
    assert "untrusted" in (result.instructions or "")
    capabilities = result.capabilities
    assert capabilities.tools is not None and capabilities.resources is not None
    assert capabilities.prompts is not None


def test_every_tool_is_listed_read_only_with_a_strict_schema(mcp: McpProcess) -> None:
    tools = {tool.name: tool for tool in mcp.run(lambda s: s.list_tools()).tools}
    assert set(tools) == {"list_sessions", "search_conversations", "get_snapshot", "get_messages"}
    for tool in tools.values():
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
        assert tool.input_schema["additionalProperties"] is False
    assert tools["get_snapshot"].input_schema["required"] == ["session"]
    # Optional numbers are typed as numbers (hosts such as the MCP Inspector convert typed text by it).
    assert tools["list_sessions"].input_schema["properties"]["limit"]["type"] == "integer"


def test_list_sessions_is_ranked_exactly_like_the_sessions_command(
    mcp: McpProcess, world: dict[str, Path]
) -> None:
    import subprocess
    import sys

    from mcp_world import server_env

    command = [sys.executable, "-m", "sessionref_tui.cli", "sessions", "--json", "--fresh", "--limit", "100"]
    command += ["--store", str(world["store"]), "--sources", "all"]
    printed = subprocess.run(
        command, env=server_env(world["home"]), capture_output=True, text=True, check=True, cwd=world["here"]
    ).stdout
    result = mcp.tool("list_sessions", {"limit": 100})
    sessions = result.structured_content["sessions"]
    assert [entry["id"] for entry in sessions] == [entry["sessionId"] for entry in json.loads(printed)]
    first = sessions[0]
    assert first["id"] == "here-old" and first["same_folder"] is True and first["source"] == "store"
    assert set(first) == {"id", "title", "source", "cwd", "same_folder", "last_activity", "mention"}
    assert first["mention"] == format_session_reference_mention(
        {"sessionId": "here-old", "label": first["title"]}
    )
    assert result.structured_content["next_cursor"] is not None
    assert_framed_once(text_of(result))


def test_list_sessions_lists_the_other_agents_sessions_with_their_source(mcp: McpProcess) -> None:
    sources: set[str] = set()
    cursor = None
    while True:
        page = mcp.tool("list_sessions", {"limit": 100, **({"cursor": cursor} if cursor else {})})
        sources |= {entry["source"] for entry in page.structured_content["sessions"]}
        cursor = page.structured_content["next_cursor"]
        if cursor is None:
            break
    assert {"store", "claude-code", "codex", "gemini"} <= sources


def test_pages_follow_each_other_without_gaps_or_repeats(mcp: McpProcess) -> None:
    everything = [
        e["id"]
        for e in mcp.tool("list_sessions", {"limit": 100, "query": "filler"}).structured_content["sessions"]
    ]
    seen: list[str] = []
    cursor = None
    while True:
        arguments: dict[str, Any] = {"limit": 30, "query": "filler"}
        if cursor is not None:
            arguments["cursor"] = cursor
        page = mcp.tool("list_sessions", arguments).structured_content
        seen += [entry["id"] for entry in page["sessions"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen[:100] == everything
    assert len(seen) == len(set(seen)) == 130


def test_a_limit_past_the_maximum_gets_the_maximum_and_below_one_gets_one(mcp: McpProcess) -> None:
    assert len(mcp.tool("list_sessions", {"limit": 10_000}).structured_content["sessions"]) == limits.LIST_MAX
    assert len(mcp.tool("list_sessions", {"limit": -5}).structured_content["sessions"]) == 1
    found = mcp.tool("search_conversations", {"query": "filler talk", "limit": 999}).structured_content
    assert len(found["matches"]) == limits.SEARCH_MAX


def test_a_question_finds_the_session_that_answers_it(mcp: McpProcess) -> None:
    result = mcp.tool(
        "search_conversations", {"query": "what cache TTL did we settle on for the pricing service?"}
    )
    matches = result.structured_content["matches"]
    assert matches[0]["id"] == "pricing"
    assert set(matches[0]) == {"id", "title", "source", "role", "seq", "snippet", "last_activity", "mention"}
    assert "15 minutes" in matches[0]["snippet"]
    assert_framed_once(text_of(result))


def test_get_snapshot_is_exactly_what_the_snapshot_command_prints(
    mcp: McpProcess, world: dict[str, Path]
) -> None:
    import subprocess
    import sys

    from mcp_world import server_env

    command = [sys.executable, "-m", "sessionref_tui.cli", "snapshot", "pricing", "--max-bytes", "4096"]
    command += ["--store", str(world["store"]), "--sources", "all"]
    printed = subprocess.run(
        command, env=server_env(world["home"]), capture_output=True, text=True, check=True, cwd=world["here"]
    ).stdout
    for session in ("pricing", "prici", encode_session_reference_uri("pricing")):
        result = mcp.tool("get_snapshot", {"session": session, "max_bytes": 4096})
        assert text_of(result) + "\n" == printed
    mention = format_session_reference_mention({"sessionId": "pricing", "label": "any label"})
    assert text_of(mcp.tool("get_snapshot", {"session": mention, "max_bytes": 4096})) + "\n" == printed
    assert printed.startswith(PROMPT_PREFIX)


def test_get_snapshot_clamps_its_budget(mcp: McpProcess) -> None:
    small = text_of(mcp.tool("get_snapshot", {"session": LONG_ID, "max_bytes": 1}))
    large = text_of(mcp.tool("get_snapshot", {"session": LONG_ID, "max_bytes": 10**12}))
    assert small == text_of(
        mcp.tool("get_snapshot", {"session": LONG_ID, "max_bytes": limits.SNAPSHOT_MIN_BYTES})
    )
    assert len(large.encode()) <= limits.RESPONSE_MAX_BYTES
    assert len(small) < len(large)


def test_get_messages_pages_through_a_session_by_seq(mcp: McpProcess) -> None:
    last = mcp.tool("get_messages", {"session": LONG_ID, "before": 5})
    window = last.structured_content
    assert window["total"] == LONG_MESSAGES and len(window["seqs"]) == 5 and window["later_seq"] is None
    earlier = mcp.tool(
        "get_messages", {"session": LONG_ID, "around_seq": window["earlier_seq"], "before": 4, "after": 0}
    )
    assert earlier.structured_content["seqs"][-1] == window["earlier_seq"]
    assert earlier.structured_content["seqs"][-1] < window["seqs"][0]
    payload = json.loads(text_of(last).split(FRAME_OPEN, 1)[1].split(FRAME_CLOSE, 1)[0])
    assert [m["text"] for m in payload["messages"]][-1] == f"answer number {LONG_MESSAGES - 1}"
    assert "text" not in json.dumps(window)  # texts only inside the frame
    wide = mcp.tool("get_messages", {"session": LONG_ID, "around_seq": 0, "before": 500, "after": 500})
    assert len(wide.structured_content["seqs"]) == limits.MESSAGES_MAX + 1


def test_hostile_text_stays_inside_the_frame_everywhere(mcp: McpProcess) -> None:
    snapshot = text_of(mcp.tool("get_snapshot", {"session": HOSTILE_ID}))
    messages = text_of(mcp.tool("get_messages", {"session": HOSTILE_ID}))
    listing = text_of(mcp.tool("list_sessions", {"query": "referenced-sessions"}))
    found = mcp.tool("search_conversations", {"query": "ignore previous instructions"})
    assert HOSTILE_ID in [match["id"] for match in found.structured_content["matches"]]
    for text in (snapshot, messages, listing, text_of(found)):
        assert_framed_once(text)
        assert "<system>" not in text
    assert HOSTILE_TITLE in json.dumps(
        mcp.tool("list_sessions", {"query": "referenced"}).structured_content, ensure_ascii=False
    )
    assert "ignore previous instructions" in HOSTILE_TEXT and "ignore previous instructions" in messages


def test_unknown_and_ambiguous_sessions_are_coded_errors(mcp: McpProcess) -> None:
    assert error_code(mcp.tool("get_snapshot", {"session": "no-such-session"})) == "STORE_SESSION_NOT_FOUND"
    assert error_code(mcp.tool("get_snapshot", {"session": TWIN_A[:8]})) == "SESSION_ID_AMBIGUOUS"
    assert (
        error_code(mcp.tool("get_messages", {"session": "dsh-session:%%%"}))
        == "SESSION_REFERENCE_INVALID_REFERENCE"
    )
    assert error_code(mcp.tool("get_snapshot", {"session": "@[x](dsh-session:abc) and more"})) == (
        "SESSION_REFERENCE_INVALID_REFERENCE"
    )


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("list_sessions", {"limit": "ten"}),
        ("list_sessions", {"limit": 2.5}),
        ("list_sessions", {"limit": True}),
        ("list_sessions", {"surprise": 1}),
        ("search_conversations", {}),
        ("search_conversations", {"query": ["a"]}),
        ("get_snapshot", {"session": 12}),
        ("get_messages", {"session": "pricing", "around_seq": "3"}),
    ],
)
def test_wrong_argument_types_are_coded_errors(mcp: McpProcess, tool: str, arguments: dict[str, Any]) -> None:
    assert error_code(mcp.tool(tool, arguments)) == "MCP_INVALID_ARGUMENTS"


def test_a_one_megabyte_query_and_a_foreign_cursor_are_refused(mcp: McpProcess) -> None:
    huge = "pricing " * 131_072
    assert error_code(mcp.tool("search_conversations", {"query": huge})) == "MCP_QUERY_TOO_LONG"
    assert error_code(mcp.tool("list_sessions", {"query": huge})) == "MCP_QUERY_TOO_LONG"
    other = mcp.tool("list_sessions", {"limit": 1, "query": "filler"}).structured_content["next_cursor"]
    assert error_code(mcp.tool("list_sessions", {"limit": 1, "cursor": other})) == "MCP_INVALID_CURSOR"
    assert error_code(mcp.tool("list_sessions", {"cursor": "not-a-cursor"})) == "MCP_INVALID_CURSOR"
    with pytest.raises(MCPError, match="MCP_INVALID_CURSOR"):
        mcp.run(lambda s: s.list_resources(params=_page(other)))
    assert error_code(mcp.tool("no_such_tool")) == "MCP_UNKNOWN_NAME"


def _page(cursor: str) -> Any:
    import mcp_types

    return mcp_types.PaginatedRequestParams(cursor=cursor)


def test_exclude_leaves_sessions_out_of_listings_and_searches(mcp: McpProcess) -> None:
    listed = mcp.tool("list_sessions", {"limit": 3, "exclude": ["here-old", "not-there"]}).structured_content
    assert "here-old" not in [entry["id"] for entry in listed["sessions"]]
    question = {"query": "pricing cache", "exclude": [encode_session_reference_uri("pricing")]}
    assert "pricing" not in [
        m["id"] for m in mcp.tool("search_conversations", question).structured_content["matches"]
    ]


def test_resources_page_through_every_session_and_read_as_snapshots(mcp: McpProcess) -> None:
    first = mcp.run(lambda s: s.list_resources())
    assert first.resources[0].uri == encode_session_reference_uri("here-old")
    assert len(first.resources) == limits.LIST_MAX and first.next_cursor is not None
    uris = [resource.uri for resource in first.resources]
    cursor = first.next_cursor
    while cursor is not None:
        page = mcp.run(lambda s, cursor=cursor: s.list_resources(params=_page(cursor)))
        uris += [resource.uri for resource in page.resources]
        cursor = page.next_cursor
    assert len(uris) == len(set(uris)) and encode_session_reference_uri(LONG_ID) in uris
    listed = mcp.tool("list_sessions", {"limit": 1}).structured_content["sessions"][0]
    assert (first.resources[0].name, first.resources[0].title) == (listed["title"], listed["title"])
    read = mcp.run(lambda s: s.read_resource(encode_session_reference_uri("pricing")))
    snapshot = text_of(mcp.tool("get_snapshot", {"session": "pricing"}))
    assert read.contents[0].text == snapshot


def test_foreign_sessions_are_named_with_their_source_mark(mcp: McpProcess) -> None:
    names: list[str] = []
    cursor = None
    while True:
        page = mcp.run(lambda s, cursor=cursor: s.list_resources(params=_page(cursor) if cursor else None))
        names += [resource.name for resource in page.resources]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert any(name.startswith("CC ") for name in names)
    assert any(name.startswith("CX ") for name in names)
    assert any(name.startswith("GM ") for name in names)


def test_the_template_reads_any_session_and_bad_uris_are_coded(mcp: McpProcess) -> None:
    templates = mcp.run(lambda s: s.list_resource_templates()).resource_templates
    assert [template.uri_template for template in templates] == ["dsh-session:{id}"]
    with pytest.raises(MCPError, match="STORE_SESSION_NOT_FOUND"):
        mcp.run(lambda s: s.read_resource(encode_session_reference_uri("nobody")))
    with pytest.raises(MCPError, match="SESSION_REFERENCE_INVALID_REFERENCE"):
        mcp.run(lambda s: s.read_resource("dsh-session:!!"))
    with pytest.raises(MCPError, match="MCP_UNKNOWN_NAME"):
        mcp.run(lambda s: s.read_resource("file:///etc/passwd"))


def test_the_mention_prompt_carries_the_snapshot(mcp: McpProcess) -> None:
    prompts = mcp.run(lambda s: s.list_prompts()).prompts
    assert [prompt.name for prompt in prompts] == ["mention"]
    assert prompts[0].arguments[0].name == "session" and prompts[0].arguments[0].required
    got = mcp.run(lambda s: s.get_prompt("mention", {"session": "pricing"}))
    assert got.messages[0].role == "user"
    assert got.messages[0].content.text == text_of(mcp.tool("get_snapshot", {"session": "pricing"}))
    with pytest.raises(MCPError, match="SESSION_ID_AMBIGUOUS"):
        mcp.run(lambda s: s.get_prompt("mention", {"session": "7a00"}))
    with pytest.raises(MCPError, match="MCP_UNKNOWN_NAME"):
        mcp.run(lambda s: s.get_prompt("nope", {}))


def test_many_requests_at_once_each_get_their_own_answer(mcp: McpProcess) -> None:
    calls = [
        ("get_snapshot", {"session": "pricing"}),
        ("get_snapshot", {"session": LONG_ID}),
        ("list_sessions", {"limit": 7}),
        ("search_conversations", {"query": "pricing cache"}),
        ("get_messages", {"session": LONG_ID, "around_seq": 40}),
        ("get_snapshot", {"session": "no-such-session"}),
    ] * 4
    alone = [text_of(mcp.tool(name, arguments)) for name, arguments in calls[:6]]

    async def together(session: Any) -> list[Any]:
        return list(await asyncio.gather(*(session.call_tool(name, arguments) for name, arguments in calls)))

    answers = mcp.run(together)
    assert [text_of(answer) for answer in answers] == alone * 4


def test_a_cancelled_request_leaves_the_server_answering(mcp: McpProcess) -> None:
    async def cancel_then_ask(session: Any) -> Any:
        pending = asyncio.ensure_future(
            session.call_tool("search_conversations", {"query": "filler talk 12"})
        )
        await asyncio.sleep(0)  # a yield: the request may or may not be on the wire; either way it is dropped
        pending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await pending
        return await session.call_tool("list_sessions", {"limit": 1})

    answer = mcp.run(cancel_then_ask)
    assert answer.structured_content["sessions"][0]["id"] == "here-old"


def test_zz_nothing_was_written_in_the_store_or_the_agents_homes(
    mcp: McpProcess, before: dict[str, Any], world: dict[str, Path]
) -> None:
    assert store_state(world["store"]) == before["store"]
    assert tree_state(world["home"]) == before["home"]
    assert "Traceback" not in mcp.stderr
