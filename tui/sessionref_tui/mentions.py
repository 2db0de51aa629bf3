"""Pure mention logic shared by the Textual composer and the prompt_toolkit line mode.

Two things live here, both free of any UI toolkit:

* **The `@` trigger.** `active_mention_token` decides whether the cursor is in
  an `@query` token that should open the session picker; `mention_token` also
  continues an open picker's `@` word across spaces (a query of several words).
* **The chip model.** The composer shows a mention as a readable chip `@label`
  while its value carries the canonical token `@[label](dsh-session:…)`.
  `ChipDocument` holds the displayed text plus the chips (display ranges and
  their canonical tokens); every edit goes through `replace_range`, which keeps
  chips whole, shifts them, or turns a chip into plain text when an edit lands
  inside it. Backspace/Delete atomicity is `backspace_range` / `delete_range`.

Offsets are Python string indices (code points) into the displayed text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol

from sessionref.contract.mention_label import neutral_mention_label
from sessionref.contract.uri import SessionReference, find_mention_spans, format_session_reference_mention

from sessionref_tui.display import inert

MAX_DISTINCT_MENTIONS = 3
"""How many distinct sessions one message may mention (the service's hard maximum)."""


@dataclass(frozen=True, slots=True)
class MentionToken:
    """An `@query` token under the cursor.

    `start` is the index of the `@`; `end` is where the token's run of
    non-whitespace ends (it may extend past the cursor, so accepting a candidate
    replaces the whole word); `query` is the text between the `@` and the cursor.
    """

    start: int
    end: int
    query: str


def _run_start(text: str, cursor: int) -> int:
    """Index where the run of non-whitespace that ends at `cursor` begins."""
    index = cursor
    while index > 0 and not text[index - 1].isspace():
        index -= 1
    return index


def _run_end(text: str, cursor: int) -> int:
    """Index where the run of non-whitespace that starts at `cursor` ends."""
    index = cursor
    while index < len(text) and not text[index].isspace():
        index += 1
    return index


def active_mention_token(text: str, cursor: int) -> MentionToken | None:
    """Return the `@` token the cursor is in, or None when no picker should open.

    The `@` must be at the start of a line or right after whitespace (so
    `me@host` never triggers); the query is everything between the `@` and the
    cursor and may not contain whitespace; a `@[` that begins a canonical
    `@[label](dsh-session:…)` token is not a trigger. A cursor outside
    `0..len(text)` gives None.
    """
    if cursor < 1 or cursor > len(text):
        return None
    start = _run_start(text, cursor)
    if start >= cursor or text[start] != "@":
        return None
    query = text[start + 1 : cursor]
    if query.startswith("["):
        return None
    return MentionToken(start=start, end=_run_end(text, cursor), query=query)


MAX_CONTINUED_QUERY = 80
"""Characters an `@` query may run to across spaces (past that it is surely text)."""

# Shown for a space inside a chip: U+2800 (BRAILLE PATTERN BLANK) is one blank cell but not
# whitespace, so the composer's word wrapping (which breaks at whitespace) never splits a chip
# across two lines. Only the display uses it: the token, the value sent and saved drafts keep the
# label's own spaces.
CHIP_SPACE = "\u2800"


def mention_token(text: str, cursor: int, continues_at: int | None = None) -> MentionToken | None:
    """`active_mention_token`, or, when that is None and `continues_at` is the `@` of the word whose
    picker is open with matches, that `@` word continued to the cursor across spaces on one line
    (`@pg 16 pla`): the query then holds several words. The caller passes `continues_at` only
    while the picker has matches (`lookup.MentionLookupController.continues_at`), so once nothing
    matches a space ends the word again.
    """
    token = active_mention_token(text, cursor)
    if token is not None and CHIP_SPACE in token.query:  # typed into what was a chip
        return replace(token, query=token.query.replace(CHIP_SPACE, " "))
    if token is not None or continues_at is None:
        return token
    start = continues_at
    if not 0 <= start < cursor <= len(text) or text[start] != "@":
        return None
    if start > 0 and not text[start - 1].isspace():
        return None
    query = text[start + 1 : cursor]
    if query[:1].isspace() or query.startswith("[") or "\n" in query or len(query) > MAX_CONTINUED_QUERY:
        return None
    return MentionToken(start=start, end=_run_end(text, cursor), query=query)


class Mentionable(Protocol):
    """Anything that names a session to mention: a candidate, a `MentionTarget`."""

    @property
    def session_id(self) -> str: ...
    @property
    def label(self) -> str: ...


@dataclass(frozen=True, slots=True)
class MentionTarget:
    """A session to mention by id under `label` (when there is no candidate object at hand)."""

    session_id: str
    label: str


def mention_for(candidate: Mentionable) -> str:
    """The canonical token `@[label](dsh-session:…)` that accepting `candidate` inserts.

    The label is made neutral first (`neutral_mention_label`: one line, bounded, no control or
    markup characters), so the readable text the model receives never carries what a hostile title
    put there, and the chip shows exactly that label; the URI keeps the raw id.
    """
    label = neutral_mention_label(candidate.label, fallback=candidate.session_id)
    return format_session_reference_mention(SessionReference(candidate.session_id, label))


@dataclass(frozen=True, slots=True)
class Chip:
    """One mention shown as `display` over `start..end` of the displayed text.

    `token` is the canonical text the value carries in its place.
    """

    start: int
    end: int
    token: str
    session_id: str
    label: str

    @property
    def display(self) -> str:
        """The readable chip text: `@` plus the label made inert."""
        return chip_display_text(self.label)


def chip_display_text(label: str) -> str:
    """The text a chip shows for `label`: `@label`, control characters escaped, spaces unbreakable.

    Escaping keeps a chip on one line and keeps a hostile label from driving the
    terminal; the canonical token keeps the raw label and id.
    """
    return "@" + inert(label).replace(" ", CHIP_SPACE)


@dataclass(frozen=True, slots=True)
class ChipDocument:
    """The composer's content: displayed text plus its chips, sorted and non-overlapping."""

    display: str = ""
    chips: tuple[Chip, ...] = ()

    @property
    def value(self) -> str:
        """The canonical text: the display with each chip replaced by its token.

        This is what submit, copy and saved drafts use. A chip typed into turns into plain text
        that still shows its `CHIP_SPACE`s: here they are spaces again.
        """
        return canonical_slice(self, 0, len(self.display))

    def chip_ending_at(self, offset: int) -> Chip | None:
        """The chip whose last character is just before `offset`, if any."""
        return next((chip for chip in self.chips if chip.end == offset), None)

    def chip_starting_at(self, offset: int) -> Chip | None:
        """The chip whose first character is at `offset`, if any."""
        return next((chip for chip in self.chips if chip.start == offset), None)


def _valid_spans(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, session_id, label) of every valid canonical mention or bare URI in `text`."""
    spans = []
    for span in find_mention_spans(text):
        if not span.valid or span.session_id is None:
            continue
        label = span.label if span.label is not None else span.session_id
        spans.append((span.start, span.end, span.session_id, label))
    return spans


def parse_value(value: str) -> ChipDocument:
    """Build a document from canonical text: every valid mention becomes a chip.

    Malformed mentions stay as plain text, so the user sees them and submit
    reports them; `parse_value(v).value == v` for every `v`.
    """
    display_parts: list[str] = []
    chips: list[Chip] = []
    position = 0
    length = 0
    for start, end, session_id, label in _valid_spans(value):
        plain = value[position:start]
        display_parts.append(plain)
        length += len(plain)
        shown = chip_display_text(label)
        chips.append(Chip(length, length + len(shown), value[start:end], session_id, label))
        display_parts.append(shown)
        length += len(shown)
        position = end
    display_parts.append(value[position:])
    return ChipDocument("".join(display_parts), tuple(chips))


def _clamped(document: ChipDocument, start: int, end: int) -> tuple[int, int]:
    """`start..end` ordered and clamped to the displayed text."""
    length = len(document.display)
    low, high = sorted((start, end))
    return min(max(0, low), length), min(max(0, high), length)


def replace_range(document: ChipDocument, start: int, end: int, insert: str) -> ChipDocument:
    """Replace `display[start:end]` with plain `insert` and keep the chips consistent.

    Chips before the edit stay, chips after it shift; a chip the edit covers
    completely is removed; a chip the edit only touches from inside (typing in
    the middle, deleting part of it) turns into plain text, keeping whatever of
    its text remains. Inserting exactly at a chip's edge leaves the chip whole.
    """
    start, end = _clamped(document, start, end)
    delta = len(insert) - (end - start)
    chips: list[Chip] = []
    for chip in document.chips:
        if chip.end <= start:
            chips.append(chip)
        elif chip.start >= end:
            chips.append(replace(chip, start=chip.start + delta, end=chip.end + delta))
        # Otherwise the edit overlaps the chip: covered → gone, touched inside → plain text.
    display = document.display[:start] + insert + document.display[end:]
    return ChipDocument(display, tuple(chips))


def insert_value_text(document: ChipDocument, start: int, end: int, text: str) -> ChipDocument:
    """Replace `display[start:end]` with canonical `text`, turning its valid tokens into chips.

    This is paste: a pasted `@[label](dsh-session:…)` becomes a chip.
    """
    fragment = parse_value(text)
    start, end = _clamped(document, start, end)
    edited = replace_range(document, start, end, fragment.display)
    offset = start
    added = tuple(replace(chip, start=chip.start + offset, end=chip.end + offset) for chip in fragment.chips)
    return ChipDocument(edited.display, tuple(sorted(edited.chips + added, key=lambda chip: chip.start)))


def backspace_range(document: ChipDocument, cursor: int) -> tuple[int, int] | None:
    """The range Backspace at `cursor` removes: a whole chip ending there, else one character.

    None when there is nothing to the left of the cursor.
    """
    if cursor <= 0:
        return None
    chip = document.chip_ending_at(cursor)
    if chip is not None:
        return chip.start, chip.end
    return cursor - 1, cursor


def delete_range(document: ChipDocument, cursor: int) -> tuple[int, int] | None:
    """The range Delete at `cursor` removes: a whole chip starting there, else one character.

    None when there is nothing to the right of the cursor.
    """
    if cursor >= len(document.display):
        return None
    chip = document.chip_starting_at(cursor)
    if chip is not None:
        return chip.start, chip.end
    return cursor, cursor + 1


def active_mention_token_in(
    document: ChipDocument, cursor: int, continues_at: int | None = None
) -> MentionToken | None:
    """Like `mention_token`, but never for text that belongs to a chip.

    A chip reads `@label`, so without this a cursor at its end would reopen the
    picker for a mention that is already accepted.
    """
    token = mention_token(document.display, cursor, continues_at)
    if token is None:
        return None
    for chip in document.chips:
        if chip.start < token.end and token.start < chip.end:
            return None
    return token


@dataclass(frozen=True, slots=True)
class MentionInsertion:
    """How accepting a candidate edits the draft: display `start..end` becomes canonical `text`
    (the mention, and a space unless whitespace already follows), then the cursor goes to `cursor`."""

    start: int
    end: int
    text: str
    cursor: int


def mention_insertion(document: ChipDocument, token: MentionToken, mention: str) -> MentionInsertion:
    """The edit that replaces `token` with the canonical `mention` as a chip followed by a space
    (what `accept_mention` applies; the composer applies it as one undoable text-area edit)."""
    follows_space = token.end < len(document.display) and document.display[token.end].isspace()
    text = mention if follows_space else mention + " "
    return MentionInsertion(token.start, token.end, text, token.start + len(parse_value(mention).display) + 1)


def accept_mention(document: ChipDocument, token: MentionToken, mention: str) -> tuple[ChipDocument, int]:
    """Replace `token` with the canonical `mention` as a chip followed by a space.

    Returns the new document and the cursor position after the chip (after the
    space). No second space is added when whitespace already follows the token.
    """
    insertion = mention_insertion(document, token, mention)
    return insert_value_text(document, insertion.start, insertion.end, insertion.text), insertion.cursor


def distinct_mentioned_sessions(value: str) -> list[str]:
    """The session ids of valid mentions in canonical `value`, deduplicated, in first-appearance order."""
    return list(dict.fromkeys(session_id for _, _, session_id, _ in _valid_spans(value)))


def count_distinct_mentions(value: str) -> int:
    """How many different sessions canonical `value` mentions (valid mentions and bare URIs)."""
    return len(distinct_mentioned_sessions(value))


def chips_in(document: ChipDocument, start: int, end: int) -> Iterable[Chip]:
    """The chips that overlap `start..end` of the displayed text."""
    return (chip for chip in document.chips if chip.start < end and start < chip.end)


def reconcile(document: ChipDocument, display: str) -> ChipDocument:
    """Bring `document` in line with a new displayed text whose edit is not known.

    Used after undo/redo or an outside text load: the change is taken to be the
    single range between the longest common prefix and suffix, and applied with
    `replace_range`. Returns `document` itself when nothing changed.
    """
    old = document.display
    if old == display:
        return document
    prefix = 0
    limit = min(len(old), len(display))
    while prefix < limit and old[prefix] == display[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == display[-1 - suffix]:
        suffix += 1
    return replace_range(document, prefix, len(old) - suffix, display[prefix : len(display) - suffix])


def expand_to_chips(document: ChipDocument, start: int, end: int) -> tuple[int, int]:
    """Widen `start..end` so it never cuts a chip (copy and cut take chips whole)."""
    start, end = sorted((start, end))
    for chip in chips_in(document, start, end):
        start = min(start, chip.start)
        end = max(end, chip.end)
    return start, end


def canonical_slice(document: ChipDocument, start: int, end: int) -> str:
    """The canonical text of `start..end` widened to whole chips: what copy puts on the clipboard
    (a `CHIP_SPACE` outside a chip, left by a chip typed into, is a space again)."""
    start, end = expand_to_chips(document, start, end)
    parts: list[str] = []
    position = start
    for chip in chips_in(document, start, end):
        parts.append(document.display[position : chip.start].replace(CHIP_SPACE, " "))
        parts.append(chip.token)
        position = chip.end
    parts.append(document.display[position:end].replace(CHIP_SPACE, " "))
    return "".join(parts)
