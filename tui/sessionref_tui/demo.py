"""Seed a store with realistic sessions so `sessionref demo` has something worth mentioning.

Everything is written through the store API, like a real conversation would be:
sessions in this folder and in others, of different ages, one compacted, one long
enough to be truncated when referenced, one untitled without a cwd, one whose
title carries an escape sequence and Rich markup (to show that both stay inert).
The app itself starts on a new session that only exists once its first message is sent.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from sessionref.agent import make_user_message

DEMO_NAMESPACE = uuid.UUID("5e55104e-f00d-4cab-9a1e-000000000000")
"""Session ids are derived from this namespace, so a seeded store is the same on every run."""

MINUTE_MS = 60_000
HOUR_MS = 60 * MINUTE_MS
DAY_MS = 24 * HOUR_MS

HOSTILE_TITLE = "\x1b[31mRED ALERT\x1b[0m [bold]not bold[/bold] \x1b]0;owned\x07notes"
"""A title written by a hostile tool: it must show up as plain text everywhere."""


def demo_session_id(name: str) -> str:
    """The deterministic id of the demo session called `name`."""
    return str(uuid.uuid5(DEMO_NAMESPACE, name))


def _assistant(turn: int, text: str) -> dict[str, Any]:
    return {
        "type": "assistant/message",
        "data": {
            "turn": turn,
            "step": 1,
            "message": {
                "id": str(uuid.uuid5(DEMO_NAMESPACE, f"reply-{turn}-{text[:40]}")),
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "source": {"kind": "model", "provider": "demo", "model": "demo"},
            },
        },
        "surfaceOp": "append",
    }


RUNTIME_CONTEXT: tuple[str, str] = (
    "dsh-runtime-context",
    "Working directory: /srv/billing-service · branch main · Postgres 12.17 in production, 16.4 in staging.",
)
"""What a DSH plugin injects before a session's first prompt: the transcript shows it as a
"Context from dsh-runtime-context" row, never as the user's words (docs/app.md)."""


def _write_conversation(
    store: Any,
    session_id: str,
    exchanges: list[tuple[str, str]],
    start_ms: int,
    context: tuple[str, str] | None = None,
) -> int:
    """Append each (prompt, reply) as one complete turn, framed like the agent frames it, a minute apart;
    `context` (plugin, text) is injected before the first prompt, as a plugin does.

    Returns the time of the last turn (the session's last activity).
    """
    turn = 0
    for turn, (prompt, reply) in enumerate(exchanges, start=1):
        message = make_user_message(prompt)
        message["id"] = str(uuid.uuid5(DEMO_NAMESPACE, f"{session_id}-prompt-{turn}"))
        injected: list[dict[str, Any]] = []
        if context is not None and turn == 1:
            plugin, text = context
            context_message = make_user_message(text, {"kind": "plugin", "plugin": plugin})
            context_message["id"] = str(uuid.uuid5(DEMO_NAMESPACE, f"{session_id}-context"))
            injected.append({"type": "user/message", "data": context_message, "surfaceOp": "append"})
        store.append(
            session_id,
            [
                {"type": "turn/start", "data": {"turn": turn}},
                {"type": "step/start", "data": {"turn": turn, "step": 1}},
                *injected,
                {"type": "user/message", "data": message, "surfaceOp": "append"},
                _assistant(turn, reply),
                {"type": "step/end", "data": {"turn": turn, "step": 1}},
                {"type": "turn/end", "data": {"turn": turn, "reason": "completed"}},
            ],
            time_ms=start_ms + turn * MINUTE_MS,
        )
    return start_ms + turn * MINUTE_MS


def _new(store: Any, name: str, *, cwd: str | None, age_ms: int, now_ms: int) -> str:
    record = store.create_session(cwd=cwd, session_id=demo_session_id(name), created_at=now_ms - age_ms)
    return str(record.id)


RETRY_TALK: list[tuple[str, str]] = [
    (
        "The payments retry test fails about one run in twenty. "
        "It asserts three attempts but sometimes sees two.",
        "That pattern usually means the test races the backoff timer. The retry loop sleeps with jitter, and "
        "the assertion runs when the second attempt has finished but the third has not started.\n\n"
        "Two fixes:\n\n1. Inject the clock and advance it explicitly.\n"
        "2. Await an event the client sets after each attempt instead of sleeping.",
    ),
    (
        "Let's inject the clock. Where should it live?",
        "Pass a `Clock` protocol into `RetryPolicy` with `now()` and `sleep()`. "
        "Production uses the real one; the test uses a `FakeClock` whose `sleep()` records the delay "
        "and returns at once. The assertion then checks the recorded delays: "
        "`[0.2, 0.4]` with jitter disabled.",
    ),
    (
        "Done, 500 runs green. Anything else to watch?",
        "Keep the jitter test separate: seed the random source and assert the delays stay within ±20 %. "
        "And make the retry budget explicit (max 3 attempts, 2 s total) so a slow CI box cannot stretch it.",
    ),
]

INDEX_TALK: list[tuple[str, str]] = [
    (
        "We need to list 100k sessions by title without reading every log. Ideas?",
        "Keep a small SQLite index next to the logs: id, cwd, created_at, the latest title, and how far each "
        "log has been indexed (byte offset plus size and mtime). Discovery reads only the index; a log is "
        "opened when someone actually references it.",
    ),
    (
        "How do we keep it fresh when another process appends?",
        "On open and on refresh, compare size/mtime with the indexed values and catch up from the stored "
        "offset. Titles come from `session/title` events, so the catch-up only has to scan the new tail.",
    ),
    (
        "And the search itself?",
        "A case-insensitive substring match over id, cwd and title, ranked by same folder first, then "
        "recency. With an index on (cwd, created_at) it stays well under a frame at 100k rows.",
    ),
]

RELEASE_TALK: list[tuple[str, str]] = [
    (
        "Draft the v2.3 release checklist.",
        "1. Freeze main\n2. Run the full suite\n3. Tag\n4. Build wheels\n5. Notes",
    ),
    (
        "Add a smoke test on a clean VM.",
        "Added step 4a: install the wheel on a fresh VM and run `sessionref demo`.",
    ),
    ("Who signs off?", "The release captain for the week, after the smoke test passes."),
]

RELEASE_SUMMARY = (
    "Release v2.3 checklist agreed: freeze main, full suite, tag, build wheels, smoke test on a clean VM "
    "(install the wheel, run the demo), release notes. "
    "The weekly release captain signs off after the smoke test."
)

MIGRATION_TALK: list[tuple[str, str]] = [
    (
        "Plan the Postgres 16 migration for billing.",
        "Logical replication to a new cluster, dual-read for a day, then switch writes during the Tuesday "
        "window. Rollback = point the app back at the old primary; keep it for a week.",
    ),
    (
        "What about the invoice sequence?",
        "Sequences are not replicated logically. Before the switch, set the new sequence to the old value "
        "plus a safety gap of 10,000.",
    ),
]

TRIP_TALK: list[tuple[str, str]] = [
    (
        "Ideas for a rainy weekend in Lisbon?",
        "Azulejo museum, LX Factory, a long lunch in Alfama, fado at night.",
    ),
]

UNTITLED_TALK: list[tuple[str, str]] = [
    ("quick question: what does `git rebase --onto` do?", "It replays a range of commits onto a new base."),
]

HOSTILE_TALK: list[tuple[str, str]] = [
    (
        "Paste from a tool log: \x1b[2J\x1b[Hcleared? [red]red?[/red]",
        "Escape sequences and markup in this session are shown as plain text, never interpreted.",
    ),
]


def _long_incident_talk() -> list[tuple[str, str]]:
    """About 90 KB of conversation: more than one reference budget, so referencing it truncates."""
    paragraph = (
        "At {t} the cache hit rate dropped from 97% to 41% as the hourly keys expired together; every "
        "miss went to Postgres, connection pools saturated and p99 latency went from 80 ms to 4.2 s. "
    )
    exchanges: list[tuple[str, str]] = []
    for hour in range(36):
        stamp = f"14:{hour:02d}"
        exchanges.append(
            (
                f"Timeline entry {hour + 1}: what happened at {stamp}?",
                (paragraph.format(t=stamp) * 12)
                + f"\n\nAction item {hour + 1}: add jitter to the TTL of key family #{hour % 7}.",
            )
        )
    exchanges.append(
        (
            "Summarise the fix.",
            "Jittered TTLs, request coalescing per key and a circuit breaker on the DB pool.",
        )
    )
    return exchanges


def _steady_age(age_ms: int) -> int:
    """`age_ms` plus half of the unit its age is shown in (hours, days or weeks, as `relative_age`)."""
    unit = max((u for u in (HOUR_MS, DAY_MS, 7 * DAY_MS) if u <= age_ms), default=MINUTE_MS)
    return age_ms + unit // 2


def seed_demo_store(store: Any, cwd: str, *, now_ms: int | None = None) -> list[str]:
    """Write the demo sessions and return their ids, newest first.

    Ids are deterministic (`demo_session_id`), ages are relative to `now_ms` (default: now).
    No empty session is written: the app starts on a draft session created by its first message.
    """
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    elsewhere = "/srv/billing-service"
    notes = "/home/ana/notes"
    plan: list[tuple[str, str | None, int, list[tuple[str, str]], str | None]] = [
        ("retry", cwd, 2 * HOUR_MS, RETRY_TALK, "Fix flaky retry test in payments"),
        ("index", cwd, 1 * DAY_MS, INDEX_TALK, "Design: session search index"),
        ("release", cwd, 3 * DAY_MS, RELEASE_TALK, "Release checklist v2.3"),
        ("migration", elsewhere, 5 * DAY_MS, MIGRATION_TALK, "Postgres 16 migration plan"),
        ("incident", elsewhere, 15 * DAY_MS, _long_incident_talk(), "Incident review: cache stampede (long)"),
        ("hostile", notes, 22 * DAY_MS, HOSTILE_TALK, HOSTILE_TITLE),
        ("untitled", None, 35 * DAY_MS, UNTITLED_TALK, None),
        ("trip", notes, 60 * DAY_MS, TRIP_TALK, "Weekend in Lisbon"),
    ]
    ids: list[str] = []
    for name, session_cwd, age, talk, title in plan:
        # Last active `age` and half an age unit ago ("2h" stays "2h" for half an hour, "3d" half a
        # day): ages do not tick over moments after the demo starts. Created a minute per turn earlier.
        steady = _steady_age(age)
        session_id = _new(store, name, cwd=session_cwd, age_ms=steady + len(talk) * MINUTE_MS, now_ms=now)
        # Stamped at its age, not at seeding time: the picker orders sessions by last activity.
        context = RUNTIME_CONTEXT if name == "migration" else None
        last = _write_conversation(store, session_id, talk, now - steady - len(talk) * MINUTE_MS, context)
        if title is not None:
            store.rename(session_id, title, time_ms=last)
        ids.append(session_id)
        if name == "release":
            compaction_id = "demo-compaction-1"
            store.write_compaction(session_id, RELEASE_SUMMARY, compaction_id=compaction_id, time_ms=last)
    return ids
