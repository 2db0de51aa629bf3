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

A keystroke tries up to two thousand titles, so most are turned away before any scoring by the
characters they hold: each match above needs every letter of the word in the title, except a typo,
which needs every letter of one half of it. A title's lower-cased text and a bitmask of its
characters are computed once and cached (`title_key`); a query turns each word into the masks it
needs, and a title missing one is no match, by one integer test per word.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
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
_TITLE_KEYS_CACHED: Final = 8192
"""Titles whose key is kept: more than one keystroke's pool (`candidates.FUZZY_POOL`)."""


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


def _char_mask(chars: str) -> int:
    """A bitmask with a bit set for each character of `chars`: its own bit below code point 128,
    else one of 64 shared ones (a shared bit can only let a title through, never turn it away)."""
    mask = 0
    for char in set(chars):
        code = ord(char)
        mask |= 1 << (code if code < 128 else 128 + code % 64)
    return mask


@dataclass(frozen=True, slots=True)
class TitleKey:
    """A title prepared for matching: `lowered` (`_lowered`), `mask` (the characters it holds), its
    `words` as (start, word) in order, and their starts, `ordered` (ascending) and as a set."""

    lowered: str
    mask: int
    words: tuple[tuple[int, str], ...]
    ordered: tuple[int, ...]
    starts: frozenset[int]


@lru_cache(maxsize=_TITLE_KEYS_CACHED)
def title_key(text: str) -> TitleKey:
    """`text`'s `TitleKey`, computed once per distinct title while it stays among the recent ones."""
    lowered = _lowered(text)
    words = tuple((found.start(), found.group()) for found in _WORD.finditer(lowered))
    ordered = tuple(start for start, _ in words)
    return TitleKey(lowered, _char_mask(lowered), words, ordered, frozenset(ordered))


def prepare_titles(labels: Iterable[str]) -> None:
    """Compute the `TitleKey` of each of `labels` now (thread-safe), so that a keystroke's close-title
    pass over them finds every key made: the first such pass otherwise pays for all of them."""
    for label in labels:
        title_key(label)


def _subsequence_pattern(word: str) -> re.Pattern[str]:
    """A pattern that `match`es a text holding `word` as a subsequence, in time linear in the text:
    each letter is taken at its first place after the previous one, and nothing is retried."""
    return re.compile("".join(f"[^{re.escape(char)}]*+{re.escape(char)}" for char in word), re.DOTALL)


def _subsequence(word: str, key: TitleKey) -> tuple[float, list[int]] | None:
    """`word` as a subsequence of the title of `key`: (score, matched positions), or None."""
    text, ordered, starts = key.lowered, key.ordered, key.starts
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


def _word_match(word: str, key: TitleKey) -> tuple[float, list[tuple[int, int]]] | None:
    """The best way one query word matches the title of `key`: (score, spans), or None."""
    text, words = key.lowered, key.words
    for start, text_word in words:
        if text_word.startswith(word):
            return 3.0 * len(word), [(start, start + len(word))]
    inside = text.find(word)
    if inside != -1:
        return 2.0 * len(word), [(inside, inside + len(word))]
    best: tuple[float, list[tuple[int, int]]] | None = None
    sequence = _subsequence(word, key)
    if sequence is not None:
        best = sequence[0], _spans(sequence[1])
    if len(word) >= TYPO_MIN_CHARS:
        for start, text_word in words:
            if (
                abs(len(text_word) - len(word)) <= 1
                and one_edit_apart(word, text_word)
                and (best is None or best[0] < 1.5 * len(word))
            ):
                best = 1.5 * len(word), [(start, start + len(text_word))]
                break
    return best


@dataclass(frozen=True, slots=True)
class _WordGate:
    """The cheap tests one query word puts a title to before it is scored: the title must hold
    `word` as a substring or, by `sequence`, a subsequence; or, when `typo` is set, a title word
    beginning with the word's first half or ending with its second (one edit leaves one of them
    whole and in place). `masks`: the characters of the word, or of either half, one of which the
    title must hold."""

    word: str
    sequence: re.Pattern[str]
    typo: re.Pattern[str] | None
    masks: tuple[int, ...]

    @classmethod
    def of(cls, word: str) -> _WordGate:
        """The gate of `word`, a lower-cased query word."""
        if len(word) < TYPO_MIN_CHARS:
            return cls(word, _subsequence_pattern(word), None, (_char_mask(word),))
        half = len(word) // 2
        head, tail = word[:half], word[half + 1 :]
        typo = re.compile(rf"(?<![^\W_]){re.escape(head)}|{re.escape(tail)}(?![^\W_])")
        return cls(
            word, _subsequence_pattern(word), typo, (_char_mask(word), _char_mask(head), _char_mask(tail))
        )

    def may_match(self, lowered: str) -> bool:
        """False when the `_lowered` title cannot match this word."""
        if self.word in lowered or self.sequence.match(lowered) is not None:
            return True
        return self.typo is not None and self.typo.search(lowered) is not None


class FuzzyQuery:
    """One typed query, prepared once for matching many titles (`match`); most titles are turned
    away by cheap tests before any scoring: first by the characters they hold (`TitleKey.mask`),
    then by each word's `_WordGate`."""

    def __init__(self, query: str) -> None:
        self.words: list[str] = _WORD.findall(_lowered(query))
        self._gates = [_WordGate.of(word) for word in self.words]
        self._joined = _subsequence_pattern("".join(self.words))

    def _holds_the_characters(self, mask: int) -> bool:
        """False when a title holding the characters of `mask` cannot match (see the module docstring)."""
        for gate in self._gates:
            for needed in gate.masks:
                if needed & mask == needed:
                    break
            else:
                return False
        return True

    def match(self, text: str) -> FuzzyMatch | None:
        """How this query matches `text` loosely (see the module docstring), or None."""
        if not self.words:
            return None
        key = title_key(text)
        if not self._holds_the_characters(key.mask):
            return None
        return self._scored(key)

    def _scored(self, key: TitleKey) -> FuzzyMatch | None:
        """`match` past the character test."""
        lowered = key.lowered
        each = all(gate.may_match(lowered) for gate in self._gates)
        if not each and (len(self.words) == 1 or self._joined.match(lowered) is None):
            return None
        if each:
            score = 0.0
            spans: list[tuple[int, int]] = []
            for word in self.words:
                found = _word_match(word, key)
                if found is None:
                    break
                score += found[0]
                spans += found[1]
            else:
                return FuzzyMatch(score, _merged(spans))
        if len(self.words) == 1:
            return None
        sequence = _subsequence("".join(self.words), key)
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
