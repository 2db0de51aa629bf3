"""A question an agent typed → the query plans that answer it (pure).

People search while typing (`query.parse_query`: every word must match, the last one as a
prefix). Agents send whole questions: "what cache TTL did we settle on for the pricing
service?" — and the message that answers it rarely holds every word of the question ("pricing
cache entries now live 15 minutes, with 10 % jitter"). So a question gets a ladder of two plans:

1. **strict**: the question's content words (stop and question words dropped, see
   `STOP_WORDS`), every one required, all of them finished words (no prefix);
2. **loose** (`any_word`): a message holding any one of those words matches, ranked by bm25 — a
   rarer word weighs more than a common one, more words more than fewer — plus every pair of
   adjacent content words as a phrase, so a message that says two of them together scores higher
   (the phrase boost). A word of `LOOSE_PREFIX_CHARS` or more also matches longer words it
   starts, its plural `s` taken off first (`deploy` finds "deploys", `fridays` finds "Friday"): a
   crude stand-in for stemming.

The caller runs the strict plan first and the loose one only when the strict one found fewer than
`ENOUGH_STRICT_MATCHES` sessions (`store_index.StoreConversationIndex.search_question`).
Quoted parts stay phrases in both. Stemming, typos and identifiers are not handled here.
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


def question_plans(question: str) -> QuestionPlans:
    """The strict and loose plans of `question` (see the module docstring); never raises."""
    terms = content_terms(question if isinstance(question, str) else "")
    if not terms:
        return QuestionPlans(None, None)
    strict = parse_query(" ".join(terms) + " ")
    if strict.status != "ok":
        return QuestionPlans(None, None)
    singles = list(strict.phrases)
    pairs: list[Phrase] = []
    for first, second in itertools.pairwise(singles):
        if first.quoted or second.quoted:
            continue
        pair = Phrase(first.tokens + second.tokens, False, False, first.units + second.units)
        if pair not in pairs:
            pairs.append(pair)
    loose = replace(strict, phrases=tuple([_widened(phrase) for phrase in singles] + pairs), any_word=True)
    return QuestionPlans(strict, loose)


def _widened(phrase: Phrase) -> Phrase:
    """A one-word phrase as a prefix of its singular (`fridays` → `friday*`); others unchanged."""
    if phrase.quoted or len(phrase.tokens) != 1 or len(phrase.tokens[0]) < LOOSE_PREFIX_CHARS:
        return phrase
    word = phrase.tokens[0]
    stem = word[:-1] if word.endswith("s") and len(word) > LOOSE_PREFIX_CHARS else word
    return replace(phrase, tokens=(stem,), prefix=True)
