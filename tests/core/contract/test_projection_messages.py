"""The unreachable-event error quotes the event, byte-exact up to a bound and as an excerpt beyond it."""

from __future__ import annotations

from sessionref.contract.projection import (
    QUOTED_EVENT_EXCERPT,
    QUOTED_EVENT_LIMIT,
    UnreachableSurfaceEventError,
    project_session_conversation,
)

PREFIX = "unreachable variant in session-reference surface event: "


def unreachable_message(event: dict[str, object]) -> str:
    try:
        project_session_conversation({"events": [event]})
    except UnreachableSurfaceEventError as error:
        return str(error)
    raise AssertionError("the event was projected")


def test_an_event_up_to_the_bound_is_quoted_whole() -> None:
    frame = len('{"type":"odd","data":""}')
    event = {"type": "odd", "data": "x" * (QUOTED_EVENT_LIMIT - frame)}
    assert unreachable_message(event) == PREFIX + '{"type":"odd","data":"' + event["data"] + '"}'


def test_a_ten_megabyte_event_is_quoted_as_an_excerpt() -> None:
    data = "x" * 10_000_000
    message = unreachable_message({"type": "odd", "data": data})
    shown = len('{"type":"odd","data":""}') + len(data)
    assert message.startswith(PREFIX + '{"type":"odd","data":"xxx')
    assert message.endswith('xx"}')
    assert f"[{shown - QUOTED_EVENT_EXCERPT} characters left out]" in message
    assert len(message) < len(PREFIX) + QUOTED_EVENT_EXCERPT + 100
