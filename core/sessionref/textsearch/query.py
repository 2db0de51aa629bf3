"""What a person typed → a safe FTS5 query plan (pure).

The text is never FTS5 syntax. It is split on whitespace into terms (a double-quoted part is one
term, an unbalanced quote runs to the end); each term is folded like the index (see `normalize`)
and reduced to its words, and the plan's FTS5 expression is built only from those words, each
phrase as a quoted string (`"pg dump"*`): `"`, `*`, `NEAR(`, `AND`/`OR`/`NOT`, parentheses, `-`,
`^` and `:` can only ever be separators or plain words.

Matching a person expects while typing (Algolia's "prefix last"): every term must match
(any order); the words of a term must be adjacent in that order (`pg_dump` finds "pg dump" and
"pg-dump"); the word still being typed — the last one, unless followed by a space or a closing
quote — matches as a prefix (`migr` finds "migration"); finished words match whole.

Short input (decided here, see `MIN_PREFIX_CHARS`): a word being typed searches once it has three
characters. A 1-2 character word being typed matches a large part of any corpus (a ranking of
it is noise, and an unindexed FTS5 prefix that short costs hundreds of milliseconds at 2M
messages), and title completion already answers the first keystrokes. So such a fragment is
left out of the query (`pending`): the results of the words before it stay on screen. A finished
word of two characters (`pg `) is searched exactly; one letter alone never anchors a search. CJK
text is searched by substring: two characters (one bigram) are enough; a lone final CJK
character is a pending fragment like a 1-2 letter word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from sessionref.textsearch.normalize import CJK_CLASS, fold, query_cjk_form

# A word still being typed searches (as a prefix) from this many characters on.
MIN_PREFIX_CHARS = 3
# A query with no word at least this long (exact, or a CJK bigram) does not search.
MIN_ANCHOR_CHARS = 2

_UNIT = re.compile(f"[{CJK_CLASS}]+|[^\\W_{CJK_CLASS}]+")
_CJK_UNIT = re.compile(f"[{CJK_CLASS}]+")
_FTS_TOKEN = re.compile(r"[^\W_]+")
PlanStatus = Literal["ok", "empty", "too_short"]


@dataclass(frozen=True, slots=True)
class Phrase:
    """One term of the query: words that must appear adjacent, in order.

    `tokens` are the words as the index holds them (folded, CJK as bigrams); `prefix` says the
    last one matches as a prefix. `units` are the folded words and CJK runs as they appear in
    text (for finding the match in the original message). `quoted` phrases are never dropped.
    """

    tokens: tuple[str, ...]
    prefix: bool
    quoted: bool
    units: tuple[str, ...]

    def fts(self) -> str:
        """This phrase as an FTS5 string: only letters, digits and spaces inside the quotes."""
        return '"' + " ".join(self.tokens) + '"' + ("*" if self.prefix else "")

    def includes(self, other: Phrase) -> bool:
        """True when every text matching `other` also matches this phrase (`other` is narrower)."""
        count = len(self.tokens)
        if len(other.tokens) < count or other.tokens[: count - 1] != self.tokens[: count - 1]:
            return False
        mine, theirs = self.tokens[-1], other.tokens[count - 1]
        if self.prefix:
            return theirs.startswith(mine)
        return theirs == mine and (len(other.tokens) > count or not other.prefix)


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """The phrases to search (all must match) and what was left out while typing.

    `any_word` plans (built by `question.question_plans`, never by `parse_query`) match a message
    holding any one of the phrases, ranked by bm25: for questions, where not every word is said.
    Their `loose_words` are the finished words the engine may correct (a typo) or split (a
    joined identifier) when the index holds little of them.
    """

    status: PlanStatus
    phrases: tuple[Phrase, ...] = ()
    pending: str = ""
    any_word: bool = False
    loose_words: tuple[str, ...] = ()

    def expression(self, phrases: tuple[Phrase, ...] | None = None) -> str:
        """The FTS5 MATCH expression of `phrases` (default: all of them), joined with AND (OR for
        an `any_word` plan)."""
        joiner = " OR " if self.any_word else " AND "
        return joiner.join(phrase.fts() for phrase in (self.phrases if phrases is None else phrases))


@dataclass(frozen=True, slots=True)
class _Term:
    text: str
    quoted: bool
    finished: bool


def _split_terms(text: str) -> list[_Term]:
    terms: list[_Term] = []
    current: list[str] = []
    quoted = False
    index = 0
    while index < len(text):
        char = text[index]
        if quoted:
            if char == '"':
                terms.append(_Term("".join(current), True, True))
                current, quoted = [], False
            else:
                current.append(char)
        elif char == '"':
            if current:
                terms.append(_Term("".join(current), False, True))
            current, quoted = [], True
        elif char.isspace():
            if current:
                terms.append(_Term("".join(current), False, True))
            current = []
        else:
            current.append(char)
        index += 1
    if current or quoted:
        terms.append(_Term("".join(current), quoted, False))
    return terms


def _phrase(term: _Term) -> tuple[Phrase | None, str]:
    """The phrase of one term and the fragment left out of it ("" when none)."""
    folded = fold(term.text)
    units = list(_UNIT.finditer(folded))
    if not units:
        return None, ""
    cut = len(folded)
    last = units[-1]
    is_cjk = _CJK_UNIT.fullmatch(last.group()) is not None
    fragment = ""
    if is_cjk and len(last.group()) == 1:
        fragment = last.group()  # one CJK character is not a bigram
    elif not is_cjk and not term.finished and len(last.group()) < MIN_PREFIX_CHARS:
        fragment = last.group()
    if fragment:
        cut = last.start()
        units.pop()
        if not units:
            return None, fragment
    kept = folded[:cut]
    expanded = query_cjk_form(kept)
    tokens = tuple(_FTS_TOKEN.findall(expanded))
    last_is_cjk = _CJK_UNIT.fullmatch(units[-1].group()) is not None
    prefix = not term.finished and not fragment and not last_is_cjk
    return Phrase(tokens, prefix, term.quoted, tuple(unit.group() for unit in units)), fragment


def parse_query(text: str) -> QueryPlan:
    """The plan for `text`; never raises for any string.

    `status` is `"empty"` when there is no word at all, `"too_short"` when nothing long enough
    to anchor a search was typed yet (see the module docstring), else `"ok"`.
    """
    phrases: list[Phrase] = []
    pending = ""
    saw_word = False
    for term in _split_terms(text):
        phrase, fragment = _phrase(term)
        saw_word = saw_word or phrase is not None or bool(fragment)
        if fragment and not term.finished:
            pending = fragment
        if phrase is not None and phrase not in phrases:
            phrases.append(phrase)
    if not saw_word:
        return QueryPlan("empty")
    anchored = any(
        len(token)
        >= (MIN_PREFIX_CHARS if phrase.prefix and index == len(phrase.tokens) - 1 else MIN_ANCHOR_CHARS)
        for phrase in phrases
        for index, token in enumerate(phrase.tokens)
    )
    if not anchored:
        return QueryPlan("too_short", (), pending)
    return QueryPlan("ok", tuple(phrases), pending)


def plan_narrows(narrower: tuple[Phrase, ...], wider: tuple[Phrase, ...]) -> bool:
    """True when every message matching all of `narrower` matches all of `wider`.

    Used to answer a keystroke that extends a query with no results without asking the index.
    """
    return all(any(phrase.includes(candidate) for candidate in narrower) for phrase in wider)
