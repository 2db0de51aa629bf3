"""A small app around one `Composer`, with a scriptable fake `MentionSource`.

The fake source records every query and can hold each call on an event the
test releases, so tests observe debounce, cancellation and stale results
without sleeping. `ManualSleep` replaces the composer's timer waits: delays
pass at once unless a test holds them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from sessionref.service.abort import AbortSignal
from sessionref.service.conversations import ConversationSearchResult, MessageContext
from sessionref_tui.widgets.composer import Composer
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Static
from worker_wait import workers_done

NOW_MS = 1_800_000_000_000
MINUTE_MS = 60_000


@dataclass(frozen=True)
class FakeCandidate:
    session_id: str
    label: str
    cwd: str | None = "/work/app"
    created_at: int = NOW_MS - 5 * MINUTE_MS
    same_workspace: bool = True
    updated_at: int | None = None

    @property
    def last_activity(self) -> int:
        return self.created_at if self.updated_at is None else self.updated_at


@dataclass(frozen=True)
class FakePreview:
    session_id: str
    label: str
    budget_bytes: int = 65_536
    message_count: int = 42
    retained_messages: int = 30
    omitted_messages: int = 12
    retained_bytes: int = 18_637
    omitted_bytes: int = 41_000
    truncated: bool = False
    compacted: bool = False
    first_line: str | None = "How do we ship this?"
    last_line: str | None = "Ship it on Friday."
    captured_through_seq: int | None = 10


@dataclass
class Call:
    """One call the composer made to the fake source."""

    argument: str
    signal: AbortSignal
    started: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: bool = False
    finished: bool = False


class FakeSource:
    """Filters `sessions` by case-insensitive substring of label or id, like the service."""

    def __init__(self, sessions: Sequence[FakeCandidate], *, hold: bool = False) -> None:
        self.sessions = list(sessions)
        self.hold = hold
        """When True, every call waits until the test sets `call.release`."""
        self.hold_previews = False
        self.calls: list[Call] = []
        self.preview_calls: list[Call] = []
        self.fail_with: Exception | None = None
        self._call_made = asyncio.Condition()

    @property
    def queries(self) -> list[str]:
        return [call.argument for call in self.calls]

    async def wait_for_call(self, argument: str, *, previews: bool = False) -> Call:
        """Return the first call with `argument`, waiting until it is made."""
        calls = self.preview_calls if previews else self.calls
        async with self._call_made:
            await self._call_made.wait_for(lambda: any(call.argument == argument for call in calls))
        return next(call for call in calls if call.argument == argument)

    async def _run(self, calls: list[Call], argument: str, signal: AbortSignal, hold: bool) -> Call:
        call = Call(argument, signal)
        calls.append(call)
        async with self._call_made:
            self._call_made.notify_all()
        if hold:
            try:
                await call.release.wait()
            except asyncio.CancelledError:
                call.cancelled = True
                raise
        call.finished = True
        return call

    async def candidates(self, query: str, signal: AbortSignal) -> Sequence[FakeCandidate]:
        await self._run(self.calls, query, signal, self.hold)
        if self.fail_with is not None:
            raise self.fail_with
        needle = query.lower()
        return [
            session
            for session in self.sessions
            if needle in session.label.lower() or needle in session.session_id.lower()
        ]

    async def preview(self, session_id: str, signal: AbortSignal) -> FakePreview:
        await self._run(self.preview_calls, session_id, signal, self.hold_previews)
        label = next((s.label for s in self.sessions if s.session_id == session_id), session_id)
        return FakePreview(session_id, label, message_count=len(session_id) * 10)

    async def conversations(self, query: str, signal: AbortSignal) -> ConversationSearchResult | None:
        """No conversation search here: the popup shows no second group."""
        return None

    async def context(self, session_id: str, seq: int, around: int, signal: AbortSignal) -> MessageContext:
        raise LookupError("no conversation search")

    def machine_of(self, session_id: str) -> str | None:
        """No catalog here: every session is local."""
        return None

    def catalog_note(self) -> str | None:
        """No catalog here: nothing to say."""
        return None


class ManualSleep:
    """Stands in for `asyncio.sleep` in the composer: held delays wait for `release`."""

    def __init__(self) -> None:
        self.held: set[float] = set()
        self._gates: dict[float, asyncio.Event] = {}
        self.waiting: dict[float, int] = {}
        self._changed = asyncio.Condition()

    def hold(self, delay: float) -> None:
        self.held.add(delay)

    def release(self, delay: float) -> None:
        """Let every sleeper currently waiting on `delay` continue."""
        gate = self._gates.pop(delay, None)
        if gate is not None:
            gate.set()

    async def __call__(self, delay: float) -> None:
        if delay not in self.held:
            await asyncio.sleep(0)
            return
        gate = self._gates.setdefault(delay, asyncio.Event())
        self.waiting[delay] = self.waiting.get(delay, 0) + 1
        async with self._changed:
            self._changed.notify_all()
        try:
            await gate.wait()
        finally:
            self.waiting[delay] -= 1

    async def wait_until_waiting(self, delay: float) -> None:
        """Return once some sleeper waits on `delay`."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.waiting.get(delay, 0) > 0)


SESSIONS = [
    FakeCandidate("s-research", "Research notes", "/work/app", NOW_MS - 5 * MINUTE_MS, True),
    FakeCandidate("s-deploy", "Deploy checklist", "/srv/ops", NOW_MS - 3 * 60 * MINUTE_MS, False),
    FakeCandidate("s-bug", "Bug triage", None, NOW_MS - 2 * 24 * 60 * MINUTE_MS, False),
    FakeCandidate("s-retro", "Retro", "/work/app", NOW_MS - 30 * 24 * 60 * MINUTE_MS, True),
]


class ComposerHarness(App[None]):
    """A transcript stand-in above a composer docked at the bottom."""

    CSS = """
    #transcript { height: 1fr; }
    Composer { dock: bottom; }
    """

    def __init__(self, source: FakeSource | None = None, *, sleep: ManualSleep | None = None) -> None:
        super().__init__()
        self.source = source if source is not None else FakeSource(SESSIONS)
        self.sleep = sleep if sleep is not None else ManualSleep()
        self.submitted: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("transcript line 1\ntranscript line 2", id="transcript")
        yield Composer(self.source, now_ms=lambda: NOW_MS, cursor_blink=False, sleep=self.sleep)

    def on_mount(self) -> None:
        self.query_one(Composer).focus()

    def on_composer_submitted(self, event: Composer.Submitted) -> None:
        self.submitted.append(event.value)

    @property
    def composer(self) -> Composer:
        return self.query_one(Composer)


def rendered(widget: Widget) -> list[str]:
    """The text of every line the widget currently renders."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


async def settle(pilot: Pilot) -> None:
    """Let pending messages, workers and the refresh that follows them finish."""
    await pilot.pause()
    await workers_done(pilot.app)
    await pilot.pause()


async def type_text(pilot: Pilot, text: str) -> None:
    """Type `text` key by key, as a user would."""
    await pilot.press(*[{" ": "space"}.get(char, char) for char in text])
