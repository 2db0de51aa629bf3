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


class _OddTable(dict[int, str]):
    """`str.translate` table keeping only characters whose fold is not exactly one character."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        odd = char if len(_FOLD[code]) != 1 else ""
        self[code] = odd
        return odd


_ODD = _OddTable()
_VOICING = re.compile("[\u3099\u309a]")
_VOICED_PAIR = re.compile("[^\x00-\x7f][\u3099\u309a]")
_RUNS = re.compile(r"[\x00-\x7f]+|[^\x00-\x7f]+")
# Below this share of non-ASCII characters, text is folded run by run (ASCII runs at C speed,
# the short accented runs from a cache); above it, in one `translate` over the whole text.
_DENSE_SHARE = 1 / 32
# Short non-ASCII runs repeat (`é`, `ü`, `–`, `’`): their folds are kept (bounded, cleared when full).
_RUN_CACHE: dict[str, tuple[str, str]] = {}
_RUN_CACHE_SIZE = 4096
_RUN_CACHE_LENGTH = 16


def _compose_voicing(folded: str) -> str:
    """A kana folded one character at a time plus a combining voicing mark → the voiced kana.

    `ｶﾞ` folds to `カ` + U+3099; composing gives `ガ`, as `ガ` itself folds.
    """
    if _VOICING.search(folded) is None:
        return folded

    def compose(match: re.Match[str]) -> str:
        composed = unicodedata.normalize("NFC", match.group())
        return composed if len(composed) == 1 else match.group()

    return _VOICED_PAIR.sub(compose, folded)


def _fold_chars(text: str) -> str:
    return _compose_voicing(text.translate(_FOLD))


def _run(run: str) -> tuple[str, str]:
    """(folded run, its characters whose fold is not one character) for a non-ASCII run."""
    cached = _RUN_CACHE.get(run)
    if cached is None:
        cached = (_fold_chars(run), run.translate(_ODD))
        if len(run) <= _RUN_CACHE_LENGTH:
            if len(_RUN_CACHE) >= _RUN_CACHE_SIZE:
                _RUN_CACHE.clear()
            _RUN_CACHE[run] = cached
    return cached


# Characters known to fold to themselves (kana, CJK ideographs, Hangul syllables; checked by a
# test): a dense text's characters outside them are the only ones that may fold to another length.
IDENTITY_RANGES = (
    (0x3041, 0x3098),
    (0x309D, 0x309E),
    (0x30A0, 0x30FE),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7A3),
)
_MAYBE_ODD = re.compile(f"[^\\x00-\\x7f{_class(IDENTITY_RANGES)}]")


def _odd_characters(text: str) -> str:
    """The characters of `text` whose fold is not exactly one character."""
    if not _dense(text):
        return "".join(_run(run)[1] for run in _RUNS.findall(text) if run[0] >= "\x80")
    return "".join(char for char in set(_MAYBE_ODD.findall(text)) if len(_FOLD[ord(char)]) != 1)


def _dense(text: str) -> bool:
    return len(text) - len(text.encode("ascii", "ignore")) > _DENSE_SHARE * len(text)


def fold(text: str) -> str:
    """`text` case-folded, NFKC-normalised and without diacritical marks (ASCII: just lower-cased).

    Characters are folded one at a time (through a table filled lazily, one `fold_char` per
    distinct character and process), then kana voicing marks are composed.
    """
    if text.isascii():
        return text.lower()
    if _dense(text):
        return _fold_chars(text)
    return "".join(run.lower() if run[0] < "\x80" else _run(run)[0] for run in _RUNS.findall(text))


def _fold_by_character(run: str) -> list[tuple[str, int]]:
    """(folded piece, index in `run`) per character of a non-ASCII run, voicing marks composed."""
    mapped: list[tuple[str, int]] = []
    for offset, char in enumerate(run):
        piece = _FOLD[ord(char)]
        if _VOICING.fullmatch(piece) and mapped and mapped[-1][0][-1:] >= "\x80":
            composed = unicodedata.normalize("NFC", mapped[-1][0] + piece)
            if len(composed) == 1:  # `カ` + voicing mark: one folded character, owned by `カ`
                mapped[-1] = (composed, mapped[-1][1])
                continue
        if piece:
            mapped.append((piece, offset))
    return mapped


def fold_with_offsets(text: str) -> tuple[str, Callable[[int], int]]:
    """`fold(text)` and a function mapping each folded index (0..len) back to an index of `text`.

    Almost always every character folds to one character and the mapping is the identity. When
    one does not (`ß` → `ss`, a combining mark → nothing, a composed voicing mark), the runs
    holding such characters are mapped one character at a time, and a folded index inside an
    expansion maps to its character.
    """
    folded = fold(text)
    if text.isascii():
        return folded, lambda index: index
    if not _odd_characters(text) and len(folded) == len(text):
        return folded, lambda index: index
    runs = _RUNS.findall(text)
    folded_starts: list[int] = []  # folded index where each segment starts
    original_starts: list[int] = []
    exact: list[bool] = []  # True: the segment maps character for character
    length = 0
    start = 0
    for run in runs:
        pieces: list[tuple[str, int, bool]]
        if run[0] < "\x80":
            pieces = [(run.lower(), 0, True)]
        else:
            run_folded, run_odd = _run(run)
            if not run_odd and len(run_folded) == len(run):
                pieces = [(run_folded, 0, True)]
            else:
                pieces = [(piece, offset, False) for piece, offset in _fold_by_character(run)]
                if "".join(piece for piece, _, _ in pieces) != run_folded:
                    pieces = [(run_folded, 0, False)]  # composed otherwise: the run maps to its start
        for piece, offset, one_to_one in pieces:
            continues = (
                one_to_one
                and exact
                and exact[-1]
                and (original_starts[-1] - folded_starts[-1] == start + offset - length)
            )
            if piece and not continues:
                folded_starts.append(length)
                original_starts.append(start + offset)
                exact.append(one_to_one)
            length += len(piece)
        start += len(run)
    total = len(text)

    def to_original(index: int) -> int:
        if index >= length:
            return total
        position = bisect.bisect_right(folded_starts, index) - 1
        origin = original_starts[position]
        return origin + index - folded_starts[position] if exact[position] else origin

    return folded, to_original


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
