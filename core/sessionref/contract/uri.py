"""`dsh-session:` URIs, the `@[label](uri)` mention format, and the mention parser (docs/contract.md §1).

A session id travels as `dsh-session:` + unpadded base64url of the UTF-8 bytes
of its JavaScript JSON text. Only canonical URIs decode: anything else raises
`SessionReferenceError` with code `SESSION_REFERENCE_INVALID_REFERENCE`.

`parse_session_reference_text` rewrites every mention or bare URI in a prompt to
`@label` and collects the references; one bad mention fails the whole parse.
`find_mention_spans` is its non-raising twin for editors that render chips.
Both take time linear in the text (`sessionref.contract.mention_scanner`), so pasting
megabytes of adversarial text cannot freeze an editor.

Strings are JavaScript strings (UTF-16): where unescaping a label or rewriting
the text puts a high surrogate right before a low one, the result holds the
one astral character JavaScript would see, not two lone surrogates.

Error messages quote the bad URI as JavaScript JSON, byte-exact as upstream for
every URI of up to `QUOTED_URI_LIMIT` characters (16 Ki; the longest in the
upstream vectors has about 8,800). A longer URI is quoted as an excerpt of
`QUOTED_URI_EXCERPT` characters, its head and tail around
`…[N characters left out]…` (`sessionref.contract.excerpts`), so a 10 MB paste never
becomes a 10 MB message.
A payload whose JSON nests deeper than `sessionref.contract.js_json.MAX_JSON_DEPTH` is
invalid like any other non-string payload (its cause is a `RangeError`).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from sessionref.contract.errors import (
    ContractRangeError,
    ContractSyntaxError,
    ContractTypeError,
    ErrorCode,
    SessionReferenceError,
)
from sessionref.contract.excerpts import bounded_excerpt
from sessionref.contract.js_json import has_surrogates, js_json_parse, json_string_literal, to_js_string
from sessionref.contract.mention_scanner import MentionMatch, scan_mentions

__all__ = [
    "QUOTED_URI_EXCERPT",
    "QUOTED_URI_LIMIT",
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
QUOTED_URI_LIMIT: Final = 16_384
"""URIs of up to this many characters are quoted whole (byte-exact as upstream) in error messages."""
QUOTED_URI_EXCERPT: Final = 1_024
"""How many characters of a longer URI an error message quotes (from both ends)."""

_BASE64URL_PAYLOAD = re.compile(r"[A-Za-z0-9_-]+")
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


def _quoted_uri(uri: str) -> str:
    """`uri` as a JavaScript JSON string literal, shortened to a head…tail excerpt past `QUOTED_URI_LIMIT`."""
    shown = to_js_string(uri)
    if len(shown) > QUOTED_URI_LIMIT:
        shown = bounded_excerpt(shown, QUOTED_URI_EXCERPT)
    return json_string_literal(shown)


def _invalid_uri(uri: str, cause: BaseException | None = None) -> SessionReferenceError:
    return SessionReferenceError(
        ErrorCode.INVALID_REFERENCE, "invalid session reference URI " + _quoted_uri(uri), cause=cause
    )


def _lenient_base64url(payload: str) -> bytes:
    """Node's `Buffer.from(payload, "base64url")`: a dangling 1-char group is dropped, spare bits ignored."""
    usable = len(payload) - (1 if len(payload) % 4 == 1 else 0)
    trimmed = payload[:usable]
    return base64.urlsafe_b64decode(trimmed + "=" * (-len(trimmed) % 4))


def _decode(uri: str) -> str | SessionReferenceError:
    """The session id of `uri`, or the error to raise for it (built, never raised, so no traceback)."""
    if not uri.startswith(SESSION_REFERENCE_SCHEME):
        return _invalid_uri(uri)
    payload = uri[len(SESSION_REFERENCE_SCHEME) :]
    if _BASE64URL_PAYLOAD.fullmatch(payload) is None:
        return _invalid_uri(uri)
    try:
        raw = _lenient_base64url(payload)
    except (binascii.Error, ValueError) as error:  # unreachable after the regex check; kept defensive
        return _invalid_uri(uri, ContractSyntaxError(str(error)))
    try:
        value = js_json_parse(raw.decode("utf-8", "replace"))
    except (ContractSyntaxError, ContractRangeError) as error:
        return _invalid_uri(uri, error.with_traceback(None))
    if not isinstance(value, str):
        return _invalid_uri(uri, ContractTypeError("decoded session id is not a string"))
    if encode_session_reference_uri(value) != uri:
        return _invalid_uri(uri, ContractTypeError("URI is not canonical"))
    return value


def decode_session_reference_uri(uri: str) -> str:
    """The session id of a canonical `dsh-session:` URI.

    Raises `SessionReferenceError` (`SESSION_REFERENCE_INVALID_REFERENCE`, message
    `invalid session reference URI "<uri>"`) for a wrong scheme, a payload that is
    not base64url, JSON that is not a string, or any non-canonical spelling.
    """
    decoded = _decode(uri) if isinstance(uri, str) else _invalid_uri(str(uri))
    if isinstance(decoded, SessionReferenceError):
        raise decoded
    return decoded


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
    shown = to_js_string(session_id if label is None else label)
    escaped = _LABEL_SPECIALS.sub(lambda match: "\\" + match.group(), shown)
    return f"@[{escaped}]({encode_session_reference_uri(session_id)})"


def _unescape_label(raw: str) -> str:
    """The label with every `\\X` pair replaced by `X`; halves of a pair that meet become one character."""
    if "\\" not in raw:
        return raw
    return to_js_string(_LABEL_ESCAPE.sub(lambda match: match.group(1), raw))


def _resolve(
    match: MentionMatch, decoded: dict[str, str | SessionReferenceError]
) -> SessionReference | SessionReferenceError:
    """The reference one match stands for, or the error its invalid URI gets.

    `decoded` remembers each URI's outcome for the rest of one scan: a pasted text
    often repeats one URI many times.
    """
    session_id = decoded.get(match.uri)
    if session_id is None:
        session_id = decoded[match.uri] = _decode(match.uri)
    if isinstance(session_id, SessionReferenceError):
        return session_id
    if match.label is None:
        return SessionReference(session_id, session_id)
    return SessionReference(session_id, _unescape_label(match.label))


def parse_session_reference_text(text: str) -> ParsedReferenceText:
    """Rewrite every mention and bare URI in `text` to `@label` and list the references.

    References keep appearance order and duplicates. Any invalid URI raises
    `SessionReferenceError` (`SESSION_REFERENCE_INVALID_REFERENCE`) and nothing
    is returned. Linear in the length of `text`.
    """
    scanned = to_js_string(text)
    references: list[SessionReference] = []
    pieces: list[str] = []
    position = 0
    decoded: dict[str, str | SessionReferenceError] = {}
    for match in scan_mentions(scanned):
        reference = _resolve(match, decoded)
        if isinstance(reference, SessionReferenceError):
            raise reference
        references.append(reference)
        pieces.append(scanned[position : match.start])
        pieces.append("@" + (reference.label or ""))
        position = match.end
    if not references:
        return ParsedReferenceText(scanned, ())
    pieces.append(scanned[position:])
    rewritten = "".join(pieces)
    if has_surrogates(rewritten):
        rewritten = to_js_string(rewritten)  # a label's end may pair with the text after it
    return ParsedReferenceText(rewritten, tuple(references))


def find_mention_spans(text: str) -> list[MentionSpan]:
    """Every mention and bare URI in `text` with its position; never raises for invalid ones.

    Positions index `text` as given. A text carrying surrogate pairs as two code
    points is scanned as a JavaScript string but positions still refer to `text`.
    Linear in the length of `text`.
    """
    scanned = to_js_string(text)
    offsets = _index_map(text, scanned)
    spans: list[MentionSpan] = []
    decoded: dict[str, str | SessionReferenceError] = {}
    for match in scan_mentions(scanned):
        kind: Literal["mention", "bare"] = "bare" if match.label is None else "mention"
        start, end = offsets(match.start), offsets(match.end)
        reference = _resolve(match, decoded)
        if isinstance(reference, SessionReferenceError):
            label = None if match.label is None else _unescape_label(match.label)
            spans.append(MentionSpan(start, end, kind, match.uri, None, label, False, reference))
        else:
            session_id, label = reference.session_id, reference.label
            spans.append(MentionSpan(start, end, kind, match.uri, session_id, label, True))
    return spans


def _index_map(original: str, scanned: str) -> Callable[[int], int]:
    """Maps each index of `scanned` (or its end) to the matching index in `original`."""
    if len(original) == len(scanned):
        return _same_index
    mapping: list[int] = []
    position = 0
    for character in scanned:
        mapping.append(position)
        position += 2 if ord(character) > 0xFFFF and original[position] != character else 1
    mapping.append(position)
    return mapping.__getitem__


def _same_index(index: int) -> int:
    return index
