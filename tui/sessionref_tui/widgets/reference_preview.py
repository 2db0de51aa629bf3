"""What the model would receive from the highlighted candidate.

The facts (message count, retained vs omitted messages and bytes under the
current budget, first and last retained lines) come from the reference
service's `preview`, run in a worker that is debounced and cancelled as soon as
the highlight moves on, so holding ↓ never queues up reads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final, Protocol

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text
from sessionref.contract.errors import describe_error
from sessionref.service.abort import AbortSignal
from textual import work
from textual.widgets import Static

from sessionref_tui.display import format_bytes, inert, relative_age, truncate_end

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
    for name, line in (("first", preview.first_line), ("last ", preview.last_line)):
        if line is not None:
            excerpt = Text(f"{name} ", style="dim", no_wrap=True, end="")
            excerpt.append(truncate_end(inert(line), max(1, width - 6)), style="italic")
            lines.append(excerpt)
    for line in lines:
        line.truncate(max(1, width), overflow="ellipsis")
    return Text("\n", end="\n").join(lines)


class PreviewView:
    """A Rich renderable laying a preview out for the width it is given."""

    def __init__(self, preview: PreviewLike, label: str, age: str | None = None) -> None:
        self.preview = preview
        self.label = label
        self.age = age

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = render_preview(self.preview, self.label, options.max_width, age=self.age)
        text.end = "\n"  # Textual counts line breaks to size the widget
        yield text


class ReferencePreview(Static):
    """Shows `render_preview` for the highlighted candidate, reading it off the UI path."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.loader: PreviewLoader | None = None
        """Set by the composer; without it the pane stays empty."""
        self.session_id: str | None = None
        """The session the pane is for (shown or being read)."""
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        """How the debounce waits (tests pass a gate they release)."""
        self.now_ms: Callable[[], float] | None = None
        """The clock for "active 2h ago" (set by the composer; without it no age is shown)."""
        self._cache: dict[str, Any] = {}
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
        self.session_id = None
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
        """Show the preview of `candidate`, from cache or by starting a fresh read."""
        session_id = candidate.session_id
        self._labels[session_id] = candidate.label
        last_activity = getattr(candidate, "last_activity", None)
        if last_activity is not None:
            self._activity[session_id] = last_activity
        if session_id == self.session_id and (session_id in self._cache or self._signal is not None):
            return
        self._cancel()
        self.session_id = session_id
        if session_id in self._cache:
            self._show(self._cache[session_id])
            return
        if self.loader is None:
            return
        if self.display:
            self.add_class("-stale")
        else:
            self.display = True
            self._set_content(Text(f"reading {inert(candidate.label)}…", style="dim italic"))
        self._signal = AbortSignal()
        self._read(session_id, self._signal)

    def _set_content(self, content: Text | PreviewView | str) -> None:
        # The pane has a fixed height (composer.tcss): new content never needs a layout pass.
        self.update(content, layout=False)

    def _cancel(self) -> None:
        if self._signal is not None:
            self._signal.abort("highlight moved")
            self._signal = None
        self.workers.cancel_group(self, PREVIEW_GROUP)

    def _show(self, preview: Any) -> None:
        self.remove_class("-stale")
        self.display = True
        label = self._labels.get(preview.session_id, preview.label)
        last_activity = self._activity.get(preview.session_id)
        age = None
        if last_activity is not None and self.now_ms is not None:
            age = relative_age(last_activity, self.now_ms())
        self._set_content(PreviewView(preview, label, age))

    @work(exclusive=True, group=PREVIEW_GROUP, exit_on_error=False)
    async def _read(self, session_id: str, signal: AbortSignal) -> None:
        # Debounce: a newer highlight cancels this worker while it waits here.
        await self.sleep(PREVIEW_DEBOUNCE)
        loader = self.loader
        if loader is None or signal.aborted:
            return
        try:
            preview = await loader(session_id, signal)
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
        self._cache[session_id] = preview
        self._show(preview)
