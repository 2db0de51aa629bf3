"""OpenAIChatModel's bounds against a real loopback server: deadline, line and reply size, redirects."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_chat_server import (
    FakeChatServer,
    SteppingClock,
    delta_chunk,
    flood_after,
    in_turn,
    redirect,
    sse_event,
    stall_after,
    stream_of,
)
from sessionref.agent import Agent, make_user_message
from sessionref.models import (
    MODEL_REDIRECT,
    MODEL_STREAM_TOO_LARGE,
    MODEL_TIMEOUT,
    ModelError,
    OpenAIChatModel,
    StreamLimits,
)
from sessionref.store import open_store

QUESTION = [{"role": "user", "content": "hello?"}]
FINISHED = (sse_event(delta_chunk("ok", "stop")), sse_event("[DONE]"))


def model_for(server: FakeChatServer, **options: object) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=server.base_url, model="gpt-4o-mini", api_key="sk-test", **options)  # type: ignore[arg-type]


async def collect(model: OpenAIChatModel, received: list[str]) -> None:
    async for delta in model.stream(QUESTION):
        received.append(delta)


async def failure(model: OpenAIChatModel, received: list[str] | None = None) -> ModelError:
    with pytest.raises(ModelError) as caught:
        await collect(model, [] if received is None else received)
    return caught.value


# -- the whole-request deadline ------------------------------------------------------------------------


async def test_keep_alives_forever_end_at_the_deadline_keeping_the_text(chat_server: FakeChatServer) -> None:
    # Never silent, so the idle timeout (30 s) never fires; the deadline's clock moves 1 s per read.
    chat_server.responder = flood_after(sse_event(delta_chunk("first")))
    clock = SteppingClock(step=1.0)
    received: list[str] = []
    error = await failure(model_for(chat_server, timeout=30, deadline=20, clock=clock), received)
    assert error.code == MODEL_TIMEOUT
    assert "20 s deadline" in error.message and "SESSIONREF_MODEL_DEADLINE" in error.message
    assert received == ["first"]
    assert clock.now > 20


async def test_one_word_at_a_time_also_ends_at_the_deadline(chat_server: FakeChatServer) -> None:
    chat_server.responder = flood_after(filler=sse_event(delta_chunk("word ")))
    clock = SteppingClock(step=1.0)
    received: list[str] = []
    error = await failure(model_for(chat_server, timeout=30, deadline=50, clock=clock), received)
    assert error.code == MODEL_TIMEOUT and "deadline" in error.message
    assert received and set(received) == {"word "}


async def test_a_reply_within_the_deadline_is_not_cut(chat_server: FakeChatServer) -> None:
    keep_alives = [b": keep-alive\n\n"] * 5
    chat_server.responder = stream_of(sse_event(delta_chunk("a")), *keep_alives, *FINISHED)
    received: list[str] = []
    await collect(model_for(chat_server, deadline=1000, clock=SteppingClock(step=1.0)), received)
    assert received == ["a", "ok"]


async def test_a_server_that_never_answers_ends_at_the_real_deadline(chat_server: FakeChatServer) -> None:
    chat_server.responder = stall_after()
    error = await failure(model_for(chat_server, timeout=30, deadline=0.2))
    assert error.code == MODEL_TIMEOUT and "0.2 s deadline" in error.message


async def test_the_idle_timeout_message_names_its_setting(chat_server: FakeChatServer) -> None:
    chat_server.responder = stall_after()
    error = await failure(model_for(chat_server, timeout=0.2, deadline=30))
    assert error.code == MODEL_TIMEOUT and "SESSIONREF_MODEL_TIMEOUT" in error.message


# -- size bounds ---------------------------------------------------------------------------------------


async def test_an_endless_line_is_too_large_keeping_the_text_before_it(chat_server: FakeChatServer) -> None:
    # The line never ends: the client must give up once it is past the bound, not wait for its end.
    chat_server.responder = flood_after(sse_event(delta_chunk("kept")), b"data: ", filler=b"x" * 4096)
    received: list[str] = []
    error = await failure(model_for(chat_server, limits=StreamLimits(max_line_bytes=1024)), received)
    assert error.code == MODEL_STREAM_TOO_LARGE
    assert "1024 bytes" in error.message and "kept" in error.message
    assert received == ["kept"]


async def test_a_complete_line_over_the_bound_is_too_large(chat_server: FakeChatServer) -> None:
    chat_server.responder = stream_of(
        sse_event(delta_chunk("kept")), sse_event(delta_chunk("y" * 5000)), *FINISHED
    )
    received: list[str] = []
    error = await failure(model_for(chat_server, limits=StreamLimits(max_line_bytes=1024)), received)
    assert error.code == MODEL_STREAM_TOO_LARGE
    assert received == ["kept"]


async def test_a_line_exactly_at_the_bound_is_accepted(chat_server: FakeChatServer) -> None:
    event = sse_event(delta_chunk("z" * 100))
    line_bytes = len(event) - 2  # without "\n\n"
    chat_server.responder = stream_of(event, *FINISHED)
    received: list[str] = []
    await collect(model_for(chat_server, limits=StreamLimits(max_line_bytes=line_bytes)), received)
    assert received == ["z" * 100, "ok"]


async def test_a_reply_over_the_size_bound_stops_keeping_the_events_within_it(
    chat_server: FakeChatServer,
) -> None:
    first, second = sse_event(delta_chunk("one ")), sse_event(delta_chunk("two "))
    chat_server.responder = flood_after(first, second, filler=sse_event(delta_chunk("more ")))
    limits = StreamLimits(max_reply_bytes=len(first) + len(second) + 10)
    received: list[str] = []
    error = await failure(model_for(chat_server, limits=limits), received)
    assert error.code == MODEL_STREAM_TOO_LARGE and "larger than" in error.message
    assert received == ["one ", "two "]


async def test_a_json_body_over_the_size_bound_is_too_large(chat_server: FakeChatServer) -> None:
    chat_server.responder = flood_after(b"{", filler=b" " * 4096, content_type="application/json")
    error = await failure(model_for(chat_server, limits=StreamLimits(max_reply_bytes=100_000)))
    assert error.code == MODEL_STREAM_TOO_LARGE


@pytest.mark.parametrize("bound", ["line", "reply", "deadline"])
async def test_an_agent_keeps_the_partial_reply_when_a_bound_stops_it(
    chat_server: FakeChatServer, tmp_path: Path, bound: str
) -> None:
    kept = (sse_event(delta_chunk("partial ")), sse_event(delta_chunk("text")))
    if bound == "line":
        chat_server.responder = flood_after(*kept, b"data: ", filler=b"x" * 4096)
        model = model_for(chat_server, limits=StreamLimits(max_line_bytes=2048))
    elif bound == "reply":
        chat_server.responder = flood_after(*kept, filler=b": keep-alive\n\n")
        model = model_for(chat_server, limits=StreamLimits(max_reply_bytes=len(b"".join(kept)) + 5))
    else:
        chat_server.responder = flood_after(*kept)
        model = model_for(chat_server, timeout=30, deadline=30, clock=SteppingClock(step=1.0))
    store = open_store(tmp_path / "store")
    try:
        store.create_session(cwd="/w", session_id="s1")
        agent = Agent(store, "s1", model)
        agent.followup(make_user_message("go"))
        await agent.wait_idle()
        _header, log = store.read_log("s1")
    finally:
        store.close()
    replies = [event for event in log if event["type"] == "assistant/message"]
    assert [reply["data"]["message"]["content"][0]["text"] for reply in replies] == ["partial text"]
    [end] = [event["data"] for event in log if event["type"] == "turn/end"]
    expected = MODEL_TIMEOUT if bound == "deadline" else MODEL_STREAM_TOO_LARGE
    assert (end["reason"], end["errorCode"]) == ("error", expected)


# -- redirects -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", [301, 302, 307, 308])
async def test_a_same_host_redirect_is_followed_with_the_same_post(
    chat_server: FakeChatServer, code: int
) -> None:
    chat_server.responder = in_turn(redirect(code, "/v2/chat/completions"), stream_of(*FINISHED))
    received: list[str] = []
    await collect(model_for(chat_server), received)
    assert received == ["ok"]
    first, second = chat_server.requests
    assert (second.method, second.path) == ("POST", "/v2/chat/completions")
    assert second.body == first.body
    assert second.headers["authorization"] == "Bearer sk-test"


async def test_an_absolute_same_host_location_is_followed(chat_server: FakeChatServer) -> None:
    location = chat_server.base_url.replace("/v1", "/moved/chat/completions")
    chat_server.responder = in_turn(redirect(308, location), stream_of(*FINISHED))
    received: list[str] = []
    await collect(model_for(chat_server), received)
    assert received == ["ok"]
    assert chat_server.requests[1].path == "/moved/chat/completions"


async def test_a_redirect_to_another_host_is_reported_naming_the_location(
    chat_server: FakeChatServer,
) -> None:
    chat_server.responder = redirect(302, "https://elsewhere.invalid/v1/chat/completions")
    error = await failure(model_for(chat_server))
    assert error.code == MODEL_REDIRECT
    assert "https://elsewhere.invalid/v1/chat/completions" in error.message
    assert "another host" in error.message and "OPENAI_BASE_URL" in error.message
    assert len(chat_server.requests) == 1


@pytest.mark.parametrize(
    ("code", "location", "words"),
    [
        (303, "/v1/result/1", "only 301, 302, 307 and 308"),
        (307, None, "without a location"),
        (300, "/v1/choices", "only 301, 302, 307 and 308"),
    ],
)
async def test_redirects_that_are_not_followed_say_what_they_are(
    chat_server: FakeChatServer, code: int, location: str | None, words: str
) -> None:
    chat_server.responder = redirect(code, location)
    error = await failure(model_for(chat_server))
    assert error.code == MODEL_REDIRECT
    assert f"HTTP {code}" in error.message and words in error.message


async def test_a_redirect_loop_stops_after_the_limit(chat_server: FakeChatServer) -> None:
    chat_server.responder = redirect(307, "/v1/chat/completions")
    error = await failure(model_for(chat_server, limits=StreamLimits(max_redirects=2)))
    assert error.code == MODEL_REDIRECT and "more than 2 times" in error.message
    assert len(chat_server.requests) == 3


async def test_a_hostile_location_is_quoted_inert_and_bounded(chat_server: FakeChatServer) -> None:
    # Control characters never pass the HTTP parser; a bidi override and sheer length do.
    chat_server.responder = redirect(302, "http://evil.invalid/\u202egnp.exe" + "a" * 5000)
    error = await failure(model_for(chat_server))
    assert error.code == MODEL_REDIRECT
    assert "evil.invalid/gnp.exe" in error.message and "\u202e" not in error.message
    assert len(error.message) < 500
