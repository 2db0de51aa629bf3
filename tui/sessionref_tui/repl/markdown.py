"""The model's Markdown, rendered by rich for the line mode's scrollback.

Only the Markdown *structure* of a reply is rendered (emphasis, code, lists, headings, quotes,
tables). The text is made inert before rich sees it, so an escape sequence in a reply is shown
as `\\x1b…`, never sent to the terminal; rich's styled segments are turned into prompt_toolkit
fragments (no escape sequences are generated here or parsed back), and every segment's text is
checked once more. Links are written out as `text (url)`, never as terminal hyperlinks. Raw HTML
is shown as typed (`Vec<String>` stays visible) instead of being dropped.

Two choices where Markdown and a chat transcript differ:

* A single line break in a reply stays a line break (as chat UIs show replies), where strict
  CommonMark would join the lines with a space.
* Replies stream: a block is printed once it is complete (`split_complete_blocks`), and the line
  being written is shown in the toolbar until then.
"""

from __future__ import annotations

import functools
import io
import re
from typing import Final

from markdown_it import MarkdownIt
from prompt_toolkit.formatted_text import StyleAndTextTuples
from rich.color import Color, ColorType
from rich.console import Console
from rich.markdown import Heading, Markdown
from rich.segment import Segment
from rich.style import Style

from sessionref_tui.display import inert

TAB_CELLS: Final = 4
"""Tabs in a reply are expanded to this many columns before rendering (a tab would show as `\\x09`)."""

CODE_THEME: Final = "ansi_dark"
"""Pygments style for fenced code: the terminal's own 16 colours, no background of its own."""

STYLE_CACHE_SIZE: Final = 512
"""Converted styles kept: a reply uses a few dozen (the code theme's token styles, emphasis, lists)."""

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")

_PARSER: Final = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")
"""rich's own parser settings, except that raw HTML is text. Reused: parsing keeps no state."""

_ANSI_NAMES: Final = (
    "ansiblack",
    "ansired",
    "ansigreen",
    "ansiyellow",
    "ansiblue",
    "ansimagenta",
    "ansicyan",
    "ansigray",
    "ansibrightblack",
    "ansibrightred",
    "ansibrightgreen",
    "ansibrightyellow",
    "ansibrightblue",
    "ansibrightmagenta",
    "ansibrightcyan",
    "ansiwhite",
)
_ATTRIBUTES: Final = ("bold", "dim", "italic", "underline", "strike", "reverse", "blink")


class _LeftHeading(Heading):
    """Headings start at the left margin, like every other line of the transcript."""

    LEVEL_ALIGN = dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), "left")


class _ReplyMarkdown(Markdown):
    """rich's Markdown with raw HTML read as text (rich drops inline HTML and HTML blocks)."""

    elements = {**Markdown.elements, "heading_open": _LeftHeading}  # noqa: RUF012 (rich's shape)

    def __init__(self, markup: str) -> None:
        super().__init__("", code_theme=CODE_THEME, hyperlinks=False)  # parsed once, below
        self.markup = markup
        self.parsed = _PARSER.parse(markup)


def _fence_after(line: str, fence: str | None) -> str | None:
    """The open code fence after `line` (`None` outside one), given the fence open before it."""
    match = _FENCE.match(line)
    if fence is None:
        return match.group(1) if match else None
    closes = match is not None and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
    return None if closes and not line.strip().strip(fence[0]) else fence


def keep_line_breaks(text: str) -> str:
    """`text` with each line outside code fences ending in a Markdown hard break (see module docs)."""
    lines = text.split("\n")
    fence: str | None = None
    for index, line in enumerate(lines):
        inside = fence is not None
        fence = _fence_after(line, fence)
        if not inside and fence is None and line.strip() and index < len(lines) - 1:
            lines[index] = line.rstrip(" ") + "  "
    return "\n".join(lines)


def split_complete_blocks(text: str) -> tuple[str, str]:
    """Split streamed Markdown into (the blocks that are complete, the rest still being written).

    A block is complete once a blank line outside a code fence has been followed by the first
    character of a line that is not indented (an indented line may still belong to the block:
    a list item's continuation, an indented code block). The last, unfinished line always stays.
    """
    lines = text.split("\n")
    cut = 0
    offset = 0
    fence: str | None = None
    after_blank = False
    for index, line in enumerate(lines):
        if after_blank and line[:1] not in ("", " ", "\t"):
            cut = offset
        if index == len(lines) - 1:
            break
        fence = _fence_after(line, fence)
        after_blank = fence is None and not line.strip()
        offset += len(line) + 1
    return text[:cut], text[cut:]


def _color_name(color: Color | None, background: bool) -> str | None:
    if color is None or color.type == ColorType.DEFAULT:
        return None
    number = color.number
    if color.type in (ColorType.STANDARD, ColorType.WINDOWS) and number is not None and number < 16:
        name = _ANSI_NAMES[number]  # the terminal's own palette
    else:
        name = color.get_truecolor().hex
    return f"bg:{name}" if background else name


@functools.lru_cache(maxsize=STYLE_CACHE_SIZE)
def fragment_style(style: Style | None) -> str:
    """A rich `Style` as a prompt_toolkit style string (colours and attributes; links are dropped)."""
    if style is None:
        return ""
    parts = [name for name in (_color_name(style.color, False), _color_name(style.bgcolor, True)) if name]
    for attribute in _ATTRIBUTES:
        value = getattr(style, attribute)
        if value is True:
            parts.append(attribute)
        elif value is False:
            parts.append(f"no{attribute}")
    return " ".join(parts)


def _fragments(line: list[Segment]) -> StyleAndTextTuples:
    # Everything `inert` rewrites is non-printable (Cc, Cf, Zl, Zp, Cs): printable text is kept as is.
    fragments: StyleAndTextTuples = [
        (fragment_style(segment.style), segment.text if segment.text.isprintable() else inert(segment.text))
        for segment in line
        if not segment.control
    ]
    while fragments and not fragments[-1][1].strip() and "bg:" not in fragments[-1][0]:
        fragments.pop()  # rich pads lines to the width; the terminal needs no trailing blanks
    if fragments and "bg:" not in fragments[-1][0]:
        fragments[-1] = (fragments[-1][0], fragments[-1][1].rstrip(" "))
    return fragments


def markdown_lines(text: str, width: int) -> list[StyleAndTextTuples]:
    """`text` rendered as Markdown at `width` cells: one list of inert fragments per screen line."""
    safe = "\n".join(inert(line.expandtabs(TAB_CELLS)) for line in text.split("\n"))
    console = Console(
        file=io.StringIO(),
        width=max(width, 8),
        color_system="truecolor",
        force_terminal=True,
        legacy_windows=False,
        emoji=False,
        highlight=False,
    )
    options = console.options.update(width=max(width, 8))
    rendered = console.render_lines(_ReplyMarkdown(keep_line_breaks(safe.strip("\n"))), options, pad=False)
    lines = [_fragments(line) for line in rendered]
    while lines and not lines[0]:
        lines.pop(0)  # rich may open a list with an empty line
    while lines and not lines[-1]:
        lines.pop()
    return lines
