"""Loose text (a question, or several words) → the query plans that answer it (pure).

People search while typing (`query.parse_query`: every word must match, the last one as a
prefix). Agents and people asking a question write whole sentences: "why did the export job run
out of memory?" — and the message that answers it rarely holds every word of it ("the nightly
export OOMs because it loads every invoice at once"). So loose text gets a ladder of two plans:

1. **strict**: the text's content words (stop and question words dropped, see `STOP_WORDS`),
   every one required, the last one a prefix while it is still being typed;
2. **loose** (`any_word`): a message holding any one of those words matches, ranked by bm25 — a
   rarer word weighs more than a common one, more words more than fewer. Each word matches its
   other forms: it is searched as the prefix its light stem gives (`stem`: `crashes` → `crash*`,
   `deployed` → `deploy*`, `indexes` → `index*`, `caching` → `cach*`). Every pair of adjacent
   content words is also searched as a phrase (two words said together score higher: the phrase
   boost) and joined into one word (`max retries` finds "maxRetries"; `max_retries` is already
   the phrase "max retries"). The engine adds, for a word it finds little of, the words one edit
   away and the two words it may be joined from (`search.Searcher`, `vocabulary.Vocabulary`).

The caller runs the strict plan first and the loose one only when the strict one found fewer than
`ENOUGH_STRICT_MATCHES` sessions (`store_index.StoreConversationIndex.search_conversations`).
Quoted parts stay exact phrases in both.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace
from typing import Final

from sessionref.textsearch.normalize import TOKEN, fold
from sessionref.textsearch.query import Phrase, QueryPlan, parse_query

LOOSE_PREFIX_CHARS: Final = 4
"""Words at least this long match as prefixes in the loose plan (shorter ones match too much)."""

STEM_CHARS: Final = 3
"""A stem is at least this long (the shortest prefix the index has; `fixes` → `fix`)."""

ENOUGH_STRICT_MATCHES: Final = 3
"""Sessions the strict plan must find for the loose one not to be asked."""

_STOP_WORD_TEXT: Final = """
a about above after again against all am an and any are as at be been before being below
between both but by can could did do does doing done down during each few for from further
get got had has have having he her here hers herself him himself his how i if in into is
it its itself just me more most my myself no nor not now of off on once only or other our
ours ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself
yourselves us let lets shall may might must also ever anything something someone somebody
remember recall know said say says talk talked discuss discussed decide decided settle
settled agree agreed anyone again please ok okay yes yeah hi hello thanks thank
"""

STOP_WORDS: Final = frozenset(_STOP_WORD_TEXT.split())
"""Words dropped from a question: English function words and the verbs of asking about the past
("what did we decide about…"). They carry no topic, and a question is mostly made of them."""

_SAME_MEANING: Final = (
    ("oom", "out of memory"),
    ("db", "database"),
    ("pg", "postgres"),
    ("k8s", "kubernetes"),
    ("auth", "authentication"),
    ("config", "configuration"),
    ("repo", "repository"),
    ("env", "environment"),
    ("prod", "production"),
    ("deps", "dependencies"),
    ("perf", "performance"),
    ("tz", "timezone"),
    ("js", "javascript"),
    ("ts", "typescript"),
)
ALTERNATIVES: Final = {
    tuple(first.split()): tuple(second.split())
    for pair in _SAME_MEANING
    for first, second in (pair, pair[::-1])
}
"""Words developers write for one another (`oom` and `out of memory`): the loose plan searches
each one's other form too. Kept short on purpose: a wrong synonym costs more than a missed one."""

_QUOTED = re.compile(r'"([^"]*)"?|(\S+)')


@dataclass(frozen=True, slots=True)
class QuestionPlans:
    """The ladder for one question: `strict` (all content words) and `loose` (any of them), or
    None each when the question holds no content word."""

    strict: QueryPlan | None
    loose: QueryPlan | None


def content_terms(question: str) -> list[str]:
    """The question's terms without stop words: folded words, and quoted parts kept as `"…"`."""
    terms: list[str] = []
    for match in _QUOTED.finditer(question):
        quoted, bare = match.group(1), match.group(2)
        if quoted is not None:
            if TOKEN.search(fold(quoted)):
                terms.append(f'"{quoted}"')
            continue
        terms.extend(word for word in TOKEN.findall(fold(bare)) if word not in STOP_WORDS)
    return terms


_SUFFIXES: Final = (
    "ions",
    "ion",
    "ments",
    "ment",
    "ings",
    "ing",
    "ies",
    "ied",
    "ers",
    "er",
    "ed",
    "ly",
    "s",
)
_ES_AFTER: Final = ("s", "x", "z", "ch", "sh")
_VERB_SUFFIXES: Final = frozenset({"ings", "ing", "ed"})
_VOWELS: Final = frozenset("aeiouy")
_ASCII_WORD = re.compile(r"[a-z]+")


def stem(word: str) -> str:
    """The prefix that `word`'s other English forms share (`crashes` → `crash`, `deployed` →
    `deploy`, `caching` → `cach`, `memory` → `memor`); never shorter than `STEM_CHARS`.

    A light stemmer: one suffix taken off (`es` only after s, x, z, ch, sh; `ing` and `ed` only
    after a vowel and not after `e`: `bring`, `speed`), then a final `e`,
    a final `y` after a consonant and a doubled last consonant (`stopped` → `stop`). Words that
    are not plain ASCII letters, and words it would cut too short, are returned as they are.
    """
    if len(word) < LOOSE_PREFIX_CHARS or _ASCII_WORD.fullmatch(word) is None:
        return word
    base = word
    for suffix in _SUFFIXES:
        rest = word[: -len(suffix)]
        if suffix in _VERB_SUFFIXES and (not _VOWELS & set(rest) or rest.endswith("e")):
            continue  # `bring`, `speed`, `need`: no suffix there
        if word.endswith(suffix) and len(rest) >= STEM_CHARS:
            base = word[: -len(suffix)]
            if (
                suffix == "s"
                and base.endswith("e")
                and base[:-1].endswith(_ES_AFTER)
                and len(base) > STEM_CHARS
            ):
                base = base[:-1]
            break
    if (len(base) > LOOSE_PREFIX_CHARS and base.endswith("e")) or (
        len(base) > LOOSE_PREFIX_CHARS and base.endswith("y") and base[-2] not in _VOWELS
    ):
        base = base[:-1]
    if len(base) >= LOOSE_PREFIX_CHARS and base[-1] == base[-2] and base[-1] not in _VOWELS | {"l", "s"}:
        base = base[:-1]
    return base if len(base) >= STEM_CHARS else word


def question_plans(text: str) -> QuestionPlans:
    """The strict and loose plans of `text` (see the module docstring); never raises.

    `text` is read as typed: its last word is a prefix unless a space follows it (callers with
    a whole question or command-line words add one).
    """
    if not isinstance(text, str):
        return QuestionPlans(None, None)
    terms = content_terms(text)
    if not terms:
        return QuestionPlans(None, None)
    finished = text[-1:].isspace() or text.rstrip().endswith('"') or not TOKEN.search(fold(text[-1:]))
    strict = parse_query(" ".join(terms) + (" " if finished else ""))
    if strict.status != "ok":
        return QuestionPlans(None, None)
    singles = list(strict.phrases)
    extra: list[Phrase] = []
    for first, second in itertools.pairwise(singles):
        if first.quoted or second.quoted or first.prefix:
            continue
        pair = Phrase(first.tokens + second.tokens, second.prefix, False, first.units + second.units)
        joined_word = "".join(first.tokens[-1:] + second.tokens[:1])
        joined = Phrase((joined_word,), second.prefix, False, (joined_word,))
        for phrase in (pair, joined) if len(first.tokens) == len(second.tokens) == 1 else (pair,):
            if phrase not in extra and phrase not in singles:
                extra.append(phrase)
    extra += _alternatives(text)
    loose_phrases: list[Phrase] = []
    for phrase in [_widened(phrase) for phrase in singles] + extra:
        if phrase not in loose_phrases:
            loose_phrases.append(phrase)
    words = tuple(
        phrase.tokens[0]
        for phrase in singles
        if not phrase.quoted and not phrase.prefix and len(phrase.tokens) == 1
    )
    loose = replace(strict, phrases=tuple(loose_phrases), any_word=True, loose_words=words)
    return QuestionPlans(strict, loose)


def _alternatives(text: str) -> list[Phrase]:
    """The other forms (`ALTERNATIVES`) of the words and word runs of `text`, stop words included
    (`out of memory`), outside quotes, each a phrase (its last word a prefix from 3 letters)."""
    runs: list[list[str]] = [[]]
    for match in _QUOTED.finditer(text):
        if match.group(2) is None:
            runs.append([])  # a quoted part: no run crosses it
        else:
            runs[-1].extend(TOKEN.findall(fold(match.group(2))))
    found: list[Phrase] = []
    for words in runs:
        for start in range(len(words)):
            for source, other in ALTERNATIVES.items():
                phrase = Phrase(other, len(other[-1]) >= STEM_CHARS, False, other)  # `oom` finds "OOMs"
                if tuple(words[start : start + len(source)]) == source and phrase not in found:
                    found.append(phrase)
    return found


def _widened(phrase: Phrase) -> Phrase:
    """A one-word phrase as the prefix of its stem (`deployed` → `deploy*`); others unchanged."""
    if phrase.quoted or len(phrase.tokens) != 1:
        return phrase
    word = phrase.tokens[0]
    base = stem(word)
    if base == word and not phrase.prefix and len(word) < LOOSE_PREFIX_CHARS:
        return phrase
    return Phrase((base,), True, False, (base,))
