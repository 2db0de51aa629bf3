"""Asynchronous `@` session completion for the prompt_toolkit line mode.

prompt_toolkit runs one completion coroutine per buffer at a time, so a slow
lookup awaited inside `get_completions_async` would hold back the next query.
Instead, `MentionLookups` watches the buffer itself: every edit that leaves the
cursor in an `@` token (same trigger rules as the Textual composer, via
`active_mention_token`) starts a debounced lookup and aborts the one it
supersedes. Results land in a small cache keyed by the query, and the
`SessionMentionCompleter` only reads that cache, so completion itself never
waits. Late results of an older query are dropped; while a newer query runs,
the previous list stays on screen (no flicker).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.utils import Event
from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref.service.abort import AbortSignal

from sessionref_tui.display import inert, match_spans, relative_age, truncate_end, truncate_middle
from sessionref_tui.mentions import MentionToken, active_mention_token

LOOKUP_DEBOUNCE_SECONDS: Final = 0.06
"""Quiet time after a keystroke before a candidate lookup starts."""

MAX_LABEL_CELLS: Final = 48
"""Labels longer than this are cut at the end so the menu stays readable."""

MAX_CWD_CELLS: Final = 40
"""Paths are cut in the middle so both the root and the folder name stay visible."""


class CandidateView(Protocol):
    """What the completer reads from a `sessionref.service.references.Candidate`."""

    @property
    def session_id(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def last_activity(self) -> int: ...
    @property
    def same_workspace(self) -> bool: ...
    @property
    def mention(self) -> str: ...


CandidateLookup = Callable[[str, AbortSignal], Awaitable[Sequence[CandidateView]]]
"""`lookup(query, signal)`: candidates for the text typed after `@`."""


@dataclass(frozen=True, slots=True)
class LookupResult:
    """The candidates found for one query, tagged with the token they belong to."""

    token_start: int
    query: str
    candidates: tuple[CandidateView, ...]


class MentionLookups:
    """Drives candidate lookups for one buffer; superseded lookups are aborted and their results dropped."""

    def __init__(self, lookup: CandidateLookup, *, debounce: float = LOOKUP_DEBOUNCE_SECONDS) -> None:
        self._lookup = lookup
        self._debounce = debounce
        self._buffer: Buffer | None = None
        self._check_scheduled = False
        self._task: asyncio.Task[None] | None = None
        self._signal: AbortSignal | None = None
        self._pending_query: tuple[int, str] | None = None
        self._dismissed_start: int | None = None
        self._pasted = False
        self.latest: LookupResult | None = None
        """The newest results that still belong to the token under the cursor (shown while refining)."""
        self.failed: str | None = None
        """Why the last lookup failed, if it did; the menu just degrades."""
        self.on_update: Event[MentionLookups] = Event(self)
        """Fired whenever the lookup state changes (started, finished, dropped, dismissed)."""

    @property
    def searching(self) -> bool:
        """True while a lookup for the current token is pending or running."""
        return self._pending_query is not None

    def attach(self, buffer: Buffer) -> None:
        """Watch `buffer`: text and cursor changes (re)start lookups."""
        self._buffer = buffer
        buffer.on_text_changed += self._schedule_check
        buffer.on_cursor_position_changed += self._schedule_check

    def reset_for_new_vantage(self) -> None:
        """Forget cached results (for example after switching sessions: ranking depends on it)."""
        self._abort_pending()
        self.latest = None
        self._dismissed_start = None
        self.on_update.fire()

    def dismiss(self) -> None:
        """Close the menu for the current token; it does not reopen until the cursor leaves the token."""
        buffer = self._buffer
        if buffer is None:
            return
        token = active_mention_token(buffer.document.text, buffer.document.cursor_position)
        if token is not None:
            self._dismissed_start = token.start
        self._abort_pending()
        buffer.cancel_completion()
        self.on_update.fire()

    def ignore_pasted_token(self) -> None:
        """Call right before inserting pasted text: a token the paste ends in does not open the menu."""
        self._pasted = True

    def is_dismissed(self, token: MentionToken) -> bool:
        """True when the user pressed Esc on this token."""
        return self._dismissed_start == token.start

    def close(self) -> None:
        """Abort any running lookup."""
        self._abort_pending()

    # -- internals -------------------------------------------------------

    def _schedule_check(self, _buffer: Buffer) -> None:
        # Changes made while the user walks the menu (prompt_toolkit writes the highlighted completion into
        # the buffer) fire with the menu state briefly unset; looking one loop turn later sees the real state.
        if self._check_scheduled:
            return
        self._check_scheduled = True
        asyncio.get_running_loop().call_soon(self._check)

    def _check(self) -> None:
        self._check_scheduled = False
        buffer = self._buffer
        if buffer is None:
            return
        state = buffer.complete_state
        if state is not None and state.complete_index is not None:
            return
        document = buffer.document
        token = active_mention_token(document.text, document.cursor_position)
        if self._pasted:
            self._pasted = False
            if token is not None:  # pasting never opens the menu (it behaves as if dismissed)
                self._dismissed_start = token.start
                self._abort_pending()
                return
        if token is None:
            self._dismissed_start = None
            self._abort_pending()
            if self.latest is not None:
                self.latest = None
                self.on_update.fire()
            return
        if self._dismissed_start is not None and self._dismissed_start != token.start:
            self._dismissed_start = None
        if self.is_dismissed(token):
            return
        if self.latest is not None and self.latest.token_start != token.start:
            self.latest = None
        key = (token.start, token.query)
        if self.latest is not None and (self.latest.token_start, self.latest.query) == key:
            self._abort_pending()
            self._show(buffer)
            return
        if self._pending_query == key:
            return
        if self.latest is not None:
            self._show(buffer)  # keep the previous list visible while the refined query runs
        self._start(key)

    def _start(self, key: tuple[int, str]) -> None:
        self._abort_pending()
        signal = AbortSignal()
        self._signal = signal
        self._pending_query = key
        self._task = asyncio.get_running_loop().create_task(self._run(key, signal))
        self.on_update.fire()

    def _abort_pending(self) -> None:
        if self._signal is not None:
            self._signal.abort("superseded")
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None
        self._signal = None
        if self._pending_query is not None:
            self._pending_query = None
            self.on_update.fire()

    async def _run(self, key: tuple[int, str], signal: AbortSignal) -> None:
        token_start, query = key
        if self._debounce > 0:
            await asyncio.sleep(self._debounce)
        try:
            found = tuple(await self._lookup(query, signal))
            failure = None
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a failed lookup degrades the menu, never the prompt
            found = ()
            failure = f"{getattr(error, 'code', type(error).__name__)}: {getattr(error, 'message', error)}"
        if signal.aborted or self._pending_query != key:
            return  # superseded: a newer query owns the menu
        self._pending_query = None
        self._task = None
        self._signal = None
        self.failed = failure
        self.latest = LookupResult(token_start, query, found)
        buffer = self._buffer
        if buffer is not None:
            self._show(buffer)
        self.on_update.fire()

    def _show(self, buffer: Buffer) -> None:
        """Re-run the (cache-only) completer so the menu shows the newest list."""
        state = buffer.complete_state
        if state is not None and state.complete_index is not None:
            return
        buffer.complete_state = None
        with contextlib.suppress(Exception):  # no running application (e.g. between prompts)
            buffer.start_completion(select_first=False)


class SessionMentionCompleter(Completer):
    """Completions for the `@` token under the cursor, read from `MentionLookups` (never waits)."""

    def __init__(self, lookups: MentionLookups, *, now_ms: Callable[[], float] | None = None) -> None:
        self._lookups = lookups
        self._now_ms = now_ms or (lambda: time.time() * 1000)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        """Yield one completion per cached candidate; accepting one inserts its canonical mention token."""
        token = active_mention_token(document.text, document.cursor_position)
        latest = self._lookups.latest
        if token is None or latest is None or latest.token_start != token.start:
            return
        if self._lookups.is_dismissed(token):
            return
        start_position = token.start - document.cursor_position
        now = self._now_ms()
        for candidate in latest.candidates:
            yield Completion(
                text=mention_for(candidate) + " ",
                start_position=start_position,
                display=candidate_label_fragments(candidate, latest.query),
                display_meta=candidate_meta_fragments(candidate, latest.query, now),
            )


def mention_for(candidate: CandidateView) -> str:
    """The token accepting `candidate` inserts: the label made inert (as shown), the URI with the raw id."""
    return format_session_reference_mention(SessionReference(candidate.session_id, inert(candidate.label)))


def highlighted(text: str, needle: str, style: str, match_style: str) -> StyleAndTextTuples:
    """`text` as fragments with each case-insensitive occurrence of `needle` in `match_style`.

    Every piece is passed through `inert`, so data can never drive the terminal.
    """
    fragments: StyleAndTextTuples = []
    position = 0
    for start, end in match_spans(text, needle):
        if start > position:
            fragments.append((style, inert(text[position:start])))
        fragments.append((f"{style} {match_style}", inert(text[start:end])))
        position = end
    if position < len(text) or not fragments:
        fragments.append((style, inert(text[position:])))
    return fragments


def candidate_label_fragments(candidate: CandidateView, query: str) -> StyleAndTextTuples:
    """The menu's main column: the label, match highlighted, cut to `MAX_LABEL_CELLS`."""
    label = truncate_end(inert(candidate.label), MAX_LABEL_CELLS)
    return highlighted(label, query, "class:candidate.label", "class:candidate.match")


def candidate_meta_fragments(candidate: CandidateView, query: str, now_ms: float) -> StyleAndTextTuples:
    """The menu's meta column: id (only when it differs from the label), cwd, age of the last activity."""
    fragments: StyleAndTextTuples = []
    if candidate.session_id != candidate.label:
        shown_id = truncate_end(inert(candidate.session_id), 24)
        fragments.extend(highlighted(shown_id, query, "class:candidate.id", "class:candidate.match"))
        fragments.append(("class:candidate.sep", " · "))
    if candidate.cwd is None:
        fragments.append(("class:candidate.cwd", "(no cwd)"))
    else:
        cwd = truncate_middle(inert(candidate.cwd), MAX_CWD_CELLS)
        marker = "● " if candidate.same_workspace else ""
        fragments.append(("class:candidate.here", marker))
        fragments.extend(highlighted(cwd, query, "class:candidate.cwd", "class:candidate.match"))
    fragments.append(("class:candidate.sep", " · "))
    fragments.append(("class:candidate.age", relative_age(candidate.last_activity, now_ms)))
    return fragments
