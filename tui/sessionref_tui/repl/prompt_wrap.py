"""Word wrapping for the prompt: a long line breaks between words, and soft wraps get no marker.

prompt_toolkit wraps a long buffer line at whatever character meets the right edge, and draws
the continuation prompt before every row it wraps to, so a word was cut in two with the `. `
marker in the middle of it. `WordWrapProcessor` pads the row (on screen only, the text is not
changed) so a word that would straddle the edge starts on the next row; a word wider than a
whole row is still cut. `continuation` marks only rows that start a new line of the message
(Ctrl+J, Alt+Enter, a paste); a row a long line wrapped onto gets a blank gutter.
"""

from __future__ import annotations

import bisect
from typing import Final

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout.processors import Processor, Transformation, TransformationInput
from prompt_toolkit.layout.utils import explode_text_fragments
from rich.cells import cell_len

PROMPT: Final = "› "
"""The prompt before the first row of the message."""

NEW_LINE_MARKER: Final = "."
"""Fills the gutter of a row that starts a new line of the message."""


def continuation(width: int, _line_number: int, wrap_count: int) -> str:
    """The gutter before a row after the first: `. ` for a new line, blank for a wrapped row."""
    return " " * width if wrap_count > 0 else NEW_LINE_MARKER * (width - 1) + " "


def wrap_padding(text: str, capacity: int) -> dict[int, int]:
    """Spaces to show before character `i` of `text` so no word straddles rows of `capacity` cells.

    Mirrors prompt_toolkit's wrapping (a character that does not fit moves to the next row). A
    word moves to the next row only if it fits a whole row; a longer word is cut as before.
    """
    padding: dict[int, int] = {}
    if capacity < 2:
        return padding
    column = 0
    index = 0
    while index < len(text):
        end = index + 1
        if text[index] != " ":
            while end < len(text) and text[end] != " ":
                end += 1
            cells = cell_len(text[index:end])
            if column > 0 and column + cells > capacity >= cells:
                padding[index] = capacity - column
                column = capacity
        for char in text[index:end]:
            width = cell_len(char)
            if column + width > capacity:
                column = 0
            column += width
        index = end
    return padding


class WordWrapProcessor(Processor):
    """Shows each prompt line wrapped between words (see the module docs); `gutter_cells` is the
    width of the prompt and of the continuation drawn before every row."""

    def __init__(self, gutter_cells: int) -> None:
        self._gutter_cells = gutter_cells

    def apply_transformation(self, transformation_input: TransformationInput) -> Transformation:
        """Insert display-only padding before words that would straddle the right edge."""
        fragments = explode_text_fragments(transformation_input.fragments)
        text = "".join(fragment[1] for fragment in fragments)
        padding = wrap_padding(text, transformation_input.width - self._gutter_cells)
        if not padding:
            return Transformation(transformation_input.fragments)
        shown: StyleAndTextTuples = []
        for index, fragment in enumerate(fragments):
            if index in padding:
                shown.append(("", " " * padding[index]))
            shown.append(fragment)
        starts = sorted(padding)
        # Display position of each padded word start, and how much padding comes before it.
        shifts = [sum(padding[start] for start in starts[: rank + 1]) for rank in range(len(starts))]
        shown_starts = [start + shift for start, shift in zip(starts, shifts, strict=True)]

        def source_to_display(position: int) -> int:
            rank = bisect.bisect_right(starts, position)
            return position + (shifts[rank - 1] if rank else 0)

        def display_to_source(position: int) -> int:
            rank = bisect.bisect_right(shown_starts, position)
            shift = shifts[rank - 1] if rank else 0
            if rank < len(starts) and position >= shown_starts[rank] - padding[starts[rank]]:
                return starts[rank]  # inside the padding: the word's first character
            return position - shift

        return Transformation(shown, source_to_display, display_to_source)
