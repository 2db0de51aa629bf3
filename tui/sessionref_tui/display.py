"""Pure helpers that turn data into text that is safe and compact to display.

Nothing here imports Textual or prompt_toolkit: the Textual composer and the
prompt_toolkit line mode both use these functions. Every string returned is
plain text; render it with `rich.text.Text(...)` (or a prompt_toolkit plain
fragment), never as markup.

`inert` (and `inert_lines`) are the core's `sessionref.contract.terminal_text`
functions, re-exported here: that module is the one definition of what must
not reach a terminal raw.
"""

from __future__ import annotations

import re
from typing import Final

from rich.cells import cell_len
from sessionref.contract.terminal_text import inert as inert
from sessionref.contract.terminal_text import inert_lines as inert_lines
from sessionref.service.fuzzy_titles import fuzzy_match

NEW_SESSION_NAME: Final = "New session"
"""What both UIs call a session that has no title yet (a draft, or one without a first message)."""

ELLIPSIS: Final = "…"
"""The one-cell marker put where text was cut."""

_MINUTE_MS: Final = 60_000
_HOUR_MS: Final = 60 * _MINUTE_MS
_DAY_MS: Final = 24 * _HOUR_MS
_WEEK_MS: Final = 7 * _DAY_MS
_YEAR_MS: Final = 365 * _DAY_MS


def relative_age(created_at_ms: int | float, now_ms: int | float) -> str:
    """Return a short age such as "just now", "5m", "3h", "2d", "4w" or "1y".

    Ages under a minute, and timestamps in the future (clock skew), read "just
    now". Each unit is floored: 119 seconds is "1m".
    """
    age = now_ms - created_at_ms
    if age < _MINUTE_MS:
        return "just now"
    for unit_ms, suffix in ((_YEAR_MS, "y"), (_WEEK_MS, "w"), (_DAY_MS, "d"), (_HOUR_MS, "h")):
        if age >= unit_ms:
            return f"{int(age // unit_ms)}{suffix}"
    return f"{int(age // _MINUTE_MS)}m"


def _take_cells(text: str, width: int) -> str:
    """The longest prefix of `text` that fits in `width` cells."""
    used = 0
    for index, char in enumerate(text):
        used += cell_len(char)
        if used > width:
            return text[:index]
    return text


def _take_cells_from_end(text: str, width: int) -> str:
    """The longest suffix of `text` that fits in `width` cells."""
    used = 0
    for index in range(len(text) - 1, -1, -1):
        used += cell_len(text[index])
        if used > width:
            return text[index + 1 :]
    return text


def truncate_end(text: str, width: int) -> str:
    """Fit `text` into `width` terminal cells, cutting the end and marking it with `…`.

    Text that fits is returned unchanged; a width below 1 gives "". Wide
    characters are never split, so the result may be one cell narrower.
    """
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    return _take_cells(text, width - 1) + ELLIPSIS


def truncate_start(text: str, width: int) -> str:
    """Fit `text` into `width` cells keeping its end, the cut start marked with `…` (for text that
    grows at its end, like a line being streamed). Text that fits is returned unchanged."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    return ELLIPSIS + _take_cells_from_end(text, width - 1)


def truncate_middle(text: str, width: int) -> str:
    """Fit `text` into `width` cells by replacing its middle with `…`.

    Used for paths: the start and the end (the folder name) both stay visible,
    the end getting the larger share. Text that fits is returned unchanged.
    """
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    room = width - 1
    head_width = room // 2
    tail = _take_cells_from_end(text, room - head_width)
    head = _take_cells(text, room - cell_len(tail))
    return head + ELLIPSIS + tail


def machine_folder(machine: str | None, folder: str, width: int) -> str:
    """`folder` (inert) in `width` cells, after `machine:` for a session from the shared catalog;
    the machine is kept whole when it takes at most half the width, the folder is shortened first."""
    if machine is None:
        return truncate_middle(folder, width)
    name = truncate_end(inert(machine), max(1, width // 2))
    return f"{name}:{truncate_middle(folder, max(1, width - cell_len(name) - 1))}"


def close_spans(text: str, query: str) -> list[tuple[int, int]]:
    """Where `query` matches `text` loosely (`sessionref.service.fuzzy_titles`: a close title
    match), else every exact occurrence (`match_spans`)."""
    found = fuzzy_match(query, text) if query else None
    return list(found.spans) if found is not None else match_spans(text, query)


def match_spans(text: str, needle: str) -> list[tuple[int, int]]:
    """Return the `(start, end)` positions in `text` of every case-insensitive occurrence of `needle`.

    Occurrences do not overlap and are listed left to right; an empty needle
    matches nothing. Matching uses `str.lower()`, like the candidate search, and
    the positions index the original `text` even when lower-casing changes a
    character's length.
    """
    if not needle:
        return []
    lowered_needle = needle.lower()
    lowered_parts: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        low = char.lower()
        lowered_parts.append(low)
        origin.extend([index] * len(low))
    lowered = "".join(lowered_parts)
    spans: list[tuple[int, int]] = []
    position = lowered.find(lowered_needle)
    while position != -1:
        end = position + len(lowered_needle)
        span = (origin[position], origin[end - 1] + 1)
        if not spans or span[0] >= spans[-1][1]:
            spans.append(span)
        position = lowered.find(lowered_needle, end)
    return spans


def format_bytes(count: int) -> str:
    """A byte count for people: "512 B", "18.2 KB", "3.4 MB" (1 KB = 1024 bytes)."""
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / (1024 * 1024):.1f} MB"


def wrap_cells(line: str, width: int) -> list[str]:
    """Word-wrap one line of text into pieces of at most `width` terminal cells.

    Breaks go between words (the spaces at a break are dropped); a word wider than `width` is cut
    where the cells run out, and wide characters are never split. Spaces inside a piece, and the
    line's leading spaces (indentation), are kept. An empty line gives `[""]`; a width below 1 is
    taken as 1. Call it on inert text: it only measures and splits.
    """
    width = max(width, 1)
    if cell_len(line) <= width:
        return [line]
    pieces: list[str] = []
    current = ""
    for run in _words_and_gaps(line):
        if run[0] == " ":
            if not pieces and not current:
                current = _take_cells(run, width)  # the first row's indentation
            elif current and cell_len(current) + cell_len(run) <= width:
                current += run
            elif current:
                pieces.append(current)
                current = ""
            continue
        if current.strip() and cell_len(current) + cell_len(run) > width:
            pieces.append(current.rstrip(" "))
            current = ""
        while cell_len(current) + cell_len(run) > width:  # the word alone does not fit a row
            head = _take_cells(run, width - cell_len(current))
            if not head and current:
                pieces.append(current)
                current = ""
                continue
            head = head or run[0]  # a wide character in a one-cell row: it cannot be split
            pieces.append(current + head)
            current = ""
            run = run[len(head) :]
        current += run
    if current or not pieces:
        pieces.append(current.rstrip(" ") if pieces else current)
    return [piece for piece in pieces if piece] or [""]


def _words_and_gaps(line: str) -> list[str]:
    """`line` split into alternating runs of spaces and of everything else, in order."""
    runs: list[str] = []
    for char in line:
        if runs and (char == " ") == (runs[-1][0] == " "):
            runs[-1] += char
        else:
            runs.append(char)
    return runs


def home_relative(path: str, home: str | None) -> str:
    """`path` with the `home` folder written `~` ("/home/ana/src/app" → "~/src/app"); other paths unchanged.

    Only a whole leading folder is replaced (`/home/anabel` is not under `/home/ana`). The result is
    still data: render it inert.
    """
    if not home or home == "/":
        return path
    home = home.rstrip("/")
    if path == home:
        return "~"
    if path.startswith(home + "/"):
        return "~" + path[len(home) :]
    return path


_MARKDOWN_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")
_MARKDOWN_EMPHASIS = re.compile(r"(\*\*|__|`+|~~)")
_MARKDOWN_LINE_START = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)+")


def markdown_glimpse(text: str) -> str:
    """One line of Markdown as a reader sees it: heading, quote and list markers, emphasis and code
    marks dropped, links as their text. For one-line glimpses (the picker preview), not rendering."""
    line = _MARKDOWN_LINE_START.sub("", text)
    line = _MARKDOWN_LINK.sub(r"\1", line)
    return _MARKDOWN_EMPHASIS.sub("", line)
