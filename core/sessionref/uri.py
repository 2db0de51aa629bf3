"""`dsh-session:` URIs, the `@[label](uri)` mention format, and the mention parser (contract §1).

A session id travels as `dsh-session:` + unpadded base64url of the UTF-8 bytes
of its JavaScript JSON text. Only canonical URIs decode: anything else raises
`SessionReferenceError` with code `SESSION_REFERENCE_INVALID_REFERENCE`.

`parse_session_reference_text` rewrites every mention or bare URI in a prompt to
`@label` and collects the references; one bad mention fails the whole parse.
`find_mention_spans` is its non-raising twin for editors that render chips.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from sessionref.errors import (
    ContractSyntaxError,
    ContractTypeError,
    ErrorCode,
    SessionReferenceError,
)
from sessionref.jsjson import js_json_parse, json_string_literal, to_js_string

__all__ = [
    "SESSION_REFERENCE_SCHEME",
    "MentionSpan",
    "ParsedReferenceText",
    "SessionReference",
    "decode_session_reference_uri",
    "encode_session_reference_uri",
    "find_mention_spans",
    "format_session_reference_mention",
    "parse_session_reference_text",
]

SESSION_REFERENCE_SCHEME: Final = "dsh-session:"

# JavaScript's `\s` (with the `u` flag). Python's `\s` differs: it adds U+001C-U+001F and U+0085
# and lacks U+FEFF, so the class is spelled out.
_JS_WHITESPACE: Final = (
    "\t\n\u000b\u000c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_JS_LINE_TERMINATORS: Final = "\n\r\u2028\u2029"
_BASE64URL_PAYLOAD = re.compile(r"[A-Za-z0-9_-]+")
_MENTION_OR_BARE_URI = re.compile(
    r"@\[(?P<label>(?:\\[^" + _JS_LINE_TERMINATORS + r"]|[^\\\]])*)\]"
    r"\((?P<mention_uri>dsh-session:[^" + _JS_WHITESPACE + r")]*)\)"
    r"|(?P<bare_uri>dsh-session:[A-Za-z0-9_-]+)"
)
_LABEL_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_LABEL_SPECIALS = re.compile(r"[\\\]]")


@dataclass(frozen=True, slots=True)
class SessionReference:
    """One cited session: its id and the label the user sees (None means "use the id")."""

    session_id: str
    label: str | None = None


@dataclass(frozen=True, slots=True)
class ParsedReferenceText:
    """A prompt with every mention rewritten to `@label`, and the references in appearance order."""

    text: str
    references: tuple[SessionReference, ...]


@dataclass(frozen=True, slots=True)
class MentionSpan:
    """Where one mention (`kind="mention"`) or bare URI (`kind="bare"`) sits in a text.

    `start`/`end` are Python string indices of the whole match. For a valid URI
    `session_id` is the decoded id and `label` what parsing would show; for an
    invalid one `valid` is False, `session_id` is None, and `error` says why.
    """

    start: int
    end: int
    kind: Literal["mention", "bare"]
    uri: str
    session_id: str | None
    label: str | None
    valid: bool
    error: SessionReferenceError | None = None


def encode_session_reference_uri(session_id: str) -> str:
    """The canonical URI of `session_id`: scheme + unpadded base64url of UTF-8 `JSON.stringify(id)`."""
    if not isinstance(session_id, str):
        raise TypeError("session id must be a string")
    payload = json_string_literal(to_js_string(session_id)).encode("utf-8")
    return SESSION_REFERENCE_SCHEME + base64.urlsafe_b64encode(payload).decode("ascii").rstrip("=")


def _invalid_uri(uri: str, cause: BaseException | None = None) -> SessionReferenceError:
    return SessionReferenceError(
        ErrorCode.INVALID_REFERENCE,
        "invalid session reference URI " + json_string_literal(to_js_string(uri)),
        cause=cause,
    )


def _lenient_base64url(payload: str) -> bytes:
    """Node's `Buffer.from(payload, "base64url")`: a dangling 1-char group is dropped, spare bits ignored."""
    usable = len(payload) - (1 if len(payload) % 4 == 1 else 0)
    trimmed = payload[:usable]
    return base64.urlsafe_b64decode(trimmed + "=" * (-len(trimmed) % 4))


def decode_session_reference_uri(uri: str) -> str:
    """The session id of a canonical `dsh-session:` URI.

    Raises `SessionReferenceError` (`SESSION_REFERENCE_INVALID_REFERENCE`, message
    `invalid session reference URI "<uri>"`) for a wrong scheme, a payload that is
    not base64url, JSON that is not a string, or any non-canonical spelling.
    """
    if not isinstance(uri, str):
        raise SessionReferenceError(
            ErrorCode.INVALID_REFERENCE, "invalid session reference URI " + json_string_literal(str(uri))
        )
    if not uri.startswith(SESSION_REFERENCE_SCHEME):
        raise _invalid_uri(uri)
    payload = uri[len(SESSION_REFERENCE_SCHEME) :]
    if _BASE64URL_PAYLOAD.fullmatch(payload) is None:
        raise _invalid_uri(uri)
    try:
        raw = _lenient_base64url(payload)
    except (binascii.Error, ValueError) as error:  # unreachable after the regex check; kept defensive
        cause = ContractSyntaxError(str(error))
        raise _invalid_uri(uri, cause) from cause
    try:
        value = js_json_parse(raw.decode("utf-8", "replace"))
    except ValueError as error:
        cause = ContractSyntaxError(str(error))
        raise _invalid_uri(uri, cause) from cause
    if not isinstance(value, str):
        raise _invalid_uri(uri, ContractTypeError("decoded session id is not a string"))
    if encode_session_reference_uri(value) != uri:
        raise _invalid_uri(uri, ContractTypeError("URI is not canonical"))
    return value


def _reference_fields(ref: SessionReference | Mapping[str, Any]) -> tuple[str, str | None]:
    if isinstance(ref, SessionReference):
        return ref.session_id, ref.label
    session_id = ref.get("sessionId")
    label = ref.get("label")
    if not isinstance(session_id, str) or not (label is None or isinstance(label, str)):
        raise TypeError("a session reference needs a string sessionId and an optional string label")
    return session_id, label


def format_session_reference_mention(ref: SessionReference | Mapping[str, Any]) -> str:
    """`@[label](uri)` for `ref`, the label defaulting to the id; `\\` and `]` in it get a backslash."""
    session_id, label = _reference_fields(ref)
    shown = session_id if label is None else label
    escaped = _LABEL_SPECIALS.sub(lambda match: "\\" + match.group(), shown)
    return f"@[{escaped}]({encode_session_reference_uri(session_id)})"


def _unescape_label(raw: str) -> str:
    return _LABEL_ESCAPE.sub(lambda match: match.group(1), raw)


def _resolve(match: re.Match[str]) -> SessionReference:
    """Decode one regex match into its reference (raises on an invalid URI)."""
    bare_uri = match.group("bare_uri")
    if bare_uri is not None:
        session_id = decode_session_reference_uri(bare_uri)
        return SessionReference(session_id, session_id)
    session_id = decode_session_reference_uri(match.group("mention_uri"))
    return SessionReference(session_id, _unescape_label(match.group("label")))


def parse_session_reference_text(text: str) -> ParsedReferenceText:
    """Rewrite every mention and bare URI in `text` to `@label` and list the references.

    References keep appearance order and duplicates. Any invalid URI raises
    `SessionReferenceError` (`SESSION_REFERENCE_INVALID_REFERENCE`) and nothing is returned.
    """
    references: list[SessionReference] = []

    def replace(match: re.Match[str]) -> str:
        reference = _resolve(match)
        references.append(reference)
        return "@" + (reference.label or "")

    rewritten = _MENTION_OR_BARE_URI.sub(replace, to_js_string(text))
    return ParsedReferenceText(rewritten, tuple(references))


def find_mention_spans(text: str) -> list[MentionSpan]:
    """Every mention and bare URI in `text` with its position; never raises for invalid ones.

    Positions index `text` as given. A text carrying surrogate pairs as two code
    points is scanned as a JavaScript string but positions still refer to `text`.
    """
    scanned = to_js_string(text)
    offsets = _index_map(text, scanned)
    spans: list[MentionSpan] = []
    for match in _MENTION_OR_BARE_URI.finditer(scanned):
        kind: Literal["mention", "bare"] = "bare" if match.group("bare_uri") is not None else "mention"
        uri = match.group("bare_uri") or match.group("mention_uri")
        start, end = offsets[match.start()], offsets[match.end()]
        try:
            reference = _resolve(match)
        except SessionReferenceError as error:
            label = None if kind == "bare" else _unescape_label(match.group("label"))
            spans.append(MentionSpan(start, end, kind, uri, None, label, False, error))
        else:
            spans.append(MentionSpan(start, end, kind, uri, reference.session_id, reference.label, True))
    return spans


def _index_map(original: str, scanned: str) -> list[int]:
    """For each index of `scanned` (plus its end), the matching index in `original`."""
    if len(original) == len(scanned):
        return list(range(len(original) + 1))
    mapping: list[int] = []
    position = 0
    for character in scanned:
        mapping.append(position)
        position += 2 if ord(character) > 0xFFFF and original[position] != character else 1
    mapping.append(position)
    return mapping
