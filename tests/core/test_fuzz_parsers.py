"""A bounded fuzz of every contract parser that takes user or file input: only coded errors escape.

Each parser gets generated input (arbitrary text, adversarial token soups,
nested structures) plus the shapes that crashed or hung before as explicit
examples. "Coded" means a `CodedError` subclass; `TypeError` escapes only
where the contract says so (`stringify_tag_safe_json` of what JSON cannot hold).
The whole module runs in a few seconds.
"""

from __future__ import annotations

import base64
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sessionref.contract.errors import CodedError, SessionReferenceError
from sessionref.contract.js_json import js_json_parse, stringify_tag_safe_json
from sessionref.contract.uri import (
    decode_session_reference_uri,
    find_mention_spans,
    format_session_reference_mention,
    parse_session_reference_text,
)
from sessionref.host.settings import SettingsError, load_settings
from sessionref.service.config import SessionReferenceConfig
from sessionref.sources.registry import SOURCES

FUZZ = settings(max_examples=250, deadline=None)
DEEP = 100_000  # well past every recursion limit


def uri_of(payload: str | bytes) -> str:
    data = payload.encode("utf-8", "surrogatepass") if isinstance(payload, str) else payload
    return "dsh-session:" + base64.urlsafe_b64encode(data).decode().rstrip("=")


ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=60)
TOKENS = st.sampled_from(
    [
        "@", "[", "]", "(", ")", "\\", "dsh-session:", "ImFiYyI", "IiJ", "@[", "](", "\n", "\u2028",
        "\ufeff", "\x85", " ", "\U0001f600", "\ud83d", "\ude00", "x", "{", "}", '"', "<", ":",
    ]
)  # fmt: skip
TOKEN_SOUP = st.lists(TOKENS, max_size=60).map("".join)
MENTION_TEXT = st.one_of(ANY_TEXT, TOKEN_SOUP)
DEEP_ARRAY_URI = uri_of("[" * DEEP)
DEEP_OBJECT_URI = uri_of('{"a":' * 20_000)


# --- URIs and mentions --------------------------------------------------------------------------------


@FUZZ
@given(st.one_of(ANY_TEXT, TOKEN_SOUP, st.binary(max_size=40).map(uri_of), ANY_TEXT.map(uri_of)))
@example(DEEP_ARRAY_URI)
@example(DEEP_OBJECT_URI)
@example("dsh-session:" + "A" * 10_000_001)
@example(uri_of('"' + "\\ud83d" + "\\ude00" + '"'))
@example(uri_of("1" * 5000))
def test_decode_raises_only_the_invalid_reference_code(uri: str) -> None:
    try:
        session_id = decode_session_reference_uri(uri)
    except SessionReferenceError as error:
        assert error.code == "SESSION_REFERENCE_INVALID_REFERENCE"
        assert len(error.message) < 20_000
    else:
        assert isinstance(session_id, str)


@FUZZ
@given(MENTION_TEXT)
@example("@[" * 50_000)
@example("@[\\" * 30_000)
@example(f"see {DEEP_ARRAY_URI} and @[deep]({DEEP_OBJECT_URI})")
@example("dsh-session:" * 10_000)
@example("@[](dsh-session:" * 5_000)
def test_parse_raises_only_coded_errors_and_spans_never_raise(text: str) -> None:
    try:
        parsed = parse_session_reference_text(text)
    except SessionReferenceError as error:
        assert error.code == "SESSION_REFERENCE_INVALID_REFERENCE"
    else:
        assert isinstance(parsed.text, str)
        parsed.text.encode("utf-16", "surrogatepass")
    spans = find_mention_spans(text)
    previous_end = 0
    for span in spans:
        assert previous_end <= span.start < span.end <= len(text)
        assert span.valid == (span.error is None) == (span.session_id is not None)
        previous_end = span.end


@FUZZ
@given(ANY_TEXT, st.one_of(st.none(), ANY_TEXT))
def test_format_never_raises_for_text_and_parses_back(session_id: str, label: str | None) -> None:
    mention = format_session_reference_mention({"sessionId": session_id, "label": label})
    [reference] = parse_session_reference_text(mention).references
    assert reference.session_id == decode_session_reference_uri(mention[mention.rindex("](") + 2 : -1])


# --- JSON ---------------------------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(allow_nan=False, allow_infinity=False),
        ANY_TEXT,
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=5), st.dictionaries(ANY_TEXT, children, max_size=5)
    ),
    max_leaves=30,
)


@FUZZ
@given(JSON_VALUES)
def test_tag_safe_json_of_parsed_data_never_raises_and_round_trips(value: object) -> None:
    text = json.dumps(value, ensure_ascii=False)
    parsed = js_json_parse(text)
    serialized = stringify_tag_safe_json(parsed)
    assert "<" not in serialized
    assert js_json_parse(serialized) == parsed


JSON_SOUP = st.lists(st.sampled_from(list('[]{}",:\\ud800 0123-e.tfn')), max_size=60).map("".join)


@FUZZ
@given(st.one_of(ANY_TEXT, JSON_SOUP))
@example("[" * DEEP)
@example('{"a":' * DEEP)
@example('"' + "[" * DEEP)
@example("1" * 5000)
@example("-" + "9" * 5000 + "e5")
@example('"\\ud83d' + "\ude00" + '"')
def test_js_json_parse_raises_only_coded_errors(text: str) -> None:
    try:
        value = js_json_parse(text)
    except CodedError as error:
        assert error.code in ("JSON_INVALID", "JSON_TOO_DEEP")
        return
    if value is not None:
        stringify_tag_safe_json(value)


# --- settings, environment and config.toml ------------------------------------------------------------

ENV_NAMES = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "SESSIONREF_MODEL",
    "SESSIONREF_CONTEXT_WINDOW",
    "SESSIONREF_MODEL_TIMEOUT",
    "SESSIONREF_DEMO_PACE",
    "SESSIONREF_PLACEMENT",
]
ENV_VALUES = st.one_of(
    ANY_TEXT,
    st.sampled_from(["9" * 5000, "²", "http://[::1", "1e999", "nan", "-1", "0", "after", "\udcff"]),
)
TOML_TOKENS = st.sampled_from(
    [
        "[model]\n", "[references]\n", "[delivery]\n", "[[x]]\n", "model", "context_window", "timeout",
        "demo_pace", "base_url", "placement", "maxReferences", "referenceContextFraction", " = ", "=",
        "[", "]", "{", "}", ",", '"', "'", '"""', "#", "\n", "1", "9" * 30, "1e999", "-", "_", ".",
        "true", "nan", "inf", "\\", "http://x", "after", " ", "界",
    ]
)  # fmt: skip
TOML_TEXT = st.one_of(st.lists(TOML_TOKENS, max_size=40).map("".join), ANY_TEXT)


@pytest.fixture(scope="module")
def config_root() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as root:
        yield Path(root)


# Store roots that cannot exist: the fuzz reads `<home>/config.toml` and must stay away from real folders.
NO_HOME = "nul\0here"
HOMES = st.sampled_from(["~no-such-user-here", "~no-such-user-here/x", NO_HOME, "/nonexistent/" + "d" * 5000])


@settings(max_examples=300, deadline=None)
@given(
    env=st.dictionaries(st.sampled_from(ENV_NAMES), ENV_VALUES, max_size=4),
    config=st.one_of(st.none(), TOML_TEXT, st.binary(max_size=60)),
    home=HOMES,
)
@example(env={}, config="a = " + "[" * DEEP, home=NO_HOME)
@example(env={}, config="[references]\nmaxReferences = " + "{a = " * 5000 + "1" + "}" * 5000, home=NO_HOME)
@example(env={}, config="[model]\ncontext_window = " + "9" * 5000, home=NO_HOME)
@example(env={}, config="[model]\ntimeout = " + "9" * 4000, home=NO_HOME)
@example(env={}, config="[references]\nreferenceContextFraction = " + "9" * 400, home=NO_HOME)
@example(env={"SESSIONREF_CONTEXT_WINDOW": "9" * 5000}, config=None, home="~no-such-user-here")
def test_settings_raise_only_settings_errors(
    config_root: Path, env: dict[str, str], config: str | bytes | None, home: str
) -> None:
    path = config_root / "config.toml"
    if config is None:
        path.unlink(missing_ok=True)
    else:
        path.write_bytes(config if isinstance(config, bytes) else config.encode("utf-8", "surrogatepass"))
    try:
        load_settings(env, store_root=config_root)
        load_settings({**env, "SESSIONREF_HOME": home})  # the store root from the environment
    except SettingsError as error:
        assert error.code in ("SETTINGS_INVALID", "SETTINGS_FILE_INVALID")
        assert len(error.message) < 2_000


CONFIG_KEYS = st.sampled_from(
    ["maxReferences", "candidateLimit", "maxReferenceBytes", "referenceContextFraction", "max_references"]
)


@settings(max_examples=120, deadline=None)  # nested values are slow to generate; few keys to cover
@given(st.dictionaries(CONFIG_KEYS, JSON_VALUES, max_size=4))
@example({"referenceContextFraction": 10**400})
@example({"maxReferences": 10**400})
def test_reference_config_raises_only_invalid_config(values: dict[str, object]) -> None:
    try:
        SessionReferenceConfig.from_value(values)
    except SessionReferenceError as error:
        assert error.code == "SESSION_REFERENCE_INVALID_CONFIG"


# --- other agents' histories: huge integers, shapeless records, bad ops ---------------------------------

HUGE_INTEGERS = st.sampled_from(
    [2**53, 2**63 - 1, 2**63, 2**64, 2**70, -(2**63) - 1, 10**30, 253_402_300_800_000]
)
"""Integers beyond what SQLite (int64), JavaScript (2^53) or the clock (year 9999) can hold."""
HOSTILE_SCALARS = st.one_of(HUGE_INTEGERS, st.none(), st.booleans(), st.text(max_size=12), st.integers())
HOSTILE_VALUES = st.recursive(
    HOSTILE_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
READER_KEYS = st.sampled_from(
    [
        "type", "timestamp", "message", "payload", "content", "id", "sessionId", "cwd", "uuid",
        "parentUuid", "role", "seq", "time", "surfaceOp", "startTime", "messages", "$set", "$rewindTo",
    ]
)  # fmt: skip
SHAPELESS_RECORDS = st.dictionaries(READER_KEYS, HOSTILE_VALUES, max_size=6)
TIMES = st.one_of(
    HUGE_INTEGERS, st.sampled_from(["2026-03-02T09:00:00Z", "+275760-09-13T00:00:00Z", "0001-01-01"])
)
SHAPED_RECORDS = st.one_of(
    st.fixed_dictionaries(  # Claude Code
        {"type": st.sampled_from(["user", "assistant"]), "sessionId": st.just("s"), "timestamp": TIMES},
        optional={"message": st.fixed_dictionaries({"content": HOSTILE_VALUES}), "uuid": HOSTILE_VALUES},
    ),
    st.fixed_dictionaries(  # Codex CLI
        {"type": st.sampled_from(["session_meta", "event_msg", "response_item"]), "timestamp": TIMES},
        optional={
            "payload": st.fixed_dictionaries(
                {"type": st.sampled_from(["user_message", "agent_message", "message"])},
                optional={"message": HOSTILE_VALUES, "id": HOSTILE_VALUES, "cwd": HOSTILE_VALUES},
            )
        },
    ),
    st.fixed_dictionaries(  # Gemini CLI
        {"id": HOSTILE_VALUES, "type": st.sampled_from(["user", "gemini"]), "timestamp": TIMES},
        optional={"content": HOSTILE_VALUES, "sessionId": st.just("g"), "startTime": TIMES},
    ),
)


def _read_foreign(kind: str, root: Path, path: Path) -> object:
    """Read one file as `kind` through the public reader API (`sessionref.sources`)."""
    from sessionref.sources import claude_code, codex, gemini

    if kind == "claude-code":
        return claude_code.read_session(root, path)
    if kind == "codex":
        files = codex.CodexSessionFiles("0a0b0c0d-1111-4222-8333-444455556666", (path,))
        return codex.read_session(root, files, {})
    return gemini.read_session(root, path)


FOREIGN_KINDS = ("claude-code", "codex", "gemini")
"""The first three readers, fed one file through their own functions; every registered reader is fuzzed
in its own layout by `test_every_registered_reader_takes_hostile_records_in_its_own_layout`."""


@FUZZ
@given(st.sampled_from(FOREIGN_KINDS), st.lists(SHAPELESS_RECORDS | SHAPED_RECORDS, max_size=8))
def test_every_foreign_reader_takes_huge_integers_and_shapeless_records(
    kind: str, records: list[dict[str, object]]
) -> None:
    from sessionref.contract.log_values import is_epoch_ms, is_seq
    from sessionref.contract.projection import project_session_conversation
    from sessionref.sources import ForeignSourceError

    if kind == "gemini":
        records = [{"sessionId": "g", "startTime": "2026-03-07T11:00:00Z"}, *records]
    data = "".join(json.dumps(record) + "\n" for record in records).encode()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        path = root / "chats" / "session-x.jsonl"
        path.parent.mkdir()
        path.write_bytes(data)
        try:
            session = _read_foreign(kind, root, path)
        except ForeignSourceError:
            return
    snapshot = session.snapshot  # type: ignore[attr-defined]
    project_session_conversation(snapshot)
    for event in snapshot["events"]:
        assert is_seq(event["seq"]) and is_epoch_ms(event.get("time", 0))
    assert is_epoch_ms(snapshot["session"]["createdAt"])


@FUZZ
@given(
    st.sampled_from([info.kind for info in SOURCES]),
    st.lists(SHAPELESS_RECORDS | SHAPED_RECORDS, max_size=6),
)
def test_every_registered_reader_takes_hostile_records_in_its_own_layout(
    kind: str, records: list[dict[str, object]]
) -> None:
    """Each registered source's fixture root with every JSON Lines file replaced by hostile records:
    its walk, scan and read raise nothing but `ForeignSourceError`, and what they read is in range."""
    from histories import copy_root, discover, read_listed
    from sessionref.contract.log_values import is_epoch_ms, is_seq
    from sessionref.contract.projection import project_session_conversation
    from sessionref.sources import ForeignSourceError

    data = "".join(json.dumps(record) + "\n" for record in records).encode()
    with tempfile.TemporaryDirectory() as folder:
        root = copy_root(kind, Path(folder))
        for path in sorted(root.rglob("*.jsonl")):
            if path.is_file() and not path.is_symlink():
                path.write_bytes(data)
        try:
            summaries = discover(kind, root)
        except ForeignSourceError:
            return
        for summary in summaries:
            try:
                session = read_listed(summary, root)
            except ForeignSourceError:
                continue
            snapshot = session.snapshot
            project_session_conversation(snapshot)
            for event in snapshot["events"]:
                assert is_seq(event["seq"]) and is_epoch_ms(event.get("time", 0))
            assert is_epoch_ms(snapshot["session"]["createdAt"])
