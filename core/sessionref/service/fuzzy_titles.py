"""Close matches of a typed query in a session's title (pure): what a person meant, not what they typed.

The contract's matching is one case-insensitive substring (`candidates.matches_needle`); those
candidates always come first, unchanged. After them, UIs offer titles that match the query
loosely, in the manner of fzf and nucleo:

* the query's words match in any order (`migration postgres` finds "Migration to Postgres");
* a word matches as a substring, best at the start of a title word;
* or as a subsequence that mostly lands on word starts or runs on (`spdci` finds "Speed up CI",
  `pg16plan` finds "Postgres 16 upgrade plan"): each letter is taken where it continues the
  previous one, else at the next word start, else anywhere after;
* or, for words of `TYPO_MIN_CHARS` letters or more, one edit away from a title word
  (`postgrse`, `webhok`): a letter added, removed, replaced, or two adjacent ones swapped.

Every word must match, else the whole query without its spaces is tried as one subsequence
(`pg 16 plan`). `fuzzy_match` gives a score (higher is closer) and the spans that matched, for
highlighting.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Final

TYPO_MIN_CHARS: Final = 5
"""Words shorter than this are never matched with a typo: one edit in a short word is another word."""

ABBREVIATION_CHARS: Final = 2
"""A word this short matches as a subsequence once its first letter starts a title word (`pg` finds
"Postgres 16 migration plan"), so that `@pg` shows the session and the picker goes on across a space."""

_WORD = re.compile(r"[^\W_]+")
# A subsequence match counts when at least this share of its letters land on a word start or
# continue the previous letter (else letters scattered over a long title would match anything).
_ANCHORED_SHARE: Final = 0.6


@dataclass(frozen=True, slots=True)
class FuzzyMatch:
    """How closely a query matches a text: `score` (higher is closer) and the `[start, end)` spans of
    the text that matched, in order, not overlapping."""

    score: float
    spans: tuple[tuple[int, int], ...]


def one_edit_apart(first: str, second: str) -> bool:
    """True when `second` is `first` with one letter added, removed, replaced, or two adjacent
    letters swapped (not when they are equal)."""
    if first == second or abs(len(first) - len(second)) > 1:
        return False
    if len(first) > len(second):
        first, second = second, first
    start = 0
    while start < len(first) and first[start] == second[start]:
        start += 1
    if len(first) < len(second):
        return first[start:] == second[start + 1 :]
    if first[start + 1 :] == second[start + 1 :]:
        return True
    return (
        start + 1 < len(first)
        and first[start] == second[start + 1]
        and first[start + 1] == second[start]
        and first[start + 2 :] == second[start + 2 :]
    )


def _lowered(text: str) -> str:
    """`text` lower-cased character by character, keeping every index (a character whose lower
    case is longer stays as it is)."""
    if text.isascii():
        return text.lower()
    return "".join(lower if len(lower := char.lower()) == 1 else char for char in text)


def _subsequence(word: str, text: str, ordered: list[int]) -> tuple[float, list[int]] | None:
    """`word` as a subsequence of `text` whose word starts are `ordered`: (score, matched
    positions), or None."""
    starts = frozenset(ordered)
    positions: list[int] = []
    at = 0
    anchored = 0
    for char in word:
        if positions and at < len(text) and text[at] == char:
            found = at
        else:
            found = next(
                (start for start in ordered[bisect.bisect_left(ordered, at) :] if text[start] == char), -1
            )
            if found == -1:
                found = text.find(char, at)
        if found == -1:
            return None
        if found in starts or (positions and found == positions[-1] + 1):
            anchored += 1
        positions.append(found)
        at = found + 1
    if positions[0] not in starts:
        return None
    # A two-letter word (`pg`, `ci`) is an abbreviation: its first letter on a word start is enough.
    if anchored < _ANCHORED_SHARE * len(word) and len(word) > ABBREVIATION_CHARS:
        return None
    return float(anchored) + 0.5 * (len(word) - anchored), positions


def _spans(positions: list[int]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for position in sorted(positions):
        if spans and spans[-1][1] == position:
            spans[-1] = (spans[-1][0], position + 1)
        else:
            spans.append((position, position + 1))
    return spans


def _word_match(
    word: str, text: str, words: list[tuple[int, str]], ordered: list[int]
) -> tuple[float, list[tuple[int, int]]] | None:
    """The best way one query word matches `text`: (score, spans), or None."""
    for start, text_word in words:
        if text_word.startswith(word):
            return 3.0 * len(word), [(start, start + len(word))]
    inside = text.find(word)
    if inside != -1:
        return 2.0 * len(word), [(inside, inside + len(word))]
    best: tuple[float, list[tuple[int, int]]] | None = None
    sequence = _subsequence(word, text, ordered)
    if sequence is not None:
        best = sequence[0], _spans(sequence[1])
    if len(word) >= TYPO_MIN_CHARS:
        for start, text_word in words:
            if one_edit_apart(word, text_word) and (best is None or best[0] < 1.5 * len(word)):
                best = 1.5 * len(word), [(start, start + len(text_word))]
                break
    return best


class FuzzyQuery:
    """One typed query, prepared once for matching many titles (`match`); most titles are turned
    away by a cheap test before any scoring: each word must appear as a substring, as a
    subsequence (a regular expression), or, for a typo, by one of its two halves (one edit leaves
    one of them whole)."""

    def __init__(self, query: str) -> None:
        self.words: list[str] = _WORD.findall(_lowered(query))
        self._sequences = [re.compile(".*?".join(map(re.escape, word))) for word in self.words]
        self._joined = re.compile(".*?".join(map(re.escape, "".join(self.words))))

    def _may_match(self, word: str, sequence: re.Pattern[str], lowered: str) -> bool:
        if word in lowered or sequence.search(lowered) is not None:
            return True
        if len(word) < TYPO_MIN_CHARS:
            return False
        half = len(word) // 2
        return word[:half] in lowered or word[half + 1 :] in lowered

    def match(self, text: str) -> FuzzyMatch | None:
        """How this query matches `text` loosely (see the module docstring), or None."""
        if not self.words:
            return None
        lowered = _lowered(text)
        each = all(
            self._may_match(word, sequence, lowered)
            for word, sequence in zip(self.words, self._sequences, strict=True)
        )
        if not each and (len(self.words) == 1 or self._joined.search(lowered) is None):
            return None
        words = [(found.start(), found.group()) for found in _WORD.finditer(lowered)]
        ordered = [start for start, _ in words]
        if each:
            score = 0.0
            spans: list[tuple[int, int]] = []
            for word in self.words:
                found = _word_match(word, lowered, words, ordered)
                if found is None:
                    break
                score += found[0]
                spans += found[1]
            else:
                return FuzzyMatch(score, _merged(spans))
        if len(self.words) == 1:
            return None
        sequence = _subsequence("".join(self.words), lowered, ordered)
        if sequence is None:
            return None
        return FuzzyMatch(sequence[0], tuple(_spans(sequence[1])))


def fuzzy_match(query: str, text: str) -> FuzzyMatch | None:
    """How `query` matches `text` loosely (see the module docstring), or None when it does not."""
    return FuzzyQuery(query).match(text)


def _merged(spans: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return tuple(merged)
