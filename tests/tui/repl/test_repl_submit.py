"""Sending from the line mode: log order idle and running, streaming, failed prepare keeps the draft."""

from __future__ import annotations

from typing import Any

from repl_harness import Harness
from sessionref.contract.errors import ErrorCode, SessionReferenceError
from sessionref.contract.uri import SessionReference, format_session_reference_mention

ABNF = format_session_reference_mention(SessionReference("abnf-notes", "ABNF parser notes"))


def kinds(events: list[dict[str, Any]]) -> list[str]:
    """`type:source-kind` for messages, the type for everything else (chunks left out)."""
    shown = []
    for event in events:
        if event["type"] == "user/message":
            text = event["data"]["content"][0]["text"]
            shown.append(f"user/message:{event['data']['source']['kind']}:{text[:20]}")
        elif event["type"] != "assistant/chunk":
            shown.append(event["type"])
    return shown


def toolbar(harness: Harness) -> str:
    return "".join(text for _style, text in harness.mode._toolbar())


def finished_turns(harness: Harness) -> int:
    return sum(1 for event in harness.events() if event["type"] == "turn/end")


async def test_plain_message_is_sent_and_the_reply_streams_above_the_prompt(harness: Harness) -> None:
    harness.type("hello there\r")
    await harness.until(lambda: finished_turns(harness) == 1 and harness.printed("second line"))
    assert kinds(harness.events()) == [
        "turn/start",
        "step/start",
        "user/message:user:hello there",
        "assistant/message",
        "step/end",
        "turn/end",
    ]
    assert harness.printed("you › hello there")
    assert harness.printed("assistant › Hello world")
    assert harness.text == ""


async def test_an_idle_send_is_never_shown_as_queued(harness: Harness) -> None:
    harness.type("one\r")
    await harness.until(lambda: finished_turns(harness) == 1)
    harness.type(f"two {ABNF}\r")  # the session exists now: sent to its idle agent
    await harness.until(lambda: finished_turns(harness) == 2)
    assert not harness.printed("queued ›")


async def test_idle_send_with_a_mention_logs_the_snapshot_right_before_the_message(harness: Harness) -> None:
    harness.type(f"compare {ABNF} with this\r")
    await harness.until(lambda: finished_turns(harness) == 1)
    shown = kinds(harness.events())
    assert shown[:4] == [
        "turn/start",
        "step/start",
        "user/message:session-reference:## Referenced sessio",
        "user/message:user:compare @ABNF parser",
    ]
    await harness.until(lambda: harness.printed("⧉ Referenced sessions · ABNF parser notes (abnf-notes)"))


async def test_running_send_steers_with_the_same_order(harness: Harness) -> None:
    harness.model.gate.clear()
    harness.type("first\r")
    await harness.until(
        lambda: (
            harness.mode.status == "running" and any(e["type"] == "assistant/chunk" for e in harness.events())
        )
    )
    harness.type(f"also {ABNF}\r")
    await harness.until(lambda: len(harness.mode.agent.pending()) == 2)  # snapshot + prompt, one claim
    await harness.until(lambda: harness.printed("queued › also @ABNF parser notes"))
    assert "1 queued" in toolbar(harness)  # the message, not its snapshot
    harness.model.gate.set()
    await harness.until(lambda: finished_turns(harness) == 1 and harness.mode.status == "idle")
    assert kinds(harness.events()) == [
        "turn/start",
        "step/start",
        "user/message:user:first",
        "assistant/message",
        "step/end",
        "step/start",
        "user/message:session-reference:## Referenced sessio",
        "user/message:user:also @ABNF parser no",
        "assistant/message",
        "step/end",
        "turn/end",
    ]


async def test_invalid_mention_shows_the_code_and_keeps_the_draft(harness: Harness) -> None:
    draft = "look at @[bad](dsh-session:IiJ) please"
    harness.type(draft + "\r")
    await harness.until(lambda: harness.printed("SESSION_REFERENCE_INVALID_REFERENCE"))
    await harness.until(lambda: harness.text == draft)
    assert harness.events() == []


async def test_self_reference_keeps_the_draft(harness: Harness) -> None:
    me = format_session_reference_mention(SessionReference(harness.mode.agent.id, "me"))
    harness.type(f"about {me}\r")
    await harness.until(lambda: harness.printed("SESSION_REFERENCE_SELF_REFERENCE"))
    await harness.until(lambda: harness.text == f"about {me}")
    assert harness.events() == []


async def test_ctrl_c_cancels_a_prepare_in_flight_and_restores_the_draft(harness: Harness) -> None:
    started: list[Any] = []

    async def waits_for_abort(agent: Any, text: str, *, signal: Any = None) -> Any:
        started.append(signal)
        await signal.wait()
        raise SessionReferenceError(ErrorCode.CANCELLED, "session reference preparation was cancelled")

    harness.workspace.references.prepare_text = waits_for_abort  # type: ignore[method-assign]
    harness.type(f"slow {ABNF}\r")
    await harness.until(lambda: started and harness.mode.preparing)
    harness.type("\x03")
    await harness.until(lambda: harness.printed("SESSION_REFERENCE_CANCELLED"))
    await harness.until(lambda: harness.text == f"slow {ABNF}")
    assert not harness.mode.preparing
    assert harness.events() == []


async def test_enter_is_held_back_while_a_prepare_runs(harness: Harness) -> None:
    started: list[Any] = []

    async def waits_for_abort(agent: Any, text: str, *, signal: Any = None) -> Any:
        started.append(text)
        await signal.wait()
        raise SessionReferenceError(ErrorCode.CANCELLED, "cancelled")

    harness.workspace.references.prepare_text = waits_for_abort  # type: ignore[method-assign]
    harness.type("one\r")
    await harness.until(lambda: started)
    harness.type("two\r")
    await harness.until(lambda: harness.printed("still preparing"))
    assert harness.text == "two" and started == ["one"]
    harness.type("\x03")
    await harness.until(lambda: not harness.mode.preparing)
    assert harness.text == "two"  # the new draft is never clobbered by the restore
    await harness.until(lambda: harness.printed("your draft is in the history"))


async def test_ctrl_c_cancels_a_running_reply_and_keeps_what_streamed(harness: Harness) -> None:
    harness.model.gate.clear()
    harness.type("go\r")
    await harness.until(lambda: any(e["type"] == "assistant/chunk" for e in harness.events()))
    harness.type("\x03")
    await harness.until(lambda: finished_turns(harness) == 1)
    end = harness.events()[-1]
    assert end["type"] == "turn/end" and end["data"]["reason"] == "cancelled"
    replies = [e for e in harness.events() if e["type"] == "assistant/message"]
    assert replies[0]["data"]["message"]["content"][0]["text"] == "Hello "
    await harness.until(lambda: harness.printed("[turn 1 cancelled]"))
    # The log is written off the loop: the event may be printed a loop turn before the agent settles.
    await harness.until(lambda: harness.mode.status == "idle")


async def test_multiline_input_with_alt_enter_and_ctrl_j(harness: Harness) -> None:
    harness.type("one\x1b\rtwo\nthree")
    await harness.until(lambda: harness.text == "one\ntwo\nthree")
    harness.type("\r")
    await harness.until(lambda: finished_turns(harness) == 1)
    sent = [e for e in harness.events() if e["type"] == "user/message"]
    assert sent[0]["data"]["content"][0]["text"] == "one\ntwo\nthree"


async def test_ctrl_c_clears_typed_text_into_history_then_twice_on_empty_exits(harness: Harness) -> None:
    harness.type("unsent words")
    await harness.until(lambda: harness.text == "unsent words")
    harness.type("\x03")
    await harness.until(lambda: harness.text == "")
    assert "unsent words" in harness.mode.session.history.get_strings()
    harness.type("\x03")
    await harness.until(lambda: harness.printed("press Ctrl+C again"))
    assert harness.task is not None and not harness.task.done()
    harness.type("\x03")
    await harness.until(lambda: harness.task is not None and harness.task.done())
    assert harness.task.result() == 0


async def test_hostile_reply_text_is_printed_inert(harness: Harness) -> None:
    async def hostile(messages: list[dict[str, Any]]) -> Any:
        yield "ok \x1b]0;pwned\x07 \x9b31m done"

    harness.model.stream = hostile  # type: ignore[method-assign]
    harness.type("hi\r")
    await harness.until(lambda: finished_turns(harness) == 1 and harness.printed("done"))
    line = next(line for line in harness.mode.transcript.lines if "done" in line)
    assert "\x1b" not in line and "\x9b" not in line
    assert "\\x1b]0;pwned\\x07" in line


async def test_the_line_mode_starts_on_a_session_its_first_message_creates(harness: Harness) -> None:
    seeded = {"abnf-notes", "abacus-id"}
    draft = harness.mode.agent.id
    assert await harness.session_ids() == seeded
    toolbar = "".join(text for _style, text in harness.mode._toolbar())
    assert "New session" in toolbar and "untitled" not in toolbar
    harness.type("/new\r")
    await harness.until(lambda: harness.mode.agent.id != draft)
    assert await harness.session_ids() == seeded  # neither the start nor /new wrote a session
    harness.type("first words\r")
    # The log is written off the loop: turn/end may be on disk a loop turn before the agent settles.
    await harness.until(lambda: finished_turns(harness) == 1 and harness.mode.status == "idle")
    created = harness.mode.agent.id
    assert await harness.session_ids() == seeded | {created}
    assert harness.store.record(created).cwd == "/home/ana/work"
    assert harness.mode.status == "idle" and harness.printed("you › first words")
    toolbar = "".join(text for _style, text in harness.mode._toolbar())
    assert "first words" in toolbar  # its fallback title replaces "New session"


async def test_leaving_without_sending_leaves_nothing_on_disk(harness: Harness) -> None:
    harness.type("/new\r")
    await harness.until(lambda: harness.printed("── New session"))
    assert await harness.stop() == 0
    assert await harness.session_ids() == {"abnf-notes", "abacus-id"}


async def test_the_new_header_names_the_session_once(harness: Harness) -> None:
    harness.type("/new\r")
    await harness.until(lambda: harness.printed("── New session"))
    header = next(line for line in harness.mode.transcript.lines if line.startswith("── New session"))
    assert harness.mode.agent.id not in header
    assert header == "── New session · /home/ana/work · created by its first message ──"
    harness.type("/switch abacus\r")
    await harness.until(lambda: harness.printed("── Abacus"))
    assert harness.printed("── Abacus · abacus-id · /srv/else ──")


async def start_a_reply_that_waits(harness: Harness) -> None:
    """Send `first` with the model held after its first chunk."""
    harness.model.gate.clear()
    harness.type("first\r")
    await harness.until(
        lambda: (
            harness.mode.status == "running" and any(e["type"] == "assistant/chunk" for e in harness.events())
        )
    )


async def test_ctrl_c_stops_the_reply_and_puts_queued_messages_back_in_the_prompt(harness: Harness) -> None:
    await start_a_reply_that_waits(harness)
    harness.type("second\r")
    await harness.until(lambda: harness.printed("queued › second"))
    harness.type(f"third {ABNF}\r")
    await harness.until(lambda: harness.printed("queued › third @ABNF parser notes"))
    assert "2 queued" in toolbar(harness)
    assert harness.count("queued › second") == 1  # each queued message is shown once
    harness.type("still typing")
    await harness.until(lambda: harness.text == "still typing")
    harness.type("\x03")
    await harness.until(lambda: harness.printed("2 queued messages are back in the prompt"))
    assert harness.text == f"second\n\nthird {ABNF}\n\nstill typing"
    assert harness.mode.session.default_buffer.cursor_position == len(harness.text)
    await harness.until(lambda: harness.mode.status == "idle")
    assert harness.mode.agent.pending() == []  # the snapshot went with its message
    sent = [e["data"]["content"][0]["text"] for e in harness.events() if e["type"] == "user/message"]
    assert sent == ["first"]
    assert harness.events()[-1]["data"]["reason"] == "cancelled"
    assert "queued" not in toolbar(harness)


async def test_a_stopped_message_is_not_delivered_with_the_next_one(harness: Harness) -> None:
    await start_a_reply_that_waits(harness)
    harness.type("second\r")
    await harness.until(lambda: harness.printed("queued › second"))
    harness.type("\x03")
    await harness.until(lambda: harness.text == "second")
    harness.model.gate.set()
    harness.mode.session.default_buffer.text = ""
    harness.type("fresh\r")
    await harness.until(lambda: finished_turns(harness) == 2)
    last_call = [m["content"] for m in harness.model.calls[-1] if m["role"] == "user"]
    assert last_call == ["first", "fresh"]


async def test_messages_returned_for_another_session_wait_for_it(harness: Harness) -> None:
    await start_a_reply_that_waits(harness)
    harness.type("second\r")
    await harness.until(lambda: harness.printed("queued › second"))
    left = harness.mode.agent
    harness.type("/switch abacus\r")
    await harness.until(lambda: harness.mode.agent.id == "abacus-id")
    await harness.workspace.stop(left)  # e.g. the agent dropped it while another session is on screen
    await harness.until(lambda: harness.printed("1 queued message is back in the prompt of “first”"))
    assert harness.text == ""
    harness.type(f"/switch {left.id}\r")
    await harness.until(lambda: harness.text == "second")
    assert harness.printed("1 queued message that came back is in the prompt")


async def test_a_failure_the_log_cannot_record_is_printed_with_its_code(harness: Harness) -> None:
    from sessionref.store import StoreError

    original = harness.store.append

    def refuse_after_turn_start(session_id: str, events: Any, **options: Any) -> Any:
        if events[0]["type"] != "turn/start":
            raise StoreError("STORE_LOCK_TIMEOUT", "another sessionref process kept this session locked")
        return original(session_id, events, **options)

    harness.store.append = refuse_after_turn_start  # type: ignore[method-assign]
    harness.type("hello\r")
    await harness.until(lambda: harness.printed("STORE_LOCK_TIMEOUT"))
    assert harness.printed("the log could not record it")
    await harness.until(lambda: harness.mode.status == "idle")


async def test_a_second_ctrl_c_keeps_the_messages_that_came_back(harness: Harness) -> None:
    await start_a_reply_that_waits(harness)
    harness.type("second\r")
    await harness.until(lambda: harness.printed("queued › second"))
    harness.type("\x03")
    await harness.until(lambda: harness.text == "second")
    harness.type("\x03")  # pressed again by reflex, to be sure the reply stopped
    await harness.until(lambda: harness.printed("the messages that came back are in the prompt"))
    assert harness.text == "second"
    assert harness.task is not None and not harness.task.done()
    harness.type("\x03")  # now asked for: cleared into the history, and the session goes on
    await harness.until(lambda: harness.text == "")
    assert "second" in harness.mode.session.history.get_strings()
    assert not harness.task.done()
