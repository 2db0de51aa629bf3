"""docs/contract.md §1's mention grammar as the one regular expression upstream uses: the reference model.

This was the project's implementation until the scan became linear
(`sessionref.contract.mention_scanner`). Python's `re` backtracks like JavaScript's
engine and tries the two alternatives in order at each position, so over a
text whose surrogate pairs are combined (`to_js_string`) it *is* the contract,
only quadratic. Tests compare the linear scan with it; `bench/bench_parse.py`
times it as the "before".
"""

from __future__ import annotations

import re
from typing import Final

from sessionref.contract.js_json import to_js_string
from sessionref.contract.mention_scanner import JS_LINE_TERMINATORS, JS_WHITESPACE
from sessionref.contract.uri import SessionReference, decode_session_reference_uri

MENTION_OR_BARE_URI: Final = re.compile(
    r"@\[(?P<label>(?:\\[^" + JS_LINE_TERMINATORS + r"]|[^\\\]])*)\]"
    r"\((?P<mention_uri>dsh-session:[^" + JS_WHITESPACE + r")]*)\)"
    r"|(?P<bare_uri>dsh-session:[A-Za-z0-9_-]+)"
)
_LABEL_ESCAPE: Final = re.compile(r"\\(.)", re.DOTALL)


def regex_matches(scanned: str) -> list[tuple[int, int, str | None, str]]:
    """`(start, end, raw label or None, uri)` of every match in a JavaScript string, by the regex."""
    found = []
    for match in MENTION_OR_BARE_URI.finditer(scanned):
        bare = match.group("bare_uri")
        if bare is not None:
            found.append((match.start(), match.end(), None, bare))
        else:
            found.append((match.start(), match.end(), match.group("label"), match.group("mention_uri")))
    return found


def regex_parse(text: str) -> tuple[str, list[SessionReference]]:
    """The old `parse_session_reference_text`: code-point strings, labels unescaped in place, no pairing."""
    references: list[SessionReference] = []

    def replace(match: re.Match[str]) -> str:
        bare = match.group("bare_uri")
        if bare is not None:
            session_id = decode_session_reference_uri(bare)
            reference = SessionReference(session_id, session_id)
        else:
            session_id = decode_session_reference_uri(match.group("mention_uri"))
            label = _LABEL_ESCAPE.sub(lambda escape: escape.group(1), match.group("label"))
            reference = SessionReference(session_id, label)
        references.append(reference)
        return "@" + (reference.label or "")

    return MENTION_OR_BARE_URI.sub(replace, to_js_string(text)), references
