"""Text normalisation shared by the index, the query and the snippets (pure).

The SQLite build here has FTS5 `unicode61` (ASCII and simple Unicode case folding, Latin
diacritics) but not a tokenizer for CJK, full-width forms, ligatures, `ß` or Greek accents. So
text is folded in Python before it is indexed, and queries get exactly the same folding:

* every character maps to its NFKC form, case-folded, without combining diacritical marks
  (`Zürich` → `zurich`, `ＡＢＣ` → `abc`, `ﬁ` → `fi`, `Straße` → `strasse`, `ά` → `α`);
* runs of CJK characters (Han, kana, Hangul) become overlapping bigrams plus the run's last
  character, each a token of its own (`数据库` → `数据 据库 库`), so any substring of two or more
  characters is a phrase of bigrams.

ASCII text skips all of this: the tokenizer folds ASCII case itself, so it is indexed as is.
The original text is kept apart for snippets; `fold_with_offsets` maps folded positions back.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable

# Bump when folding or CJK expansion changes: the index stores it and rebuilds on a mismatch.
FOLD_VERSION = 1

# Combining marks removed by folding (Latin, Greek and Cyrillic diacritics, their extensions,
# half marks). Marks that change a letter in other scripts (Japanese voicing marks, Indic vowel
# signs) are kept.
_DIACRITIC_RANGES = (
    (0x0300, 0x036F),
    (0x1AB0, 0x1AFF),
    (0x1DC0, 0x1DFF),
    (0x20D0, 0x20FF),
    (0xFE20, 0xFE2F),
)
_CJK_RANGES = (
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3040, 0x309F),  # hiragana
    (0x30A0, 0x30FF),  # katakana
    (0x31F0, 0x31FF),  # katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x2FA1F),  # CJK extensions B-F, compatibility supplement
    (0x30000, 0x3134F),  # CJK extension G
)


def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"{chr(low)}-{chr(high)}" for low, high in ranges)


CJK_CLASS = _class(_CJK_RANGES)
_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
_CJK_CHAR = re.compile(f"[{CJK_CLASS}]")
# A token is a run of letters and digits, as FTS5 `unicode61` sees it ('_' separates words).
TOKEN = re.compile(r"[^\W_]+")


def _is_diacritic(code: int) -> bool:
    return any(low <= code <= high for low, high in _DIACRITIC_RANGES)


def fold_char(char: str) -> str:
    """One character folded: NFKC, case-folded, diacritical marks removed (may be "" or longer)."""
    folded = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", char).casefold())
    if any(_is_diacritic(ord(c)) for c in folded):
        folded = "".join(c for c in folded if not _is_diacritic(ord(c)))
    return unicodedata.normalize("NFC", folded)


class _FoldTable(dict[int, str]):
    """`str.translate` table filled lazily: each character is folded once per process."""

    def __missing__(self, code: int) -> str:
        folded = fold_char(chr(code))
        self[code] = folded
        return folded


_FOLD = _FoldTable()


# Kana voicing marks left combining by folding one character at a time (half-width `ｶﾞ`).
_VOICING = re.compile("[\u3099\u309a]")


def fold(text: str) -> str:
    """`text` case-folded, NFKC-normalised and without diacritical marks (ASCII: just lower-cased)."""
    if text.isascii():
        return text.lower()
    folded = text.translate(_FOLD)
    if _VOICING.search(folded) is not None:
        folded = unicodedata.normalize("NFC", folded)  # `カ` + voicing mark → `ガ`, as `ガ` folds
    return folded


def has_cjk(text: str) -> bool:
    """True when `text` holds at least one CJK character (as folding defines them)."""
    return _CJK_CHAR.search(text) is not None


def _bigrams(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)]


def expand_cjk(folded: str) -> str:
    """Folded text with every CJK run replaced by its bigrams and its last character, space separated.

    `"用pg数据库"` → `" 用 pg 数据 据库 库 "`. A run of one character stays one token.
    """

    def expand(match: re.Match[str]) -> str:
        run = match.group()
        return " " + " ".join([*_bigrams(run), run[-1]]) + " "

    return _CJK_RUN.sub(expand, folded)


def index_form(text: str) -> str:
    """What the full-text index is given for `text`: ASCII as is, anything else folded and CJK-expanded."""
    if text.isascii():
        return text
    return expand_cjk(fold(text))


def query_cjk_form(folded: str) -> str:
    """A folded query term with its CJK runs expanded so that they match the indexed runs.

    A run followed by more words in the term must end where the indexed run ends, so it keeps
    its trailing single character (as the index does); the run that ends the term may continue
    in the text, so it gives only its bigrams (a final run of one character is given as is).
    """
    parts: list[str] = []
    position = 0
    for match in _CJK_RUN.finditer(folded):
        parts.append(folded[position : match.start()])
        run = match.group()
        closed = TOKEN.search(folded, match.end()) is not None
        tokens = [*_bigrams(run), run[-1]] if closed or len(run) == 1 else _bigrams(run)
        parts.append(" " + " ".join(tokens) + " ")
        position = match.end()
    parts.append(folded[position:])
    return "".join(parts)


class _OddTable(dict[int, str]):
    """`str.translate` table keeping only characters whose fold is not exactly one character."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        odd = char if len(_FOLD[code]) != 1 else ""
        self[code] = odd
        return odd


_ODD = _OddTable()


def fold_with_offsets(text: str) -> tuple[str, Callable[[int], int]]:
    """`fold(text)` and a function mapping each folded index (0..len) back to an index of `text`.

    Characters whose fold changes the length (`ß` → `ss`, a combining mark → nothing) are rare,
    so the text is folded in pieces between them at C speed; a folded index inside such a
    character's expansion maps to that character.
    """
    folded = fold(text)
    if text.isascii():
        return folded, lambda index: index
    if len(folded) != len(text.translate(_FOLD)):  # voicing marks were composed
        return _fold_slowly(text)
    odd = text.translate(_ODD)
    if not odd:
        return folded, lambda index: index
    special_chars = re.compile("[" + "".join(re.escape(char) for char in set(odd)) + "]")
    pieces: list[str] = []
    folded_starts: list[int] = []  # folded index where each original segment starts
    original_starts: list[int] = []
    expanded: list[bool] = []  # True when the segment is one character folded to another length
    position = 0
    length = 0
    for match in special_chars.finditer(text):
        if match.start() > position:
            plain = text[position : match.start()].translate(_FOLD)
            folded_starts.append(length)
            original_starts.append(position)
            expanded.append(False)
            pieces.append(plain)
            length += len(plain)
        special = _FOLD[ord(match.group())]
        if special:  # a character folded to nothing owns no folded index
            folded_starts.append(length)
            original_starts.append(match.start())
            expanded.append(True)
            pieces.append(special)
            length += len(special)
        position = match.end()
    if position < len(text):
        folded_starts.append(length)
        original_starts.append(position)
        expanded.append(False)
        pieces.append(text[position:].translate(_FOLD))
        length += len(pieces[-1])
    result = "".join(pieces)
    total = len(text)

    def to_original(index: int) -> int:
        if index >= length:
            return total
        segment = bisect.bisect_right(folded_starts, index) - 1
        start = original_starts[segment]
        return start if expanded[segment] else start + index - folded_starts[segment]

    return result, to_original


def _fold_slowly(text: str) -> tuple[str, Callable[[int], int]]:
    """`fold_with_offsets` one character at a time, composing voicing marks (rare Japanese input)."""
    pieces: list[str] = []
    owners: list[int] = []
    for index, char in enumerate(text):
        folded = _FOLD[ord(char)]
        if _VOICING.fullmatch(folded) and pieces:
            composed = unicodedata.normalize("NFC", pieces[-1] + folded)
            if len(composed) == 1:
                pieces[-1] = composed
                continue
        for piece in folded:
            pieces.append(piece)
            owners.append(index)
    total = len(text)
    return "".join(pieces), lambda index: owners[index] if index < len(owners) else total
