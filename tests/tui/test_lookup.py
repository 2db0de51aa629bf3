"""The `@` lookup controller on its own: no UI toolkit, a fake clock, no real waiting.

Every wait is on an event: the fake clock wakes sleepers when a test advances it, the fake lookup
answers when a test releases it, and `Jobs.settle` waits until every job the controller started
has finished (or was cancelled). `GUARD_SECONDS` only turns a hung test into a failing one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from sessionref.service.abort import AbortSignal
from sessionref_tui.lookup import (
    LOADING_DELAY,
    LOOKUP_DEBOUNCE,
    SUPERSEDED,
    Job,
    LookupKey,
    MentionLookupController,
)
from sessionref_tui.mentions import MentionToken, active_mention_token

GUARD_SECONDS = 10.0


def token(text: str) -> MentionToken | None:
    """The `@` token with the cursor at the end of `text`."""
    return active_mention_token(text, len(text))


class FakeClock:
    """`sleep` waits until `advance` moves the clock past its deadline."""

    def __init__(self) -> None:
        self.now = 0.0
        self._sleepers: list[tuple[float, float, asyncio.Future[None]]] = []
        self._changed = asyncio.Condition()

    async def sleep(self, delay: float) -> None:
        future = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.now + delay, delay, future))
        async with self._changed:
            self._changed.notify_all()
        await future

    def sleeping(self, delay: float) -> bool:
        """Whether some sleeper waits for `delay` seconds and has not been woken yet."""
        return any(asked == delay and not future.done() for _due, asked, future in self._sleepers)

    async def until_sleeping(self, delay: float = LOOKUP_DEBOUNCE) -> None:
        """Return once some sleeper waits for `delay` (the debounce by default)."""
        async with asyncio.timeout(GUARD_SECONDS), self._changed:
            await self._changed.wait_for(lambda: self.sleeping(delay))

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for due, _asked, future in self._sleepers:
            if due <= self.now + 1e-9 and not future.done():
                future.set_result(None)
        self._sleepers = [sleeper for sleeper in self._sleepers if not sleeper[2].done()]


@dataclass
class Call:
    query: str
    signal: AbortSignal
    release: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: bool = False


class FakeLookup:
    """Answers `query` with the names containing it; with `hold`, only once the test releases the call."""

    def __init__(self, names: Sequence[str], *, hold: bool = False) -> None:
        self.names = list(names)
        self.hold = hold
        self.calls: list[Call] = []
        self.fail_with: Exception | None = None
        self._changed = asyncio.Condition()

    @property
    def queries(self) -> list[str]:
        return [call.query for call in self.calls]

    async def __call__(self, query: str, signal: AbortSignal) -> list[str]:
        call = Call(query, signal)
        self.calls.append(call)
        async with self._changed:
            self._changed.notify_all()
        if self.hold:
            try:
                await call.release.wait()
            except asyncio.CancelledError:
                call.cancelled = True
                raise
        if self.fail_with is not None:
            raise self.fail_with
        return [name for name in self.names if query in name]

    async def called(self, query: str) -> Call:
        async with asyncio.timeout(GUARD_SECONDS), self._changed:
            await self._changed.wait_for(lambda: query in self.queries)
        return next(call for call in self.calls if call.query == query)


class RecordingView:
    """Records what the controller said, in order."""

    def __init__(self) -> None:
        self.said: list[tuple[str, Any]] = []
        self._said_more = asyncio.Event()

    def _say(self, kind: str, what: Any) -> None:
        self.said.append((kind, what))
        self._said_more.set()

    async def until_said(self, kind: str) -> None:
        """Return once the controller has said `kind` (re-checked after everything it says)."""
        async with asyncio.timeout(GUARD_SECONDS):
            while kind not in self.said_kinds():
                self._said_more.clear()
                await self._said_more.wait()

    def lookup_started(self, key: LookupKey) -> None:
        self._say("started", key.query)

    def show_loading(self, key: LookupKey) -> None:
        self._say("loading", key.query)

    def show_results(self, key: LookupKey, candidates: Sequence[str]) -> None:
        self._say("results", (key.query, list(candidates)))

    def show_failure(self, key: LookupKey, error: Exception) -> None:
        self._say("failure", (key.query, str(error)))

    def hide(self) -> None:
        self._say("hide", None)

    def show_conversations(self, key: LookupKey, found: Any) -> None:
        self._say("said", (key.query, found))

    def show_conversation_failure(self, key: LookupKey, error: Exception) -> None:
        self._say("said failure", (key.query, str(error)))

    def results(self) -> list[tuple[str, list[str]]]:
        return [what for kind, what in self.said if kind == "results"]

    def said_kinds(self) -> list[str]:
        return [kind for kind, _what in self.said]


class Jobs:
    """A `spawn` that runs each job as a task and can wait for all of them; `cancellable=False`
    stands for a lookup that cannot be interrupted (its answer arrives anyway and must be dropped)."""

    def __init__(self, *, cancellable: bool = True) -> None:
        self.tasks: list[asyncio.Task[None]] = []
        self.cancellable = cancellable

    def __call__(self, job: Callable[[], Coroutine[Any, Any, None]]) -> Job:
        task = asyncio.get_running_loop().create_task(job())
        self.tasks.append(task)
        return task if self.cancellable else _Uncancellable()

    async def settle(self) -> None:
        async with asyncio.timeout(GUARD_SECONDS):
            await asyncio.gather(*self.tasks, return_exceptions=True)


class _Uncancellable:
    def cancel(self) -> bool:
        return False


NAMES = ["research", "retro", "deploy", "bug"]


def controller(
    lookup: FakeLookup, clock: FakeClock, jobs: Jobs | None = None
) -> tuple[MentionLookupController[str], RecordingView, Jobs]:
    view = RecordingView()
    jobs = jobs or Jobs()
    return MentionLookupController(lookup, view, spawn=jobs, sleep=clock.sleep), view, jobs


async def answer(clock: FakeClock, jobs: Jobs) -> None:
    """Let the debounce pass and every job finish."""
    await clock.until_sleeping()
    clock.advance(LOOKUP_DEBOUNCE)
    await jobs.settle()


class TestDebounceAndIdentity:
    async def test_a_quickly_typed_word_asks_once_after_the_debounce(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookups, view, jobs = controller(lookup, clock)
        for typed in ("@r", "@re", "@res"):
            lookups.follow(token(typed))
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE - 0.01)
        assert lookup.queries == []
        clock.advance(0.01)
        await jobs.settle()
        assert lookup.queries == ["res"]
        assert view.results() == [("res", ["research"])]
        assert not lookups.pending

    async def test_the_same_token_never_asks_twice(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookups, _view, jobs = controller(lookup, clock)
        lookups.follow(token("x @re"))
        await answer(clock, jobs)
        lookups.follow(token("x @re"))  # e.g. a cursor event that did not change the token
        await jobs.settle()
        assert lookup.queries == ["re"]
        assert lookups.active == LookupKey(2, "re")

    async def test_outside_an_at_word_nothing_is_asked_and_the_menu_closes(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookups, view, jobs = controller(lookup, clock)
        lookups.follow(token("@re"))
        await answer(clock, jobs)
        lookups.follow(token("@re "))
        assert view.said[-1] == ("hide", None)
        assert lookups.active is None


class TestAbortAndStaleAnswers:
    async def test_a_superseded_lookup_is_cancelled_and_its_signal_aborted(self) -> None:
        lookup, clock = FakeLookup(NAMES, hold=True), FakeClock()
        lookups, view, jobs = controller(lookup, clock)
        lookups.follow(token("@r"))
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE)
        first = await lookup.called("r")
        lookups.follow(token("@re"))
        assert first.signal.aborted and first.signal.reason == SUPERSEDED
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE)
        second = await lookup.called("re")
        second.release.set()
        await jobs.settle()
        assert first.cancelled
        assert not second.signal.aborted
        assert view.results() == [("re", ["research", "retro"])]

    async def test_an_answer_for_an_older_token_is_dropped_even_if_it_arrives(self) -> None:
        lookup, clock = FakeLookup(NAMES, hold=True), FakeClock()
        lookups, view, jobs = controller(lookup, clock, Jobs(cancellable=False))
        lookups.follow(token("@b"))
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE)
        old = await lookup.called("b")
        lookups.follow(token("@d"))
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE)
        new = await lookup.called("d")
        new.release.set()
        old.release.set()  # the old lookup could not be stopped: it answers after the new one
        await jobs.settle()
        assert view.results() == [("d", ["deploy"])]

    async def test_close_aborts_the_pending_lookup_and_hides(self) -> None:
        lookup, clock = FakeLookup(NAMES, hold=True), FakeClock()
        lookups, view, jobs = controller(lookup, clock)
        lookups.follow(token("@r"))
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE)
        call = await lookup.called("r")
        lookups.close()
        await jobs.settle()
        assert call.signal.aborted and call.cancelled
        assert view.results() == [] and view.said[-1] == ("hide", None)
        assert not lookups.pending and lookups.active is None


class TestDismissal:
    async def test_escape_keeps_the_word_closed_while_typing_on_in_it(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookups, _view, jobs = controller(lookup, clock)
        lookups.follow(token("x @re"))
        await answer(clock, jobs)
        lookups.dismiss(token("x @re"))
        for typed in ("x @res", "x @rese", "x @res"):
            lookups.follow(token(typed))
        await jobs.settle()
        assert lookup.queries == ["re"]
        assert lookups.is_dismissed(token("x @res")) and lookups.active is None

    async def test_escape_while_the_lookup_waits_keeps_it_from_asking(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookups, view, jobs = controller(lookup, clock)
        lookups.follow(token("@re"))
        await clock.until_sleeping()
        lookups.dismiss(token("@re"))
        clock.advance(LOOKUP_DEBOUNCE)
        await jobs.settle()
        assert lookup.queries == [] and view.results() == []

    async def test_leaving_the_word_and_coming_back_asks_again(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookups, _view, jobs = controller(lookup, clock)
        lookups.dismiss(token("x @re"))
        lookups.follow(token("x @re "))  # a space: the cursor left the word
        lookups.follow(token("x @re"))  # backspace: back in it
        await answer(clock, jobs)
        assert lookup.queries == ["re"]

    async def test_deleting_the_at_and_typing_it_again_asks_again(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookups, _view, jobs = controller(lookup, clock)
        lookups.dismiss(token("x @"))
        lookups.follow(token("x "))
        lookups.follow(token("x @"))
        await answer(clock, jobs)
        assert lookup.queries == [""]

    async def test_another_at_word_is_not_dismissed(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookups, _view, jobs = controller(lookup, clock)
        lookups.dismiss(token("@re"))
        lookups.follow(token("@re @de"))
        await answer(clock, jobs)
        assert lookup.queries == ["de"]

    async def test_tab_in_a_dismissed_word_asks_again(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookups, view, jobs = controller(lookup, clock)
        lookups.follow(token("@re"))
        await answer(clock, jobs)
        lookups.dismiss(token("@re"))
        lookups.ask_again(token("@re"))
        await answer(clock, jobs)
        assert lookup.queries == ["re", "re"]
        lookups.follow(token("@res"))  # asked again: typing on follows the word as usual
        await answer(clock, jobs)
        assert view.results()[-1] == ("res", ["research"])

    async def test_a_closed_selection_keeps_the_dismissal(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookups, _view, jobs = controller(lookup, clock)
        lookups.dismiss(token("@re"))
        lookups.follow(token("@re"), can_open=False)
        lookups.follow(token("@re"))
        await jobs.settle()
        assert lookup.queries == [] and lookups.is_dismissed(token("@re"))

    async def test_accepting_a_candidate_forgets_the_dismissal(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookups, _view, _jobs = controller(lookup, clock)
        lookups.dismiss(token("@re"))
        lookups.accepted()
        assert not lookups.is_dismissed(token("@re"))


class TestPaste:
    async def test_a_paste_ending_in_an_at_word_never_asks(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookups, view, jobs = controller(lookup, clock)
        lookups.follow(token("see @re"))  # the edit event of the paste may arrive first…
        lookups.pasted(token("see @re"))
        lookups.follow(token("see @re"))  # …or after
        lookups.follow(token("see @res"))  # typing on in the pasted word
        clock.advance(LOOKUP_DEBOUNCE)
        await jobs.settle()
        assert lookup.queries == [] and view.results() == []

    async def test_typing_a_new_at_word_after_a_paste_asks(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookups, _view, jobs = controller(lookup, clock)
        lookups.pasted(token("see @re"))
        lookups.follow(token("see @re @d"))
        await answer(clock, jobs)
        assert lookup.queries == ["d"]


class TestLoadingAndFailure:
    async def test_a_slow_lookup_says_it_is_loading_after_the_delay(self) -> None:
        lookup, clock = FakeLookup(NAMES, hold=True), FakeClock()
        lookups, view, jobs = controller(lookup, clock)
        lookups.follow(token("@r"))
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE)
        call = await lookup.called("r")
        await clock.until_sleeping(LOADING_DELAY)
        clock.advance(LOADING_DELAY - 0.01)
        assert "loading" not in view.said_kinds()
        clock.advance(0.01)
        await view.until_said("loading")
        call.release.set()
        await jobs.settle()
        assert view.said_kinds() == ["started", "loading", "results"]

    async def test_a_fast_lookup_never_says_loading(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookups, view, jobs = controller(lookup, clock)
        lookups.follow(token("@r"))
        await answer(clock, jobs)
        clock.advance(LOADING_DELAY)
        assert view.said_kinds() == ["started", "results"]

    async def test_a_failing_lookup_is_reported_and_nothing_stays_pending(self) -> None:
        lookup, clock = FakeLookup(NAMES), FakeClock()
        lookup.fail_with = RuntimeError("index is locked")
        lookups, view, jobs = controller(lookup, clock)
        lookups.follow(token("@r"))
        await answer(clock, jobs)
        assert view.said[-1] == ("failure", ("r", "index is locked"))
        assert not lookups.pending and lookups.active == LookupKey(0, "r")


class DrawGate:
    """An `after_titles` the test opens: the title rows count as drawn once `drawn` is set."""

    def __init__(self) -> None:
        self.drawn = asyncio.Event()
        self._waiting = asyncio.Event()

    async def __call__(self) -> None:
        self._waiting.set()
        await self.drawn.wait()

    async def until_waiting(self) -> None:
        async with asyncio.timeout(GUARD_SECONDS):
            await self._waiting.wait()


async def _drawn_at_once() -> None:
    return None


def two_groups(
    titles: FakeLookup,
    said: FakeLookup,
    clock: FakeClock,
    jobs: Jobs | None = None,
    *,
    after_titles: Callable[[], Awaitable[None]] = _drawn_at_once,
) -> tuple[MentionLookupController[str], RecordingView, Jobs]:
    view = RecordingView()
    jobs = jobs or Jobs()
    lookups = MentionLookupController(
        titles, view, conversations=said, after_titles=after_titles, spawn=jobs, sleep=clock.sleep
    )
    return lookups, view, jobs


SAID = ["we found the retry flag", "the deploy broke"]


class TestTwoGroups:
    async def test_titles_are_shown_at_once_and_the_second_group_when_it_arrives(self) -> None:
        titles, said, clock = FakeLookup(NAMES), FakeLookup(SAID, hold=True), FakeClock()
        lookups, view, jobs = two_groups(titles, said, clock)
        lookups.follow(token("@re"))
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE)
        call = await said.called("re")
        await view.until_said("results")
        assert view.said_kinds() == ["started", "results"]
        assert not lookups.pending and lookups.conversations_pending
        assert call.signal is titles.calls[0].signal  # one signal aborts both
        call.release.set()
        await jobs.settle()
        assert view.said[-1] == ("said", ("re", ["we found the retry flag"]))
        assert not lookups.conversations_pending

    async def test_a_second_group_that_answers_first_still_comes_after_the_titles(self) -> None:
        titles, said, clock = FakeLookup(NAMES, hold=True), FakeLookup(SAID), FakeClock()
        lookups, view, jobs = two_groups(titles, said, clock)
        lookups.follow(token("@de"))
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE)
        (await titles.called("de")).release.set()
        await jobs.settle()
        assert view.said_kinds() == ["started", "results", "said"]

    async def test_what_was_said_is_asked_only_once_the_title_rows_are_drawn(self) -> None:
        """The conversation search never competes with drawing the title rows: it starts after them."""
        gate = DrawGate()
        titles, said, clock = FakeLookup(NAMES), FakeLookup(SAID), FakeClock()
        lookups, view, jobs = two_groups(titles, said, clock, after_titles=gate)
        lookups.follow(token("@re"))
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE)
        await gate.until_waiting()
        assert view.said_kinds() == ["started", "results"] and said.calls == []
        gate.drawn.set()
        await jobs.settle()
        assert said.queries == ["re"] and view.said[-1] == ("said", ("re", ["we found the retry flag"]))

    async def test_a_key_typed_before_the_title_rows_are_drawn_never_asks_what_was_said(self) -> None:
        gate = DrawGate()
        titles, said, clock = FakeLookup(NAMES), FakeLookup(SAID), FakeClock()
        lookups, _view, jobs = two_groups(titles, said, clock, Jobs(cancellable=False), after_titles=gate)
        lookups.follow(token("@re"))
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE)
        await gate.until_waiting()
        lookups.follow(token("@dep"))  # the old job cannot be cancelled: it must notice it is stale
        gate.drawn.set()
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE)
        await jobs.settle()
        assert said.queries == ["dep"]

    async def test_a_new_key_drops_both_groups_of_the_old_one(self) -> None:
        titles, said, clock = FakeLookup(NAMES), FakeLookup(SAID, hold=True), FakeClock()
        lookups, view, jobs = two_groups(titles, said, clock)
        lookups.follow(token("@re"))
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE)
        old = await said.called("re")
        await view.until_said("results")
        lookups.follow(token("@dep"))
        assert old.signal.aborted and old.signal.reason == SUPERSEDED
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE)
        (await said.called("dep")).release.set()
        await jobs.settle()
        assert old.cancelled
        assert [what for kind, what in view.said if kind == "said"] == [("dep", ["the deploy broke"])]

    async def test_a_stale_second_group_that_arrives_anyway_is_never_shown(self) -> None:
        titles, said, clock = FakeLookup(NAMES), FakeLookup(SAID, hold=True), FakeClock()
        lookups, view, jobs = two_groups(titles, said, clock, Jobs(cancellable=False))
        lookups.follow(token("@re"))
        await clock.until_sleeping()
        clock.advance(LOOKUP_DEBOUNCE)
        old = await said.called("re")
        lookups.close()
        old.release.set()  # it could not be stopped: it answers after the menu closed
        await jobs.settle()
        assert "said" not in view.said_kinds() and view.said[-1] == ("hide", None)

    async def test_a_failing_second_group_says_so_and_the_titles_stay(self) -> None:
        titles, said, clock = FakeLookup(NAMES), FakeLookup(SAID), FakeClock()
        said.fail_with = RuntimeError("no index")
        lookups, view, jobs = two_groups(titles, said, clock)
        lookups.follow(token("@re"))
        await answer(clock, jobs)
        assert view.said_kinds() == ["started", "results", "said failure"]
        assert view.said[-1] == ("said failure", ("re", "no index"))
        assert view.results() == [("re", ["research", "retro"])]

    async def test_failing_titles_do_not_keep_the_second_group_from_showing(self) -> None:
        titles, said, clock = FakeLookup(NAMES), FakeLookup(SAID), FakeClock()
        titles.fail_with = RuntimeError("locked")
        lookups, view, jobs = two_groups(titles, said, clock)
        lookups.follow(token("@re"))
        await answer(clock, jobs)
        assert view.said_kinds() == ["started", "failure", "said"]
