"""A bounded one-line excerpt of a message around its match, with match spans (pure).

The excerpt is cut from the original text, never the folded one. It is raw data: line breaks
and tabs become spaces and runs of whitespace collapse to one, but escape sequences, Rich
markup, bidi controls and every other character stay as they are for the UI to render inertly.
Its length is bounded (`SNIPPET_CHARS` plus two ellipses) and only the first
`SNIPPET_SCAN_CHARS` characters of a message are searched for the match, so a 1 MB single line
costs the same as a short one.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sessionref.textsearch.normalize import CJK_CLASS, fold_with_offsets
from sessionref.textsearch.query import Phrase

# The longest excerpt, in characters (without the ellipses marking a cut).
SNIPPET_CHARS = 160
# Characters of context kept before the first match when the excerpt does not start the message.
SNIPPET_CONTEXT_CHARS = 40
# How much of a message is searched for the match; a match further in shows the message's start.
SNIPPET_SCAN_CHARS = 200_000
ELLIPSIS = "…"
# Messages are folded and searched for their first match in chunks growing from 1 kB to 16 kB
# (most matches are near the start; a long message does not pay for folding all of it).
_FIRST_CHUNK = 1024
_LAST_CHUNK = 16384
_SCAN_OVERLAP = 256

_WORD_CHAR = f"[^\\W_{CJK_CLASS}]"
_CJK_UNIT = re.compile(f"[{CJK_CLASS}]+")
# Whitespace that changes when collapsed to one space: a run of two or more, or a lone non-space.
_WHITESPACE_RUN = re.compile(r"\s{2,}|[^\S ]")


@dataclass(frozen=True, slots=True)
class Snippet:
    """One line of a message; `spans` are `[start, end)` offsets of the matches inside `text`."""

    text: str
    spans: tuple[tuple[int, int], ...] = ()


# Compiled once: a character class holding the CJK ranges takes `re` about 2 ms to compile, which
# a pattern per keystroke would pay every time.
_WORD_CHAR_AT = re.compile(_WORD_CHAR)


@dataclass(frozen=True, slots=True)
class _PhraseFinder:
    """One phrase in folded text: its words as literals with the separators FTS5 allows between
    them (`pattern`, no character class to compile), and the word boundaries FTS5 has, checked
    around each candidate: none before a first word (`bounded_before`) and, for a last word that
    is not a prefix, none after it (`bounded_after`); CJK text has no word boundaries."""

    pattern: re.Pattern[str]
    bounded_before: bool
    bounded_after: bool
    priority: int

    def matches(self, folded: str) -> Iterator[tuple[int, int]]:
        """`[start, end)` of each match in `folded`, left to right, not overlapping."""
        position = 0
        search, word_at = self.pattern.search, _WORD_CHAR_AT.match
        while (found := search(folded, position)) is not None:
            start, end = found.span()
            if (not self.bounded_before or start == 0 or word_at(folded, start - 1) is None) and (
                not self.bounded_after or word_at(folded, end) is None
            ):
                yield start, end
                position = end
            else:
                position = start + 1


def _phrase_finder(phrase: Phrase) -> _PhraseFinder:
    parts: list[str] = []
    previous_cjk: bool | None = None
    first_cjk = False
    for unit in phrase.units:
        cjk = _CJK_UNIT.fullmatch(unit) is not None
        literal = re.escape(unit)
        if previous_cjk is None:
            parts.append(literal)
            first_cjk = cjk
        else:
            parts.append((r"[\W_]*" if cjk or previous_cjk else r"[\W_]+") + literal)
        previous_cjk = cjk
    return _PhraseFinder(
        re.compile("".join(parts)),
        not first_cjk,
        previous_cjk is False and not phrase.prefix,
        sum(len(unit) for unit in phrase.units) + len(phrase.units),
    )


@dataclass(frozen=True, slots=True)
class MatchPattern:
    """Finds any of a search's phrases in folded text, as the index matched them (see `match_pattern`)."""

    finders: tuple[_PhraseFinder, ...]

    def spans(self, folded: str) -> list[tuple[int, int]]:
        """Non-overlapping `[start, end)` matches in `folded`, left to right; where several phrases
        match at one place, the longest (a phrase is preferred to a word it starts with)."""
        if len(self.finders) == 1:
            return list(self.finders[0].matches(folded))
        found = sorted(
            (start, -finder.priority, end) for finder in self.finders for start, end in finder.matches(folded)
        )
        spans: list[tuple[int, int]] = []
        for start, _priority, end in found:
            if not spans or start >= spans[-1][1]:
                spans.append((start, end))
        return spans


def match_pattern(phrases: Sequence[Phrase]) -> MatchPattern | None:
    """What finds any of `phrases` in folded text, as the index matched them; None for none."""
    if not phrases:
        return None
    return MatchPattern(tuple(_phrase_finder(phrase) for phrase in phrases))


def _folded_spans(text: str, pattern: MatchPattern) -> list[tuple[int, int]]:
    """Non-overlapping `[start, end)` spans (in `text`) of `pattern` in the folded `text`."""
    folded, to_original = fold_with_offsets(text)
    spans: list[tuple[int, int]] = []
    for match_start, match_end in pattern.spans(folded):
        start, end = to_original(match_start), to_original(match_end)
        if end > start and (not spans or start >= spans[-1][1]):
            spans.append((start, end))
    return spans


def _scan(text: str, pattern: MatchPattern) -> tuple[list[tuple[int, int]], int]:
    """The matches (in `text`) of the first chunk holding one, and where that chunk ends.

    The text is folded and searched a chunk at a time, so a match near the start of a long
    message costs only its first chunk. `([], 0)` when nothing matches in the searched part.
    """
    limit = min(len(text), SNIPPET_SCAN_CHARS)
    offset, size = 0, _FIRST_CHUNK
    while offset < limit:
        # One character of left context, so a chunk cut inside a word is not a word start;
        # the chunk runs past its end so that a match crossing it is found whole.
        begin = max(0, offset - 1)
        end = min(limit, offset + size + _SCAN_OVERLAP)
        folded, to_original = fold_with_offsets(text[begin:end])
        spans: list[tuple[int, int]] = []
        for match_start, match_end in pattern.spans(folded):
            start = begin + to_original(match_start)
            stop = begin + to_original(match_end)
            if start >= offset and stop > start and (not spans or start >= spans[-1][1]):
                spans.append((start, stop))
        if spans:
            return spans, end
        offset += size
        size = min(size * 2, _LAST_CHUNK)
    return [], 0


def _one_line(window: str, spans: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """Whitespace runs of `window` (line breaks included) collapsed to one space, `spans` moved along."""
    runs = [(match.start(), match.end()) for match in _WHITESPACE_RUN.finditer(window)]
    if not runs:
        return window, spans
    starts = [run_start for run_start, _ in runs]
    removed_before: list[int] = []
    removed = 0
    for run_start, run_end in runs:
        removed_before.append(removed)
        removed += run_end - run_start - 1

    def moved(index: int) -> int:
        k = bisect.bisect_right(starts, index) - 1
        if k < 0:
            return index
        run_start, run_end = runs[k]
        if index >= run_end:
            return index - removed_before[k] - (run_end - run_start - 1)
        return run_start - removed_before[k] + (1 if index > run_start else 0)

    line = _WHITESPACE_RUN.sub(" ", window)
    return line, [(moved(span_start), moved(span_end)) for span_start, span_end in spans]


def make_snippet(
    text: str,
    phrases: Sequence[Phrase],
    *,
    width: int = SNIPPET_CHARS,
    pattern: MatchPattern | None = None,
) -> Snippet:
    """A one-line excerpt of `text` of at most `width` characters (plus "…" at a cut end) around
    the first match of `phrases`, with every match inside it as spans. The message's start,
    without spans, when nothing matches in the searched part."""
    if pattern is None:
        pattern = match_pattern(phrases)
    spans, scanned = _scan(text, pattern) if pattern is not None and text else ([], 0)
    start = 0
    if spans and spans[0][0] > SNIPPET_CONTEXT_CHARS:
        start = spans[0][0] - SNIPPET_CONTEXT_CHARS
        space = text.rfind(" ", start - 12, start)
        if space >= 0:
            start = space + 1  # start on a word when one begins nearby
    # Take more than `width` so that collapsing whitespace still leaves a full line.
    window = text[start : start + 4 * width]
    end = start + len(window)
    if spans and pattern is not None and end > scanned and scanned < len(text):
        local = _folded_spans(window, pattern)  # the window runs past the folded chunk
    else:
        local = [(s - start, min(e, end) - start) for s, e in spans if start <= s < end]
    line, local = _one_line(window, local)
    if start > 0 and line.startswith(" "):
        line, local = line[1:], [(s - 1, e - 1) for s, e in local]
    cut_end = len(line) > width or start + len(window) < len(text)
    line = line[:width]
    if cut_end:
        line = line.rstrip()
    kept = [(s, min(e, len(line))) for s, e in local if s < len(line) and min(e, len(line)) > s]
    if start > 0:
        line = ELLIPSIS + line
        kept = [(s + 1, e + 1) for s, e in kept]
    if cut_end:
        line += ELLIPSIS
    return Snippet(line, tuple(kept))
