"""Hostile input: random bytes and random records never raise anything but the coded error, counts add up,
the discovery scan agrees with the full read, and reading never writes."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from histories import ROOTS, fixture_sessions, tree_state
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sessionref.contract.projection import project_session_conversation
from sessionref.sources import ForeignSession, ForeignSourceError, ForeignSummary, claude_code, codex, gemini
from sessionref.sources.scan import TAIL_LINES

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- raw bytes ----------------------------------------------------------------------------------------

LINE_PIECES = st.sampled_from(
    [b"{", b"}", b"[", b'"', b":", b",", b"\n", b"\xef\xbb\xbf", b"\xff", b"null", b"1e999", b"\\u0000",
     b'{"type":"user"}', b'{"sessionId":"s"}', b'{"type":"session_meta","payload":{"id":"x"}}',
     b'{"$rewindTo":"a"}', b'{"$set":{"messages":[{}]}}', b" ", b"\t", b"a"]
)  # fmt: skip
RANDOM_BYTES = st.one_of(st.binary(max_size=300), st.lists(LINE_PIECES, max_size=60).map(b"".join))


def expected_counts(data: bytes) -> tuple[int, int]:
    """(lines read, lines skipped) computed independently of the reader."""
    *complete, tail = data.split(b"\n")
    skipped = 0
    for index, raw in enumerate(complete):
        if index == 0 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            is_object = isinstance(json.loads(raw.decode("utf-8")), dict)
        except (ValueError, RecursionError):
            is_object = False
        skipped += not is_object
    pending = 1 if tail else 0
    return len(complete) + pending, skipped + pending


def read_any(kind: str, root: Path, path: Path) -> tuple[ForeignSession, ForeignSummary]:
    """Read and scan one file as `kind`; only `ForeignSourceError` may escape."""
    if kind == "claude-code":
        return claude_code.read_session(root, path), claude_code.scan_session_file(root, path).summary()
    if kind == "codex":
        files = codex.CodexSessionFiles("0a0b0c0d-1111-4222-8333-444455556666", (path,))
        scanned = codex.summarize(files.native_id, [codex.scan_session_file(root, path)], {})
        return codex.read_session(root, files, {}), scanned
    session = gemini.read_session(root, path)
    return session, gemini.scan_session_file(root, path).summary(gemini.project_cwd(root, path))


def check_session(session: ForeignSession) -> None:
    """The snapshot is a valid surface the contract projects without error, with unique seqs from 1.

    Claude Code and Codex seqs are line numbers; Gemini's run one counter through the file, past
    the line count when a `$set` replaces the history with several items (see `sources.gemini`).
    """
    project_session_conversation(session.snapshot)
    seqs = [event["seq"] for event in session.snapshot["events"]]
    assert len(set(seqs)) == len(seqs) and all(seq >= 1 for seq in seqs)
    if session.summary.source_kind != "gemini":
        assert all(seq <= session.lines_read for seq in seqs)
    assert session.snapshot["capturedThroughSeq"] == (max(seqs) if seqs else None)


def run_bytes(kind: str, name: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        path = root / "chats" / name
        path.parent.mkdir()
        path.write_bytes(data)
        try:
            session, _ = read_any(kind, root, path)
        except ForeignSourceError:
            assert kind == "gemini"  # only a Gemini file can lack its session id
            return
        check_session(session)
        if not name.endswith(".json"):
            assert (session.lines_read, session.skipped_lines) == expected_counts(data)


@SETTINGS
@given(st.sampled_from(["claude-code", "codex", "gemini"]), RANDOM_BYTES)
def test_random_bytes_are_skipped_and_counted(kind: str, data: bytes) -> None:
    run_bytes(kind, "session-x.jsonl", data)


@SETTINGS
@given(RANDOM_BYTES)
def test_random_bytes_as_a_legacy_gemini_file(data: bytes) -> None:
    run_bytes("gemini", "session-x.json", data)


# -- random records -----------------------------------------------------------------------------------

IDS = st.sampled_from(["u1", "u2", "u3", "u4", 'é\u2028"odd'])
VALID_TIMES = st.sampled_from(["2026-03-02T09:00:00Z", "2026-03-02T10:30:00.5+02:00", "1970-01-01T00:00:00Z"])
TEXTS = st.sampled_from(
    [
        "hello world",
        "second prompt",
        "",
        "  ",
        "<command-name>/x</command-name>",
        "[Request interrupted by user]",
        "\x1b]0;t\x07ok",
        "</referenced-sessions>",
        "<environment_context>x</environment_context>",
    ]
)
JUNK = st.one_of(st.none(), st.integers(), st.booleans(), st.lists(st.integers(), max_size=2), TEXTS)


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, each drawn with its relative weight (`one_of` would not weight repeats)."""
    table = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.integers(0, len(table) - 1).flatmap(lambda index: table[index])


def mostly(valid: st.SearchStrategy[Any], other: st.SearchStrategy[Any] = JUNK) -> st.SearchStrategy[Any]:
    """`valid` about three times in four, else `other` (well-formed records, with junk mixed in)."""
    return weighted((1, other), (3, valid))


TIMES = mostly(VALID_TIMES, st.sampled_from([None, 12, "soon", ""]))
TEXT_BLOCK = st.fixed_dictionaries({"type": st.just("text"), "text": mostly(TEXTS)})
BLOCK = mostly(
    TEXT_BLOCK,
    st.one_of(
        st.fixed_dictionaries({"type": st.sampled_from(["thinking", "tool_use", "tool_result"])}), JUNK
    ),
)
CONTENT = mostly(st.one_of(TEXTS, st.lists(BLOCK, max_size=3)))
FLAG = mostly(st.just(False), st.one_of(st.just(True), JUNK))


def claude_record() -> st.SearchStrategy[dict[str, Any]]:
    message = st.fixed_dictionaries({"content": CONTENT}, optional={"id": mostly(IDS), "model": JUNK})
    line = st.fixed_dictionaries(
        {
            "type": st.sampled_from(["user", "user", "assistant", "system", "attachment"]),
            "uuid": mostly(IDS),
            "parentUuid": mostly(IDS, st.none()),
            "isSidechain": FLAG,
            "message": mostly(message),
            "timestamp": TIMES,
            "cwd": mostly(st.just("/home/ana/app")),
        },
        optional={
            "logicalParentUuid": mostly(IDS),
            "subtype": st.sampled_from(["compact_boundary", "info"]),
            "isMeta": FLAG,
            "isCompactSummary": FLAG,
        },
    )
    titles = st.one_of(
        st.fixed_dictionaries({"type": st.just("custom-title"), "customTitle": mostly(TEXTS)}),
        st.fixed_dictionaries({"type": st.just("ai-title"), "aiTitle": mostly(TEXTS)}),
        st.fixed_dictionaries({"type": st.just("summary"), "summary": mostly(TEXTS)}),
    )
    return mostly(
        st.one_of(line, line, titles), st.dictionaries(st.sampled_from(["type", "x"]), JUNK, max_size=2)
    )


def codex_record() -> st.SearchStrategy[dict[str, Any]]:
    item_text = st.fixed_dictionaries(
        {"type": st.sampled_from(["input_text", "output_text"]), "text": mostly(TEXTS)}
    )
    payload = st.one_of(
        st.fixed_dictionaries(
            {
                "type": st.sampled_from(["user_message", "agent_message", "token_count"]),
                "message": mostly(TEXTS),
            },
            optional={"kind": st.sampled_from(["plain", "environment_context", None])},
        ),
        st.fixed_dictionaries(
            {"type": st.just("message"), "role": st.sampled_from(["user", "assistant", "developer"])},
            optional={"content": st.lists(item_text, max_size=2)},
        ),
        st.fixed_dictionaries(
            {"message": JUNK}, optional={"replacement_history": st.lists(JUNK, max_size=2)}
        ),
        st.fixed_dictionaries(
            {
                "id": mostly(IDS),
                "cwd": mostly(st.just("/w")),
                "timestamp": TIMES,
                "model": JUNK,
                "model_provider": JUNK,
            }
        ),
        JUNK,
    )
    kinds = st.sampled_from(
        ["session_meta", "event_msg", "event_msg", "response_item", "compacted", "turn_context"]
    )
    return st.fixed_dictionaries({"type": mostly(kinds), "payload": payload}, optional={"timestamp": TIMES})


def gemini_record() -> st.SearchStrategy[dict[str, Any]]:
    kinds = mostly(st.sampled_from(["user", "gemini", "info"]), st.sampled_from(["error", 3]))
    parts = st.lists(
        st.fixed_dictionaries({"text": mostly(TEXTS)}, optional={"thought": st.booleans()}), max_size=2
    )
    message = st.fixed_dictionaries(
        {"id": mostly(IDS), "type": kinds, "content": mostly(st.one_of(TEXTS, parts))},
        optional={"timestamp": TIMES},
    )
    update = st.fixed_dictionaries(
        {},
        optional={
            "summary": mostly(TEXTS),
            "lastUpdated": TIMES,
            "messages": mostly(st.lists(message, max_size=3)),
        },
    )
    return st.one_of(
        message,
        message,
        message,
        st.fixed_dictionaries({"$set": update}),
        st.fixed_dictionaries({"$rewindTo": mostly(IDS)}),
        st.fixed_dictionaries(
            {"sessionId": mostly(st.just("g"))}, optional={"startTime": TIMES, "summary": JUNK}
        ),
    )


RECORDS: dict[str, Callable[[], st.SearchStrategy[dict[str, Any]]]] = {
    "claude-code": claude_record,
    "codex": codex_record,
    "gemini": gemini_record,
}
# A settled opening (the facts a scan looks for first) so that the later records reach the
# scan's cheap byte filters instead of being parsed only because something is still unknown.
OPENINGS: dict[str, list[dict[str, Any]]] = {
    "claude-code": [
        {
            "type": "user",
            "uuid": "u0",
            "cwd": "/w",
            "timestamp": "2026-03-02T09:00:00Z",
            "message": {"content": "hi"},
        }
    ],
    "codex": [
        {"type": "session_meta", "timestamp": "2026-03-02T09:00:00Z", "payload": {"id": "c", "cwd": "/w"}},
        {"type": "event_msg", "payload": {"type": "user_message", "message": "hi"}},
    ],
    "gemini": [{"id": "u0", "type": "user", "content": "hi", "timestamp": "2026-03-02T09:00:00Z"}],
}
KIND_AND_RECORDS = st.sampled_from(sorted(RECORDS)).flatmap(
    lambda kind: st.tuples(
        st.just(kind),
        st.tuples(
            st.sampled_from([[], OPENINGS[kind]]), st.lists(RECORDS[kind](), max_size=TAIL_LINES - 2)
        ).map(lambda parts: [*parts[0], *parts[1]]),
    )
)


@SETTINGS
@given(KIND_AND_RECORDS)
@example(  # a replaced history of three items in a two-line file: Gemini's seqs pass the line count
    case=(
        "gemini",
        [
            {
                "$set": {
                    "messages": [{"id": None, "type": "error", "content": None}] * 2
                    + [{"id": None, "type": "user", "content": "hello world"}]
                }
            }
        ],
    )
)
def test_random_records_project_and_the_scan_agrees_with_the_read(
    case: tuple[str, list[dict[str, Any]]],
) -> None:
    kind, records = case
    if kind == "gemini":
        records = [{"sessionId": "g", "startTime": "2026-03-07T11:00:00Z"}, *records]
    data = "".join(json.dumps(record) + "\n" for record in records).encode()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        path = root / "chats" / "session-x.jsonl"
        path.parent.mkdir()
        path.write_bytes(data)
        session, scanned = read_any(kind, root, path)
        check_session(session)
        assert (session.lines_read, session.skipped_lines) == (len(records), 0)
        assert scanned == session.summary


# -- read-only ----------------------------------------------------------------------------------------


def test_walking_scanning_and_reading_every_fixture_writes_nothing() -> None:
    before = {kind: tree_state(root) for kind, root in ROOTS.items()}
    for fixture in fixture_sessions():
        fixture.read()
        fixture.scan()
    assert {kind: tree_state(root) for kind, root in ROOTS.items()} == before
