"""Find mentions and bare URIs in linear time, as docs/contract.md §1 ("Parsing text") defines them.

The contract defines the scan as one regular expression with two alternatives,
tried in order at each position, global and non-overlapping:

    (A)  @\\[ (label) \\]\\( (dsh-session:[^JS-whitespace )]*) \\)
         label = ( \\\\ [^line-terminator] | [^\\\\\\]] )*
    (B)  dsh-session:[A-Za-z0-9_-]+

Run by a backtracking engine that scan is quadratic: every `@[` starts a label
that may run to the end of the text before failing (32 KB of `@[` took 26 s).
This module finds the same matches in time linear in the text, from three
observations about the grammar:

1. A label tokenizes deterministically. A `\\` always takes the next code point
   (unless that is a line terminator, which ends the label); any other code
   point except `]` is one unit; a `]` can only be the second half of `\\]`. So
   backtracking never helps: a label started at `s` ends at the first *stop*
   at or after `s`, and the mention matches only if that stop is `]` followed
   by `(dsh-session:`, a URI run and `)`.
2. Stops do not depend on where the label started: a stop is a `]` after an
   even run of backslashes (that `]` is not escaped), or a line terminator
   after an odd run (a `\\` that cannot take it). The run before a stop cannot
   reach back past the `[` that opens a label, so every label sees the same
   stops. A mention therefore matches at the first `@[` whose label starts
   after the previous stop and at or before a *viable* stop (one followed by
   `(dsh-session:…)`); every other `@[` fails without being looked at.
3. A bare URI contains neither `@` nor `)`, so it never overlaps the start or
   the end of a mention: the bare URIs a plain left-to-right search finds are
   exactly the ones the combined scan finds, once those inside a mention are
   skipped.

Each helper search below only moves forward (or, for the stop before a viable
stop, covers a stretch no other search covers), so the work is linear. The
test suite checks the result against the regular expression itself.

Positions are Python string indices of the text given, which must already be
a JavaScript string (`sessionref.contract.js_json.to_js_string`): the grammar is code
point aware.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final, NamedTuple

__all__ = ["JS_LINE_TERMINATORS", "JS_WHITESPACE", "MentionMatch", "scan_mentions"]

JS_WHITESPACE: Final = "\t\n\u000b\u000c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""JavaScript's `\\s` as a character-class body. Python's `\\s` differs (it adds U+001C-U+001F and
U+0085 and lacks U+FEFF), so the class is spelled out."""
JS_LINE_TERMINATORS: Final = "\n\r\u2028\u2029"

_MENTION_OPEN: Final = "@["
_TAIL_OPEN: Final = "](dsh-session:"
_TAIL = re.compile(re.escape(_TAIL_OPEN))
_URI_RUN_END = re.compile("[" + JS_WHITESPACE + ")]")
_BARE_URI = re.compile(r"dsh-session:[A-Za-z0-9_-]+")
# A label stop read in the reversed text, where the backslashes before it come after it.
_REVERSED_STOP = re.compile(r"\](?:\\\\)*+(?!\\)|[" + JS_LINE_TERMINATORS + r"]\\(?:\\\\)*+(?!\\)")
_REVERSED_CLOSING_STOP = re.compile(r"\](?:\\\\)*+(?!\\)")


class MentionMatch(NamedTuple):
    """One match, `text[start:end]`: `label` is a mention's raw label (None for a bare URI)."""

    start: int
    end: int
    label: str | None
    uri: str


class _ForwardSearch:
    """Where `pattern` next matches at or after a position, for positions that never decrease."""

    def __init__(self, pattern: re.Pattern[str], text: str) -> None:
        self._pattern = pattern
        self._text = text
        self._found = -1

    def at_or_after(self, position: int) -> int:
        """Start of the first match at or after `position` (`len(text)` if none)."""
        if position > self._found:
            match = self._pattern.search(self._text, position)
            self._found = len(self._text) if match is None else match.start()
        return self._found


class _MentionFinder:
    """Finds the next mention (alternative A) at or after a position, in increasing order of position."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._tails = _TAIL.finditer(text)
        self._run_end = _ForwardSearch(_URI_RUN_END, text)
        self._reversed: str | None = None

    def _reversed_text(self) -> str:
        if self._reversed is None:
            self._reversed = self._text[::-1]
        return self._reversed

    def next_from(self, position: int) -> MentionMatch | None:
        """The first mention starting at or after `position`, or None.

        Calls must pass non-decreasing positions, and the character before
        `position` must not be a backslash (it is the end of an earlier match).
        """
        text = self._text
        size = len(text)
        for tail in self._tails:
            stop = tail.start()
            if stop < position + len(_MENTION_OPEN):
                continue
            run_end = self._run_end.at_or_after(tail.end())
            if run_end == size or text[run_end] != ")":
                continue
            reversed_text = self._reversed_text()
            mirrored = size - 1 - stop
            if _REVERSED_CLOSING_STOP.match(reversed_text, mirrored) is None:
                continue  # this `]` is escaped: a label runs through it
            previous = _REVERSED_STOP.search(reversed_text, mirrored + 1, size - position)
            first_label_start = position if previous is None else max(position, size - previous.start())
            start = text.find(_MENTION_OPEN, max(position, first_label_start - len(_MENTION_OPEN)), stop)
            if start < 0:
                continue
            return MentionMatch(start, run_end + 1, text[start + 2 : stop], text[stop + 2 : run_end])
        return None


def scan_mentions(text: str) -> Iterator[MentionMatch]:
    """Every match of the contract's mention-or-bare-URI scan over `text`, left to right, non-overlapping."""
    mentions = _MentionFinder(text)
    bare_uris = _BARE_URI.finditer(text)
    position = 0
    mention = mentions.next_from(position)
    bare = next(bare_uris, None)
    while mention is not None or bare is not None:
        while bare is not None and bare.start() < position:
            bare = next(bare_uris, None)  # inside the mention just taken
        if bare is not None and (mention is None or bare.start() < mention.start):
            yield MentionMatch(bare.start(), bare.end(), None, bare.group())
            position = bare.end()
            bare = next(bare_uris, None)
        elif mention is not None:
            yield mention
            position = mention.end
            mention = mentions.next_from(position)
