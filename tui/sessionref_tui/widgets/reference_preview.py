"""What the model would receive from the highlighted candidate, or where a conversation match was said.

The facts (message count, retained vs omitted messages and bytes under the
current budget, first and last retained lines) come from the reference
service's `preview`, run in a worker that is debounced and cancelled as soon as
the highlight moves on, so holding ↓ never queues up reads.

For a row of the "said in conversation" group the pane shows the matched message
in context instead: its neighbours from the session's projection (the service's
`message_context`, read the same way) around the match's own snippet.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final, Protocol

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text
from sessionref.contract.errors import describe_error
from sessionref.service.abort import AbortSignal
from textual import work
from textual.widgets import Static

from sessionref_tui.display import format_bytes, inert, markdown_glimpse, relative_age, truncate_end
from sessionref_tui.snippets import fit_snippet, role_label, snippet_pieces

PREVIEW_DEBOUNCE: Final = 0.1
"""Seconds the highlight must rest on a candidate before its preview is read.

Moving through the list faster than this reads nothing for the rows skipped."""

PREVIEW_GROUP: Final = "mention-preview"
"""The exclusive worker group: starting a preview cancels the previous one."""


class PreviewLike(Protocol):
    """What the pane reads (`sessionref.service.references.ReferencePreview` fits)."""

    session_id: str
    label: str
    budget_bytes: int
    message_count: int
    retained_messages: int
    omitted_messages: int
    retained_bytes: int
    omitted_bytes: int
    truncated: bool
    compacted: bool
    first_line: str | None
    last_line: str | None


PreviewLoader = Callable[[str, AbortSignal], Awaitable[Any]]
"""`loader(session_id, signal)` returns a `PreviewLike` or raises."""

ContextLoader = Callable[[str, int, AbortSignal], Awaitable[Any]]
"""`context_loader(session_id, seq, signal)` returns the service's `MessageContext`, or raises."""

_MATCH_STYLE = "bold underline"

CONTEXT_LINES: Final = 3
"""Messages the pane shows around a conversation match (under its head line, in the pane's 4 lines):
the one before and the one after, or two after the first message and two before the last."""

CONTEXT_AROUND: Final = 2
"""Messages read each side of a match, so that `CONTEXT_LINES` can be filled at either end."""


def is_conversation_match(candidate: Any) -> bool:
    """Whether `candidate` is a row of the "said in conversation" group (it has a snippet and a seq)."""
    return hasattr(candidate, "snippet") and hasattr(candidate, "seq")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return " ".join(line.split())
    return ""


def render_context(context: Any, match: Any, label: str, width: int, *, age: str | None = None) -> Text:
    """The pane's lines for a conversation match: a head line, then the messages around it, one
    line each (`who › text`); the matched one shows the match's snippet, emphasised. Data is inert."""
    head = Text(no_wrap=True, end="")
    head.append(inert(label), style="bold")
    if context.position is None:
        head.append(" · compacted since: a checkpoint now stands there", style="dim")
    else:
        head.append(f" · message {context.position} of {context.total}", style="dim")
    if age is not None:
        head.append(f" · {active_text(age)}", style="dim")
    lines = [head]
    messages = list(context.messages)
    at = next((index for index, message in enumerate(messages) if message.matched), 0)
    first = max(0, min(at - 1, len(messages) - CONTEXT_LINES))
    for message in messages[first : first + CONTEXT_LINES]:
        line = Text(no_wrap=True, end="")
        who = f"{role_label(message.role, message.checkpoint)} › "
        line.append(who, style="dim italic")
        room = max(1, width - cell_len(who))
        if message.matched:
            for text, is_match in fit_snippet(snippet_pieces(match.snippet, match.spans), room):
                line.append(text, style=_MATCH_STYLE if is_match else None)
        else:
            line.append(truncate_end(inert(_first_line(message.text)), room), style="dim")
        lines.append(line)
    for line in lines:
        line.truncate(max(1, width), overflow="ellipsis")
    return Text("\n", end="\n").join(lines)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def active_text(age: str) -> str:
    """How the preview says when a session was last active, from a `relative_age` ("active 2h ago")."""
    return "active just now" if age == "just now" else f"active {age} ago"


def render_preview(preview: PreviewLike, label: str, width: int, *, age: str | None = None) -> Text:
    """The preview pane's lines for `preview`, each cut to `width` cells; data is shown inert.

    `age` is the session's last activity as a `relative_age`, shown in the first line when given."""
    head = Text(no_wrap=True, end="")
    head.append(inert(label), style="bold")
    head.append(f" · {_plural(preview.message_count, 'message')}", style="dim")
    if age is not None:
        head.append(f" · {active_text(age)}", style="dim")
    if preview.compacted:
        head.append(" · compacted", style="dim")
    budget = Text(no_wrap=True, end="")
    budget.append(f"sends {preview.retained_messages} ({format_bytes(preview.retained_bytes)})")
    if preview.omitted_messages or preview.omitted_bytes:
        budget.append(" · ")
        budget.append(
            f"omits {preview.omitted_messages} ({format_bytes(preview.omitted_bytes)})", style="bold"
        )
    if preview.truncated:
        budget.append(" · long text cut", style="dim")
    budget.append(f" · budget {format_bytes(preview.budget_bytes)}", style="dim")
    lines = [head, budget]
    for name, said in (("first", preview.first_line), ("last ", preview.last_line)):
        if said is not None:
            excerpt = Text(f"{name} ", style="dim", no_wrap=True, end="")
            excerpt.append(truncate_end(inert(markdown_glimpse(said)), max(1, width - 6)), style="italic")
            lines.append(excerpt)
    for line in lines:
        line.truncate(max(1, width), overflow="ellipsis")
    return Text("\n", end="\n").join(lines)


class PreviewView:
    """A Rich renderable laying a preview (or, given `match`, a match in context) out for the width
    it is given."""

    def __init__(self, preview: Any, label: str, age: str | None = None, match: Any | None = None) -> None:
        self.preview = preview
        self.label = label
        self.age = age
        self.match = match

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.match is not None:
            text = render_context(self.preview, self.match, self.label, options.max_width, age=self.age)
        else:
            text = render_preview(self.preview, self.label, options.max_width, age=self.age)
        text.end = "\n"  # Textual counts line breaks to size the widget
        yield text


class ReferencePreview(Static):
    """Shows `render_preview` for the highlighted candidate, reading it off the UI path."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.loader: PreviewLoader | None = None
        """Set by the composer; without it the pane stays empty."""
        self.context_loader: ContextLoader | None = None
        """Reads a conversation match's context (set by the composer; without it such rows show nothing)."""
        self.session_id: str | None = None
        """The session the pane is for (shown or being read)."""
        self._key: tuple[str, int | None] | None = None
        self._matches: dict[tuple[str, int | None], Any] = {}
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        """How the debounce waits (tests pass a gate they release)."""
        self.now_ms: Callable[[], float] | None = None
        """The clock for "active 2h ago" (set by the composer; without it no age is shown)."""
        self._cache: dict[tuple[str, int | None], Any] = {}
        self._labels: dict[str, str] = {}
        self._activity: dict[str, float] = {}
        self._signal: AbortSignal | None = None
        # Shown and hidden through `display`, not a class: no stylesheet pass on every keystroke.
        self.display = False

    def reset(self) -> None:
        """Forget everything and cancel a running read (the popup closed)."""
        self._cancel()
        self._cache.clear()
        self._labels.clear()
        self._activity.clear()
        self._matches.clear()
        self.session_id = None
        self._key = None
        self.remove_class("-stale")
        self.display = False
        self._set_content("")

    def pause(self) -> None:
        """Drop a pending read; what the pane shows stays until the next `show_for`.

        The composer calls this when a keystroke starts a new lookup: a preview
        landing while the lookup waits would take the frame the new rows need
        (Textual draws at most 60 frames a second), and the first row may change.
        """
        self._cancel()

    def show_for(self, candidate: Any) -> None:
        """Show the preview of `candidate` (or the context of a conversation match), from cache or by
        starting a fresh read."""
        session_id = candidate.session_id
        is_match = is_conversation_match(candidate)
        key = (session_id, candidate.seq if is_match else None)
        self._labels[session_id] = candidate.label
        last_activity = getattr(candidate, "last_activity", None)
        if last_activity is not None:
            self._activity[session_id] = last_activity
        if is_match:
            self._matches[key] = candidate
        if key == self._key and (key in self._cache or self._signal is not None):
            return
        self._cancel()
        self.session_id = session_id
        self._key = key
        if key in self._cache:
            self._show(key, self._cache[key])
            return
        if (self.context_loader if is_match else self.loader) is None:
            return
        if self.display:
            self.add_class("-stale")
        else:
            self.display = True
            self._set_content(Text(f"reading {inert(candidate.label)}…", style="dim italic"))
        self._signal = AbortSignal()
        self._read(key, self._signal)

    def _set_content(self, content: Text | PreviewView | str) -> None:
        # The pane has a fixed height (composer.tcss): new content never needs a layout pass.
        self.update(content, layout=False)

    def _cancel(self) -> None:
        if self._signal is not None:
            self._signal.abort("highlight moved")
            self._signal = None
        self.workers.cancel_group(self, PREVIEW_GROUP)

    def _show(self, key: tuple[str, int | None], preview: Any) -> None:
        self.remove_class("-stale")
        self.display = True
        session_id = key[0]
        label = self._labels.get(session_id, getattr(preview, "label", session_id))
        last_activity = self._activity.get(session_id)
        age = None
        if last_activity is not None and self.now_ms is not None:
            age = relative_age(last_activity, self.now_ms())
        self._set_content(PreviewView(preview, label, age, self._matches.get(key)))

    @work(exclusive=True, group=PREVIEW_GROUP, exit_on_error=False)
    async def _read(self, key: tuple[str, int | None], signal: AbortSignal) -> None:
        # Debounce: a newer highlight cancels this worker while it waits here.
        await self.sleep(PREVIEW_DEBOUNCE)
        session_id, seq = key
        if signal.aborted:
            return
        try:
            if seq is None:
                if self.loader is None:
                    return
                preview = await self.loader(session_id, signal)
            else:
                if self.context_loader is None:
                    return
                preview = await self.context_loader(session_id, seq, signal)
        except asyncio.CancelledError:
            signal.abort("cancelled")
            raise
        except Exception as error:  # a failing source must never crash the composer
            if signal is self._signal:
                self._signal = None
                self.remove_class("-stale")
                _code, message = describe_error(error)
                self._set_content(Text(f"preview unavailable: {inert(message)}", style="dim italic"))
            return
        if signal is not self._signal or signal.aborted:
            return  # the highlight moved on while this was being read
        self._signal = None
        self._cache[key] = preview
        self._show(key, preview)
