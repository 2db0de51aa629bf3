"""The transcript: the current session's conversation, built from its log events.

User prompts show their mentions as `@label` chips; each session-reference snapshot
is one collapsible row ("Referenced sessions · label, label") that expands to the
snapshot JSON pretty-printed with its stats; context injected by something else (a
plugin, runtime instructions) is a dim collapsible row naming its source; assistant
replies stream as Markdown;
failed or cancelled turns say so plainly. Everything from the log is shown inert.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from textual.containers import VerticalScroll
from textual.content import Content
from textual.events import Click
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from sessionref_tui.display import inert, inert_lines
from sessionref_tui.event_view import (
    context_source,
    describe_stats,
    message_of,
    message_text,
    one_line,
    skipped_lines_notice,
    snapshot_json_pretty,
    snapshot_references,
    snapshot_title,
    user_message_kind,
)

TRANSCRIPT_ROW_LIMIT = 200
"""When a session is opened, only its newest rows are mounted (the log itself is untouched)."""

WELCOME_TEXT = (
    "Welcome! Type a message below and press Enter to send it (Ctrl+J starts a new line). Type @ to "
    "mention another session: pick one with ↑/↓ and Tab, and its conversation travels along as a "
    "read-only snapshot. A new session is saved once its first message is sent. Ctrl+T shows the log "
    "inspector, Ctrl+P all commands, Ctrl+Q quits."
)

CHIP_STYLE = "bold $text-accent on $accent-muted"


def markdown_safe(text: str) -> str:
    """`text` with every control character escaped as visible text, newlines kept (Markdown is wanted)."""
    return inert_lines(text)


def chip_content(text: str, labels: set[str]) -> Content:
    """The prompt text with each `@label` of a known referenced label styled as a chip; all literal.

    A chip starts a word (as a mention does), so `me@label` stays plain text.
    """
    safe = inert_keep_newlines(text)
    needles = sorted({"@" + inert(label) for label in labels if label}, key=len, reverse=True)
    parts: list[str | tuple[str, str]] = []
    position = 0
    plain_start = 0
    while position < len(safe):
        at_word_start = position == 0 or safe[position - 1].isspace()
        match = (
            next((needle for needle in needles if safe.startswith(needle, position)), None)
            if at_word_start
            else None
        )
        if match is None:
            position += 1
            continue
        if plain_start < position:
            parts.append(safe[plain_start:position])
        parts.append((match, CHIP_STYLE))
        position += len(match)
        plain_start = position
    if plain_start < len(safe):
        parts.append(safe[plain_start:])
    return Content.assemble(*parts)


def inert_keep_newlines(text: str) -> str:
    """Like `inert`, but line breaks stay line breaks (for multi-line message bodies)."""
    return markdown_safe(text)


class UserMessageView(Static):
    """A direct user prompt; `@label` mentions of referenced sessions are drawn as chips."""

    def __init__(self, text: str, labels: set[str]) -> None:
        super().__init__(classes="user-message")
        self.text = text
        self.labels = set(labels)
        self.update(chip_content(text, self.labels))

    def add_labels(self, labels: set[str]) -> None:
        """Re-draw with more chip labels (a snapshot placed after its prompt arrives later)."""
        if not labels <= self.labels:
            self.labels |= labels
            self.update(chip_content(self.text, self.labels))


def literal_title(text: str) -> str:
    """`text`, inert, as a `Collapsible` title drawn as written (never parsed as markup).

    `Collapsible` hands its title to `CollapsibleTitle`, which takes `Content` as it is; Textual
    annotates the parameter `str` only, hence the cast."""
    return cast(str, Content(inert(text)))


class SnapshotView(Collapsible):
    """One collapsible row per snapshot: expands to per-reference stats and the pretty JSON."""

    def __init__(self, message: Mapping[str, Any]) -> None:
        body = Content.assemble(
            *[
                part
                for ref in snapshot_references(message)
                for part in (
                    (inert(ref.label), "bold"),
                    (f"  {inert(ref.session_id)}\n", "dim"),
                    (f"  {describe_stats(ref)}\n", "italic"),
                )
            ],
            "\n",
            (markdown_safe(snapshot_json_pretty(message)), ""),
        )
        super().__init__(
            Static(body, classes="snapshot-body"),
            title=literal_title(snapshot_title(message)),
            collapsed=True,
            classes="snapshot",
        )
        self.labels = {ref.label for ref in snapshot_references(message)}


CONTEXT_TITLE_PREVIEW = 60
"""How many characters of injected context its collapsed row shows after the source."""


def context_title(source: str, text: str) -> str:
    """`Context from <source> · <the start of the text>` — the collapsed row of injected context."""
    return f"Context from {source} · {one_line(text, CONTEXT_TITLE_PREVIEW)}"


class ContextView(Collapsible):
    """Context something else injected as a user-role message (a plugin, runtime instructions): dim,
    labelled with its source and collapsed, so it never reads as the user's own message."""

    def __init__(self, source: str, text: str) -> None:
        super().__init__(
            Static(Content(markdown_safe(text)), classes="context-body"),
            title=literal_title(context_title(source, text)),
            collapsed=True,
            classes="context",
        )
        self.source = source
        self.text = text


class CheckpointView(Static):
    """A compaction checkpoint: the summary that replaced the earlier conversation."""

    def __init__(self, text: str) -> None:
        super().__init__(
            Content.assemble(("Compacted · earlier messages summarised\n", "bold"), markdown_safe(text)),
            classes="checkpoint",
        )


class AssistantReply(Static):
    """An assistant reply rendered as Markdown; grows while its chunks stream in.

    One `Static` holding a Rich `Markdown` renderable, re-rendered at most once per
    frame while streaming: far cheaper than a Markdown widget tree when a session
    with hundreds of replies is opened, and nothing is mounted per fragment.
    """

    def __init__(self, text: str = "") -> None:
        super().__init__(classes="assistant-reply")
        self.text = text
        self._render_pending = False
        self._show_markdown()

    def append_text(self, delta: str) -> None:
        """Add a streamed fragment to the end of the reply."""
        self.text += delta
        self._schedule()

    def finish(self, text: str) -> None:
        """Settle on the final text of the reply (re-rendered only when it differs)."""
        if text != self.text:
            self.text = text
            self._schedule()

    def _schedule(self) -> None:
        if not self._render_pending:
            self._render_pending = True
            self.call_after_refresh(self._show_markdown)

    def _show_markdown(self) -> None:
        # Imported on the first reply shown, not with the app: Markdown parsing (markdown-it) is
        # ~20 ms of imports that the first frame of `sessionref chat` does not need.
        from rich.markdown import Markdown as RichMarkdown

        self._render_pending = False
        self.update(RichMarkdown(markdown_safe(self.text)) if self.text.strip() else "")


class TurnNote(Static):
    """A plain line about how a turn ended when it did not end normally (error, cancelled)."""


NEW_BELOW_TEXT = "↓ New messages below · click, or send a message, to jump there"
"""The cue shown under the transcript while the user has scrolled up and more arrived."""


class NewBelowCue(Static):
    """A one-line cue that the transcript has new output below what is shown; a click follows it."""

    class Clicked(Message):
        """The user clicked the cue: the transcript should follow the conversation again."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Content(NEW_BELOW_TEXT), id=id)

    def on_click(self, event: Click) -> None:
        event.stop()
        self.post_message(self.Clicked())


class Transcript(VerticalScroll):
    """Builds and keeps up to date the rows of one session's conversation.

    It follows the conversation (stays scrolled to the bottom) until the user scrolls up; then new
    output does not move the view, and `UnseenBelow(True)` says there is more below until the user
    scrolls back down or `follow` is called (sending a message does)."""

    class UnseenBelow(Message):
        """Whether output arrived below the part of the transcript the user scrolled back to."""

        def __init__(self, unseen: bool) -> None:
            super().__init__()
            self.unseen = unseen

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.known_labels: set[str] = set()
        self._replies: dict[tuple[Any, Any], AssistantReply] = {}
        self._last_prompt: UserMessageView | None = None
        self._last_row: Widget | None = None
        self._message_count = 0
        self._following = True
        self._unseen = False

    def on_mount(self) -> None:
        self.anchor()
        self.watch(self, "scroll_y", self._scrolled, init=False)

    @property
    def following(self) -> bool:
        """Whether the view stays at the bottom as output arrives (False once the user scrolled up)."""
        return self._following

    @property
    def unseen_below(self) -> bool:
        """Whether output arrived below the view since the user scrolled up."""
        return self._unseen

    def follow(self) -> None:
        """Scroll to the bottom and stay there as output arrives (the cue goes away)."""
        self._following = True
        self.anchor()
        self._set_unseen(False)

    def _scrolled(self, old: float, new: float) -> None:
        if new >= self.max_scroll_y:
            self._following = True
            self._set_unseen(False)
        elif new < old:
            self._following = False  # the user moved up: new output no longer pulls the view down

    def _set_unseen(self, unseen: bool) -> None:
        if unseen != self._unseen:
            self._unseen = unseen
            self.post_message(self.UnseenBelow(unseen))

    def load(self, events: list[dict[str, Any]], *, skipped_lines: Sequence[int] = ()) -> None:
        """Replace everything with the conversation in `events` (a whole log); `skipped_lines` are
        the log's unreadable lines the store left out, said in a dim note above it."""
        self.remove_children()
        self.known_labels = set()
        self._replies = {}
        self._last_prompt = None
        self._last_row = None
        self._message_count = 0
        if (skipped_note := skipped_lines_notice(skipped_lines)) is not None:
            self.mount(TurnNote(Content.styled(skipped_note, "dim"), classes="skipped-lines"))
        pending = _collapse_finished_chunks(events)
        skipped = max(0, len(pending) - TRANSCRIPT_ROW_LIMIT)
        if skipped:
            self.mount(TurnNote(Content.styled(f"{skipped:,} earlier log rows not shown", "dim")))
        self.apply(pending[skipped:])
        if self._message_count == 0:
            self.mount(Static(Content(WELCOME_TEXT), classes="welcome"))
        self.follow()

    def apply(self, events: list[dict[str, Any]]) -> None:
        """Add what `events` (new log events, in seq order) change in the conversation."""
        for event in events:
            self._apply_one(event)
        if events and not self._following:
            self._set_unseen(True)

    def _mount_row(self, row: Widget) -> None:
        for welcome in self.query(".welcome"):
            welcome.remove()
        # A snapshot row and the prompt that cited it read as one block, whichever comes first.
        pair = (type(self._last_row), type(row))
        if pair in ((SnapshotView, UserMessageView), (UserMessageView, SnapshotView)):
            row.add_class("-attached")
        self._last_row = row
        self._message_count += 1
        self.mount(row)

    def _apply_one(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        assert isinstance(data, dict)
        if kind == "user/message":
            message = message_of(event) or {}
            shown_as = user_message_kind(message)
            if shown_as == "snapshot":
                view = SnapshotView(message)
                self.known_labels |= view.labels
                if self._last_prompt is not None:
                    self._last_prompt.add_labels(view.labels)
                self._mount_row(view)
            elif shown_as == "checkpoint":
                self._mount_row(CheckpointView(message_text(message)))
            elif shown_as == "context":
                self._mount_row(ContextView(context_source(message) or "", message_text(message)))
            else:
                prompt = UserMessageView(message_text(message), self.known_labels)
                self._last_prompt = prompt
                self._mount_row(prompt)
        elif kind == "assistant/chunk":
            chunk = data.get("chunk")
            delta = chunk.get("text") if isinstance(chunk, dict) else None
            if isinstance(delta, str):
                self._reply_for(data).append_text(delta)
        elif kind == "assistant/message":
            message = message_of(event) or {}
            self._reply_for(data).finish(message_text(message))
        elif kind == "turn/end":
            self._end_turn(data)

    def _reply_for(self, data: dict[str, Any]) -> AssistantReply:
        key = (data.get("turn"), data.get("step"))
        reply = self._replies.get(key)
        if reply is None:
            reply = AssistantReply()
            self._replies[key] = reply
            self._mount_row(reply)
        return reply

    def _end_turn(self, data: dict[str, Any]) -> None:
        reason = data.get("reason")
        if reason == "error":
            error = data.get("error")
            text = f"Turn failed: {error}" if error else "Turn failed."
            self._mount_row(TurnNote(Content(inert(text)), classes="turn-error"))
        elif reason == "cancelled":
            self._mount_row(
                TurnNote(Content("Turn cancelled — what streamed so far is kept."), classes="turn-note")
            )


def _collapse_finished_chunks(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop the chunks of steps that have a final `assistant/message` (it carries the same text)."""
    finished = {
        (event["data"].get("turn"), event["data"].get("step"))
        for event in events
        if event.get("type") == "assistant/message" and isinstance(event.get("data"), dict)
    }
    return [
        event
        for event in events
        if not (
            event.get("type") == "assistant/chunk"
            and isinstance(event.get("data"), dict)
            and (event["data"].get("turn"), event["data"].get("step")) in finished
        )
    ]
