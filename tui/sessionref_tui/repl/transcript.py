"""What the line mode prints above the prompt: log events of the current session, notices and errors.

Everything printed from data goes through `inert` line by line (message text
keeps its line breaks, nothing else), and is printed as prompt_toolkit
fragments, never as markup or raw escape sequences. Text is laid out for the
terminal's width: messages are word-wrapped under their `you › ` gutter, and
the model's replies (and compaction summaries) are rendered as Markdown
(`sessionref_tui.repl.markdown`). Replies stream: each Markdown block is
printed once it is complete; the line being written is exposed as
`partial_line` for the toolbar.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from prompt_toolkit.formatted_text import FormattedText, StyleAndTextTuples
from prompt_toolkit.output import Output
from prompt_toolkit.shortcuts import print_formatted_text
from prompt_toolkit.styles import BaseStyle
from rich.cells import cell_len

from sessionref_tui.display import inert, wrap_cells
from sessionref_tui.errors import ReplCode
from sessionref_tui.event_view import (
    context_source,
    message_text,
    snapshot_references,
    user_message_kind,
)
from sessionref_tui.repl.markdown import markdown_lines, split_complete_blocks

REPLY_PREFIX: Final = "assistant › "
"""The gutter before the first line of a reply; later lines are indented to match."""

DEFAULT_COLUMNS: Final = 80
"""The width assumed when the transcript is not told the terminal's."""


def reference_labels(message: Mapping[str, Any]) -> list[str]:
    """`label (id)` (or just the id when they are equal) for each reference of a snapshot message, inert."""
    labels: list[str] = []
    for ref in snapshot_references(message):
        same = ref.label == ref.session_id
        labels.append(inert(ref.session_id) if same else f"{inert(ref.label)} ({inert(ref.session_id)})")
    return labels


def _under_gutter(prefix: StyleAndTextTuples, lines: list[StyleAndTextTuples]) -> list[StyleAndTextTuples]:
    """`prefix` before the first line, as many spaces as it is wide before the others."""
    indent = [("", " " * sum(cell_len(fragment[1]) for fragment in prefix))]
    return [[*(prefix if index == 0 else indent), *line] for index, line in enumerate(lines)]


class Transcript:
    """Prints above the prompt and keeps a plain-text copy of every printed line (`lines`)."""

    def __init__(
        self,
        *,
        output: Output | None,
        style: BaseStyle | None,
        on_change: Callable[[], None] | None = None,
        columns: Callable[[], int] | None = None,
    ) -> None:
        self._output = output
        self._style = style
        self._on_change = on_change or (lambda: None)
        self.columns: Callable[[], int] = columns or (lambda: DEFAULT_COLUMNS)
        """The terminal width in cells, asked each time something is laid out."""
        self.lines: list[str] = []
        """Every line printed so far, as plain text (what a screen reader or a test sees)."""
        self._stream: dict[tuple[Any, Any], str] = {}
        """Per (turn, step): the streamed reply text not printed yet (its unfinished block)."""
        self._started: set[tuple[Any, Any]] = set()
        """Replies that have printed their first block (the next blocks get no gutter label)."""

    @property
    def partial_line(self) -> str:
        """The last line written so far of the reply block being streamed, or ""."""
        for text in reversed(list(self._stream.values())):
            lines = [line for line in text.split("\n") if line.strip()]
            if lines:
                return inert(lines[-1])
        return ""

    def print(self, fragments: StyleAndTextTuples) -> None:
        """Print one line of fragments above the prompt (fragment texts must already be inert)."""
        self.print_lines([fragments])

    def print_lines(self, lines: list[StyleAndTextTuples]) -> None:
        """Print several lines above the prompt in one write (each print costs a redraw of the prompt)."""
        if not lines:
            return
        joined: StyleAndTextTuples = []
        for fragments in lines:
            self.lines.append("".join(text for _style, text, *_rest in fragments))
            joined.extend(fragments)
            joined.append(("", "\n"))
        print_formatted_text(FormattedText(joined), style=self._style, output=self._output, end="")
        self._on_change()

    def notice(self, text: str) -> None:
        """A dim informational line."""
        self.print([("class:notice", text)])

    def error(self, code: str, message: str) -> None:
        """An error line naming its stable code."""
        self.print([("class:error", f"✗ {inert(code)}: "), ("class:error.message", inert(message))])

    def block(self, prefix: StyleAndTextTuples, text: str, style: str) -> None:
        """Print multi-line `text` word-wrapped to the terminal, `prefix` before its first row and an
        indent as wide as the prefix before the others."""
        indent = sum(cell_len(fragment[1]) for fragment in prefix)
        width = self.columns() - indent - 1
        rows = [row for line in text.split("\n") for row in wrap_cells(inert(line), width)]
        self.print_lines(_under_gutter(prefix, [[(style, row)] for row in rows]))

    def markdown(self, prefix: StyleAndTextTuples, text: str) -> None:
        """Print the Markdown `text` rendered for the terminal's width, `prefix` before its first line."""
        indent = sum(cell_len(fragment[1]) for fragment in prefix)
        self.print_lines(_under_gutter(prefix, markdown_lines(text, self.columns() - indent - 1) or [[]]))

    def show_events(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Render new log events of the current session in order."""
        for event in events:
            self.show_event(event)

    def show_event(self, event: Mapping[str, Any]) -> None:
        """Render one log event (unknown types are skipped: the `/log` command lists everything)."""
        kind = event.get("type")
        data = event.get("data")
        if not isinstance(data, dict):
            return
        if kind == "user/message":
            self._show_user_message(data)
        elif kind == "assistant/chunk":
            self._stream_chunk(data)
        elif kind == "assistant/message":
            self._finish_reply(data)
        elif kind == "turn/end":
            self.flush_streams()
            reason = str(data.get("reason", ""))
            if reason == "error":
                code = str(data.get("errorCode", ReplCode.TURN_FAILED))
                self.error(code, str(data.get("error", "the turn failed")))
            elif reason not in ("", "completed"):
                detail = data.get("rejectReason")
                suffix = f": {inert(str(detail))}" if detail else ""
                self.notice(f"[turn {data.get('turn', '?')} {inert(reason)}{suffix}]")
        elif kind == "session/title":
            self.notice(f"title: {inert(str(data.get('title', '')))}")

    def _show_user_message(self, data: Mapping[str, Any]) -> None:
        shown_as = user_message_kind(data)
        if shown_as == "prompt":
            self.block([("class:you", "you › ")], message_text(data), "class:you.text")
        elif shown_as == "snapshot":
            labels = ", ".join(reference_labels(data))
            self.print([("class:reference", "⧉ Referenced sessions · " + labels)])
        elif shown_as == "checkpoint":
            self.markdown([("class:checkpoint", "⟲ compacted › ")], message_text(data))
        else:
            self.notice(f"[context message from {inert(context_source(data) or '')}]")

    def _stream_chunk(self, data: Mapping[str, Any]) -> None:
        chunk = data.get("chunk")
        if not isinstance(chunk, dict) or chunk.get("type") != "text-delta":
            return
        key = (data.get("turn"), data.get("step"))
        complete, rest = split_complete_blocks(self._stream.get(key, "") + str(chunk.get("text", "")))
        if complete.strip():
            self._print_reply(key, complete)
        self._stream[key] = rest
        self._on_change()

    def _print_reply(self, key: tuple[Any, Any], text: str) -> None:
        """Print one or more complete Markdown blocks of the reply `key`."""
        if key in self._started:
            self.print([])  # the blank line that separated the blocks in the reply
            self.markdown([("", " " * len(REPLY_PREFIX))], text)
        else:
            self._started.add(key)
            self.markdown([("class:assistant", REPLY_PREFIX)], text)

    def _finish_reply(self, data: Mapping[str, Any]) -> None:
        key = (data.get("turn"), data.get("step"))
        message = data.get("message")
        if key in self._stream or key in self._started:
            rest = self._stream.pop(key, "")
            if rest.strip():
                self._print_reply(key, rest)
        elif isinstance(message, dict) and message_text(message).strip():
            self._print_reply(key, message_text(message))
        self._started.discard(key)
        self._on_change()

    def flush_streams(self) -> None:
        """Print whatever is left of unfinished replies (after a cancel or an error)."""
        for key in list(self._stream):
            rest = self._stream.pop(key)
            if rest.strip():
                self._print_reply(key, rest)
        self._started.clear()
        self._on_change()
