"""The `@` lookup controller: when to ask for candidates, and which answer to show.

Both UIs drive one `MentionLookupController`: the Textual composer
(`widgets/composer.py`) and the line mode's completer (`repl/completer.py`). Each
tells it what happened in its own terms (the `@` token now under the cursor, Esc,
Tab, a paste, an accepted candidate) and renders what it is told through a small
`LookupView`. Everything about timing and identity lives here, once:

* **Token identity.** A lookup belongs to a `LookupKey`: where the `@` word starts
  and what has been typed after it. The same key never asks twice; a new key
  supersedes the running lookup.
* **Dismissal.** Esc closes the menu for the whole `@` word: typing on in it keeps
  it closed; leaving the word, or deleting its `@` (and typing it again), asks
  again; so does Tab inside the word.
* **Several words.** While the menu is open for an `@` word that has not been found
  to match nothing, the word goes on across a space (`continues_at`: the UIs then
  read the query up to the cursor, `mentions.mention_token`); so a word typed fast,
  before its answer, goes on too. Once an answer finds nothing in either group the
  word ends at the next space, and a query already holding a space closes the
  menu: the space was just text.
* **Paste never opens the menu.** A paste, and a draft put back into the input
  (a failed send, messages returned from the queue), dismiss the word the cursor
  ends in, exactly as Esc would.
* **Debounce, abort, stale-result drop.** A lookup waits `LOOKUP_DEBOUNCE` before it
  asks; one exclusive job per controller: a newer key cancels the job and aborts
  its `AbortSignal` (the service stops reading), and a generation counter drops
  any answer that still arrives for an older key.
* **Two coordinated lookups for one key.** Given a `conversations` lookup (what was
  said, the second group), one job asks both with the same signal: first the titles,
  shown as soon as they arrive (they never wait for the second), then — once the
  caller's `after_titles` says the title rows are on screen — what was said. Asking
  both at once looked faster but was not: the conversation search's thread competed
  for the interpreter with the title lookup and the frame that draws its rows, and the
  title rows' p99 grew from 12 to 20 ms (bench_tui.py --text-search); the second group
  arrives a frame later instead, which nobody sees. The second is shown only after the
  first for the same key (so a new key's group never sits under an older key's
  titles), and both are dropped together with their key.

It imports no UI toolkit: the caller supplies `spawn` (how to run the one job:
a Textual worker, an asyncio task) and `sleep` (tests pass a fake clock).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Final, Generic, Protocol, TypeVar

from sessionref.service.abort import AbortSignal

from sessionref_tui.mentions import MentionToken

if TYPE_CHECKING:
    from sessionref.service.conversations import ConversationSearchResult

LOOKUP_DEBOUNCE: Final = 0.08
"""Seconds the `@` query must stay unchanged before candidates are asked for.

The one debounce of both UIs (they had 0.08 and 0.06). 80 ms rather than 60: what a user
waits is debounce + lookup + one frame, and at 100,000 sessions the lookup and the frame
take about 10 ms (p50, `bench/bench_tui.py`), so the menu still answers within the ~100 ms
that reads as immediate; the extra 20 ms lets keys typed in a burst (a fast bigram, key
repeat, a word typed at 10+ keys a second) share one lookup and one repaint, which leaves
the loop free to echo the typed characters. At an ordinary 120 ms between keys either value
asks once per key."""

LOADING_DELAY: Final = 0.25
"""Seconds a lookup may run before the view is told to say "searching…".

Fast lookups (all of them, on a healthy index) never flash a loading state; a slow one
(a store still being indexed, a cold disk) says so well before a user wonders."""

SUPERSEDED: Final = "superseded"
"""The abort reason given to the signal of a lookup a newer one replaced (or that was closed)."""

Candidate = TypeVar("Candidate")
ShownCandidate = TypeVar("ShownCandidate", contravariant=True)

Lookup = Callable[[str, AbortSignal], Awaitable[Sequence[Candidate]]]
"""`lookup(query, signal)`: the candidates for the text typed after `@`, best first."""

ConversationLookup = Callable[[str, AbortSignal], Awaitable["ConversationSearchResult | None"]]
"""`conversations(query, signal)`: the second group's answer for the text typed after `@` (what
was said; None: no such group, e.g. for a bare `@`). The controller only passes it on."""

Sleep = Callable[[float], Awaitable[None]]
"""`sleep(seconds)`: how the controller waits (`asyncio.sleep`; tests pass a fake clock)."""

AfterTitles = Callable[[], Awaitable[None]]
"""`after_titles()`: returns once the title rows just shown are drawn (the Textual composer waits
for the next refresh); the second group's search starts then. The default yields once."""


async def _yield_once() -> None:
    await asyncio.sleep(0)


class Job(Protocol):
    """A running lookup job: a Textual `Worker` or an `asyncio.Task` both fit."""

    def cancel(self) -> object:
        """Stop the job (it sees `CancelledError` at its next await)."""
        ...


Spawn = Callable[[Callable[[], Coroutine[None, None, None]]], Job]
"""`spawn(job)`: start `job()` (an `async def` function, or a partial of one) and return a handle.

The controller never has more than one job; it cancels the previous one itself, so `spawn`
needs no exclusivity of its own (a Textual adapter may still put it in an exclusive group)."""


def spawn_task(job: Callable[[], Coroutine[None, None, None]]) -> Job:
    """The default `Spawn`: an asyncio task on the running loop."""
    return asyncio.get_running_loop().create_task(job())


@dataclass(frozen=True, slots=True)
class LookupKey:
    """Which `@` word a lookup is for: where its `@` is (`start`) and the text typed after it."""

    start: int
    query: str

    @classmethod
    def of(cls, token: MentionToken) -> LookupKey:
        """The key of `token`."""
        return cls(token.start, token.query)


class LookupView(Protocol[ShownCandidate]):
    """What the controller tells a UI; the UI decides what each means on screen."""

    def lookup_started(self, key: LookupKey) -> None:
        """A lookup for `key` is pending (debouncing or running). The rows of the previous key stay
        on screen until its results arrive: clearing them first would make the menu flash on every key."""
        ...

    def show_loading(self, key: LookupKey) -> None:
        """The lookup for `key` has run for `LOADING_DELAY`: say it is searching."""
        ...

    def show_results(self, key: LookupKey, candidates: Sequence[ShownCandidate]) -> None:
        """The candidates for `key` (possibly none): replace the rows in one step and open the menu."""
        ...

    def show_failure(self, key: LookupKey, error: Exception) -> None:
        """The lookup for `key` failed: degrade quietly (a status line), never crash."""
        ...

    def show_conversations(self, key: LookupKey, found: ConversationSearchResult | None) -> None:
        """The second group's answer for `key` (only with a `conversations` lookup; always after
        `show_results` or `show_failure` for the same key)."""
        ...

    def show_conversation_failure(self, key: LookupKey, error: Exception) -> None:
        """The second lookup for `key` failed: its group says so quietly; the titles stay."""
        ...

    def hide(self) -> None:
        """Close the menu and forget its rows; no lookup is pending any more."""
        ...


@dataclass(slots=True)
class _Ticket:
    """One lookup: its key, the generation it was started in, its abort signal, and whether its
    title candidates were shown (the second group may still be on its way)."""

    key: LookupKey
    generation: int
    signal: AbortSignal
    answered: bool = False
    titles_found: bool = False


def _said_something(found: object) -> bool:
    """Whether a second group's answer lists anything (a result's `matches`; any other answer
    by its truth)."""
    matches = getattr(found, "matches", None)
    return bool(matches) if matches is not None else bool(found)


def _several_words(key: LookupKey) -> bool:
    """Whether `key`'s query went on across a space."""
    return any(char.isspace() for char in key.query)


class MentionLookupController(Generic[Candidate]):
    """Decides when the `@` menu asks for candidates and which answer it shows (see the module docs).

    Call `follow(token)` after every edit or cursor move with the `@` token at the cursor (or None),
    `dismiss` for Esc, `ask_again` for Tab in a closed `@` word, `pasted` after a paste or a draft was
    put back, `accepted` after a candidate was inserted and `close` when the input loses focus, the
    session changes or the UI shuts down.
    """

    def __init__(
        self,
        lookup: Lookup[Candidate],
        view: LookupView[Candidate],
        *,
        conversations: ConversationLookup | None = None,
        after_titles: AfterTitles = _yield_once,
        spawn: Spawn = spawn_task,
        sleep: Sleep = asyncio.sleep,
        debounce: float = LOOKUP_DEBOUNCE,
        loading_delay: float = LOADING_DELAY,
    ) -> None:
        self._lookup = lookup
        self._conversations = conversations
        self._after_titles = after_titles
        self._view = view
        self._spawn = spawn
        self._sleep = sleep
        self._debounce = debounce
        self._loading_delay = loading_delay
        self._active: LookupKey | None = None
        self._pending: _Ticket | None = None
        self._job: Job | None = None
        self._generation = 0
        self._dismissed_start: int | None = None
        self._word_start: int | None = None
        self._word_matches = False

    # --- state -----------------------------------------------------------------------------

    @property
    def active(self) -> LookupKey | None:
        """The key whose lookup is pending or whose answer is shown; None when the menu is closed."""
        return self._active

    @property
    def pending(self) -> bool:
        """True while a lookup is debouncing or running (its title candidates not shown yet)."""
        return self._pending is not None and not self._pending.answered

    @property
    def conversations_pending(self) -> bool:
        """True while the second group of the current key has not been answered yet."""
        return self._pending is not None and self._conversations is not None

    @property
    def continues_at(self) -> int | None:
        """The `@` of the word whose menu is open and not found to match nothing (its query may go
        on across a space); None otherwise, and for a bare `@`."""
        active = self._active
        if active is None or not self._word_matches or active.start != self._word_start:
            return None
        return active.start if active.query.strip() else None

    def is_dismissed(self, token: MentionToken | None) -> bool:
        """True when Esc (or a paste) closed the menu for the `@` word `token` is in."""
        return token is not None and token.start == self._dismissed_start

    # --- what the UI reports -------------------------------------------------------------------

    def follow(self, token: MentionToken | None, *, can_open: bool = True) -> None:
        """The text or the cursor changed; `token` is the `@` word at the cursor now (or None).

        Leaving the dismissed word (or deleting its `@`) forgets the dismissal. `can_open=False`
        (e.g. while text is selected) closes the menu but keeps the dismissal where it is.
        """
        if token is None or token.start != self._dismissed_start:
            self._dismissed_start = None
        if token is None or not can_open or self._dismissed_start is not None:
            self.close()
            return
        key = LookupKey.of(token)
        if key == self._active:
            return
        self._active = key
        self._start(key)

    def dismiss(self, token: MentionToken | None) -> None:
        """Esc: close the menu for the `@` word `token` is in; typing on in that word keeps it closed."""
        self._dismissed_start = None if token is None else token.start
        self.close()

    def pasted(self, token: MentionToken | None) -> None:
        """Text was pasted, or a draft put back, leaving the cursor in `token`: it never opens the menu.

        (A paste that ends in `@name` is the user's text, not a request to pick a session.)"""
        self.dismiss(token)

    def ask_again(self, token: MentionToken | None) -> None:
        """Tab in an `@` word whose menu is closed (dismissed, or never opened): ask for it now."""
        self._dismissed_start = None
        self._active = None
        self.follow(token)

    def accepted(self) -> None:
        """A candidate replaced the `@` word: close, and forget any dismissal."""
        self.close()
        self._dismissed_start = None

    def close(self) -> None:
        """Close the menu: cancel the job, abort its signal, drop any answer still on its way."""
        self._generation += 1
        self._active = None
        self._word_start = None
        self._abort()
        self._view.hide()

    # --- the one job -----------------------------------------------------------------------------

    def _abort(self) -> None:
        if self._pending is not None:
            self._pending.signal.abort(SUPERSEDED)
            self._pending = None
        if self._job is not None:
            self._job.cancel()
            self._job = None

    def _start(self, key: LookupKey) -> None:
        if key.start != self._word_start:  # a new `@` word: it may go on until found to match nothing
            self._word_start, self._word_matches = key.start, True
        self._generation += 1
        self._abort()
        ticket = _Ticket(key, self._generation, AbortSignal())
        self._pending = ticket
        self._view.lookup_started(key)
        self._job = self._spawn(partial(self._run, ticket))

    def _is_current(self, ticket: _Ticket) -> bool:
        return ticket.generation == self._generation and not ticket.signal.aborted

    def _done(self, ticket: _Ticket) -> None:
        """`ticket`'s job ends: nothing of it is pending any more (if it is still the current one)."""
        if self._pending is ticket:
            self._pending = None
            self._job = None

    async def _run(self, ticket: _Ticket) -> None:
        # Debounce: a newer key cancels this job while it waits here.
        await self._sleep(self._debounce)
        if not self._is_current(ticket):
            return
        second: asyncio.Future[ConversationSearchResult | None] | None = None
        try:
            await self._titles(ticket)
            if self._conversations is not None and self._is_current(ticket):
                await self._after_titles()
                if not self._is_current(ticket):
                    return
                second = asyncio.ensure_future(self._conversations(ticket.key.query, ticket.signal))
                await self._second_group(ticket, second)
        except asyncio.CancelledError:
            ticket.signal.abort(SUPERSEDED)
            raise
        finally:
            if second is not None and not second.done():
                second.cancel()  # stale (or cancelled): its answer is never shown
            self._done(ticket)

    async def _titles(self, ticket: _Ticket) -> None:
        """Ask for the title candidates and show them (or the failure) if `ticket` is still current."""
        loading = asyncio.ensure_future(self._loading_after_delay(ticket))
        try:
            found = await self._lookup(ticket.key.query, ticket.signal)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a failing lookup degrades the menu, never the input
            if self._is_current(ticket):
                ticket.answered = True
                self._view.show_failure(ticket.key, error)
            return
        finally:
            loading.cancel()
        if self._is_current(ticket):  # else stale: the token changed (or the menu closed) meanwhile
            ticket.answered = True
            shown = tuple(found)
            ticket.titles_found = bool(shown)
            decided = bool(shown) or self._conversations is None  # else the second group decides
            if decided and not self._found(ticket.key, bool(shown)):
                return
            self._view.show_results(ticket.key, shown)

    def _found(self, key: LookupKey, matched: bool) -> bool:
        """Record whether `key`'s word matches anything; False when that closed the menu (nothing
        matches a query that went on across a space: the space was text)."""
        self._word_matches = matched
        if not matched and _several_words(key):
            self.close()
            return False
        return True

    async def _second_group(
        self, ticket: _Ticket, second: asyncio.Future[ConversationSearchResult | None]
    ) -> None:
        """Wait for the conversation answer (started after the titles) and show it if still current."""
        try:
            found = await second
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if self._is_current(ticket):
                self._view.show_conversation_failure(ticket.key, error)
            return
        if self._is_current(ticket):
            if not ticket.titles_found and not self._found(ticket.key, _said_something(found)):
                return
            self._view.show_conversations(ticket.key, found)

    async def _loading_after_delay(self, ticket: _Ticket) -> None:
        await self._sleep(self._loading_delay)
        if self._is_current(ticket):
            self._view.show_loading(ticket.key)
