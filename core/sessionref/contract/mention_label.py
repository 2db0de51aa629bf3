"""The label a host inserts into a mention: one short line of plain text (docs/contract.md §1).

The contract places a mention's label in the *readable* user message (`@label`), outside the
untrusted frame of the referenced sessions, where a model reads it as the user's own words; the
host chooses it, usually from a session's title, which any program that writes a log controls.
So a host makes the label neutral before it inserts it: `neutral_mention_label` keeps one line of
at most `MAX_MENTION_LABEL_CHARS` characters with no control, format or markup characters (no
`<`, `>`, `&`, backtick, and none of their look-alikes), and the chip shows exactly that. A label
that is already plain and short passes unchanged, so the conformance vectors stay byte-exact.
"""

from __future__ import annotations

import re
from typing import Final

from sessionref.contract.titles import normalize_title

MAX_MENTION_LABEL_CHARS: Final = 80
"""The longest label a host inserts (code points); a longer one is cut and ends in "…"."""

MARKUP_CHARACTERS: Final = frozenset(
    "<>&`\uff1c\uff1e\ufe64\ufe65\u2039\u203a\u27e8\u27e9\u2329\u232a\u3008\u3009"
)
"""Characters that open or close markup (tags, entities, code) and their look-alikes: replaced."""

_MARKUP = re.compile("[" + re.escape("".join(sorted(MARKUP_CHARACTERS))) + "]")
_SPACES = re.compile(r" {2,}")


def neutral_mention_label(label: str, fallback: str = "session") -> str:
    """`label` as one plain line a host may insert: inert, without markup, at most `MAX_MENTION_LABEL_CHARS`.

    Control, format and bidi characters go and whitespace runs become one space (as in titles),
    markup characters become a space, and a label longer than the bound is cut with "…". What is
    left empty falls back to `fallback` (made neutral the same way), then to "session".
    """
    normalized = normalize_title(label) or ""
    plain = _SPACES.sub(" ", _MARKUP.sub(" ", normalized)).strip()
    if len(plain) > MAX_MENTION_LABEL_CHARS:
        plain = plain[: MAX_MENTION_LABEL_CHARS - 1].rstrip() + "…"
    if plain:
        return plain
    return neutral_mention_label(fallback) if fallback != "session" else "session"
