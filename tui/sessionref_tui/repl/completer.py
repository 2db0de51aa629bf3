"""Asynchronous `@` session completion for the prompt_toolkit line mode.

prompt_toolkit runs one completion coroutine per buffer at a time, so a slow
lookup awaited inside `get_completions_async` would hold back the next query.
Instead, `MentionLookups` watches the buffer itself and reports every edit and
cursor move to the same toolkit-free `MentionLookupController` the Textual
composer drives (`sessionref_tui.lookup`: token identity, dismissal, paste,
debounce, abort, stale-result drop). The answers land in `latest`, and the
`SessionMentionCompleter` only reads that, so completion itself never waits;
while a newer query runs, the previous list stays on screen (no flicker).

Given a conversation lookup, the menu has a second group under the title matches:
sessions found by what was said in them (`said`), each label marked with
`SAID_MARK` and its snippet (who said it, the match emphasised) in the meta
column. It belongs to the same key as the titles above it and is dropped with them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.utils import Event
from sessionref.contract.errors import describe_error
from sessionref.service.abort import AbortSignal

from sessionref_tui.display import (
    close_spans,
    inert,
    match_spans,
    relative_age,
    truncate_end,
    truncate_middle,
)
from sessionref_tui.lookup import LOOKUP_DEBOUNCE, ConversationLookup, LookupKey, MentionLookupController
from sessionref_tui.mentions import MentionToken, mention_for, mention_token
from sessionref_tui.snippets import fit_snippet, role_label, snippet_pieces
from sessionref_tui.source_marks import source_mark

if TYPE_CHECKING:
    from sessionref.service.conversations import ConversationMatch, ConversationSearchResult

MAX_LABEL_CELLS: Final = 48
"""Labels longer than this are cut at the end so the menu stays readable."""

MAX_CWD_CELLS: Final = 40
"""Paths are cut in the middle so both the root and the folder name stay visible."""

SAID_MARK: Final = "“ "
"""Starts the label of a row found by what was said (the second group): an opening quote, one cell
in every terminal font, reads as "quoted from the conversation"."""

MAX_SNIPPET_CELLS: Final = 40
"""Cells of a conversation snippet in the meta column (cut to show the match): with who said it and
the age, the meta column stays within what prompt_toolkit gives it beside a 48-cell label on a
100-column terminal, so it is never cut again with "..." (which could cut the match off)."""


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


@dataclass(frozen=True, slots=True)
class SaidResult:
    """The second group for one query: conversation matches, or why there are none (`note`)."""

    token_start: int
    query: str
    matches: tuple[ConversationMatch, ...]
    note: str | None


class MentionLookups:
    """Connects one prompt_toolkit buffer to a `MentionLookupController` and keeps its answers.

    The controller decides; this adapter reports the buffer's changes to it and turns what it is
    told into `latest` (read by the completer), `loading`, `failed` and a redraw (`on_update`).
    """

    def __init__(
        self,
        lookup: CandidateLookup,
        *,
        conversations: ConversationLookup | None = None,
        debounce: float = LOOKUP_DEBOUNCE,
    ) -> None:
        self._buffer: Buffer | None = None
        self._check_scheduled = False
        self.controller: MentionLookupController[CandidateView] = MentionLookupController(
            lookup, self, conversations=conversations, debounce=debounce
        )
        """The shared `@` rules (the same class the Textual composer drives)."""
        self.latest: LookupResult | None = None
        """The newest results that still belong to the token under the cursor (shown while refining)."""
        self.loading = False
        """True once a lookup has run for `LOADING_DELAY` without an answer (the toolbar says so)."""
        self.failed: str | None = None
        """Why the last lookup failed (`code: message`), if it did; the menu just degrades."""
        self.said: SaidResult | None = None
        """The second group of the key whose titles are shown (None until it is answered)."""
        self.on_update: Event[MentionLookups] = Event(self)
        """Fired whenever the lookup state changes (started, finished, dropped, dismissed)."""

    @property
    def searching(self) -> bool:
        """True while a lookup for the current token is pending or running."""
        return self.controller.pending

    def attach(self, buffer: Buffer) -> None:
        """Watch `buffer`: text and cursor changes (re)start lookups."""
        self._buffer = buffer
        buffer.on_text_changed += self._text_changed
        buffer.on_cursor_position_changed += self._schedule_check

    def reset_for_new_vantage(self) -> None:
        """Forget shown results (for example after switching sessions: ranking depends on it)."""
        self.controller.close()
        self.on_update.fire()

    def dismiss(self) -> None:
        """Esc: close the menu for the current token; it stays closed until the cursor leaves the word."""
        self.controller.dismiss(self._token())
        if self._buffer is not None:
            self._buffer.cancel_completion()
        self.on_update.fire()

    def ask_again(self) -> None:
        """Tab in an `@` word whose menu is closed (dismissed, or never opened): look it up now."""
        self.controller.ask_again(self._token())

    def pasted(self) -> None:
        """Call right after pasted text (or a draft put back) was inserted: it does not open the menu."""
        self.controller.pasted(self._token())

    def is_dismissed(self, token: MentionToken) -> bool:
        """True when the user pressed Esc on this token (or pasted it)."""
        return self.controller.is_dismissed(token)

    def close(self) -> None:
        """Abort any running lookup."""
        self.controller.close()

    # -- LookupView: what the controller tells this line mode ----------------------------

    def lookup_started(self, key: LookupKey) -> None:
        """Keep the previous list only while the new query is for the same `@` word."""
        if self.latest is not None and self.latest.token_start != key.start:
            self.latest = None
        self.loading = False
        self.on_update.fire()

    def show_loading(self, key: LookupKey) -> None:
        """The lookup is slow: the toolbar says it is searching."""
        self.loading = True
        self.on_update.fire()

    def show_results(self, key: LookupKey, candidates: Sequence[CandidateView]) -> None:
        """Keep the answer for the completer and show the menu with it (the previous key's second
        group goes: its own answer follows)."""
        self.said = None
        self._answered(LookupResult(key.start, key.query, tuple(candidates)), None)

    def show_failure(self, key: LookupKey, error: Exception) -> None:
        """An empty answer, and why (the toolbar says it)."""
        code, message = describe_error(error)
        failure = f"{code}: {message}"
        self.said = None
        self._answered(LookupResult(key.start, key.query, ()), failure)

    def show_conversations(self, key: LookupKey, found: ConversationSearchResult | None) -> None:
        """The second group for `key`: its matches under the titles, or the note saying why there are
        none (no group for a bare `@` or without conversation search)."""
        if found is None or found.status in ("empty", "off"):
            self.said = None
        else:
            self.said = SaidResult(key.start, key.query, tuple(found.matches), found.note)
        self._refresh_menu()

    def show_conversation_failure(self, key: LookupKey, error: Exception) -> None:
        """The second group has nothing, and the toolbar says why."""
        code, message = describe_error(error)
        self.said = SaidResult(key.start, key.query, (), f"unavailable: {code}: {message}")
        self._refresh_menu()

    def hide(self) -> None:
        """Nothing to show any more."""
        changed = self.latest is not None or self.loading or self.failed is not None or self.said is not None
        self.latest = None
        self.loading = False
        self.failed = None
        self.said = None
        if changed:
            self.on_update.fire()

    # -- internals -------------------------------------------------------

    def token_in(self, document: Document) -> MentionToken | None:
        """The `@` word at `document`'s cursor, continued across spaces while the menu has matches."""
        return mention_token(document.text, document.cursor_position, self.controller.continues_at)

    def _token(self) -> MentionToken | None:
        if self._buffer is None:
            return None
        document = self._buffer.document
        return mention_token(document.text, document.cursor_position, self.controller.continues_at)

    def _answered(self, result: LookupResult, failure: str | None) -> None:
        self.latest = result
        self.loading = False
        self.failed = failure
        self._refresh_menu()

    def _refresh_menu(self) -> None:
        if self._buffer is not None:
            self._show(self._buffer)
        self.on_update.fire()

    def _text_changed(self, buffer: Buffer) -> None:
        self._note_word_before_space(buffer)
        self._schedule_check(buffer)

    def _note_word_before_space(self, buffer: Buffer) -> None:
        """A space was just typed after an `@` word the controller has not heard of: tell it of the
        word first, so that the space goes on in it while it matches. (The keys of one burst are all
        applied before the check a loop turn later, which would see only the words after the space.)"""
        document = buffer.document
        cursor = document.cursor_position
        if cursor == 0 or document.text[cursor - 1] != " " or buffer.complete_state is not None:
            return
        if self.controller.active is not None:
            return
        text = document.text[: cursor - 1] + document.text[cursor:]
        token = mention_token(text, cursor - 1, self.controller.continues_at)
        if token is not None:
            self.controller.follow(token)

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
        self.controller.follow(self._token())

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

    def __init__(
        self,
        lookups: MentionLookups,
        *,
        now_ms: Callable[[], float] | None = None,
        machine_of: Callable[[str], str | None] | None = None,
    ) -> None:
        self._lookups = lookups
        self._now_ms = now_ms or (lambda: time.time() * 1000)
        self._machine_of = machine_of or _local
        """The machine a remote session comes from (`Workspace.machine_of`; None: a local one)."""

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        """Yield one completion per cached candidate; accepting one inserts its canonical mention token."""
        token = self._lookups.token_in(document)
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
                display_meta=candidate_meta_fragments(
                    candidate, latest.query, now, machine=self._machine_of(candidate.session_id)
                ),
            )
        said = self._lookups.said
        if said is None or said.token_start != token.start or said.query != latest.query:
            return
        for match in said.matches:
            yield Completion(
                text=mention_for(match) + " ",
                start_position=start_position,
                display=said_label_fragments(match),
                display_meta=said_meta_fragments(match, now),
            )


def highlighted(
    text: str, needle: str, style: str, match_style: str, *, close: bool = False
) -> StyleAndTextTuples:
    """`text` as fragments with each case-insensitive occurrence of `needle` (or, `close`, what
    matched it loosely: `service.fuzzy_titles`) in `match_style`.

    Every piece is passed through `inert`, so data can never drive the terminal.
    """
    fragments: StyleAndTextTuples = []
    position = 0
    for start, end in close_spans(text, needle) if close else match_spans(text, needle):
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
    close = getattr(candidate, "close", None) is not None
    return highlighted(label, query, "class:candidate.label", "class:candidate.match", close=close)


def _local(session_id: str) -> str | None:
    return None


def candidate_meta_fragments(
    candidate: CandidateView, query: str, now_ms: float, *, machine: str | None = None
) -> StyleAndTextTuples:
    """The menu's meta column: the source mark of another agent's session (`CC`, `CX`, `GM`), the id
    (only when it differs from the label), cwd (after `machine:` for a remote session), age of the
    last activity."""
    fragments: StyleAndTextTuples = []
    if mark := source_mark(candidate.session_id):
        fragments.append(("class:candidate.source", mark))
        fragments.append(("class:candidate.sep", " · "))
    if candidate.session_id != candidate.label:
        shown_id = truncate_end(inert(candidate.session_id), 24)
        fragments.extend(highlighted(shown_id, query, "class:candidate.id", "class:candidate.match"))
        fragments.append(("class:candidate.sep", " · "))
    machine_prefix = [("class:candidate.machine", f"{inert(machine)}:")] if machine is not None else []
    if candidate.cwd is None:
        fragments += [*machine_prefix, ("class:candidate.cwd", "(no cwd)")]
    else:
        cwd = truncate_middle(inert(candidate.cwd), MAX_CWD_CELLS)
        marker = "● " if candidate.same_workspace else ""
        fragments += [("class:candidate.here", marker), *machine_prefix]
        fragments.extend(highlighted(cwd, query, "class:candidate.cwd", "class:candidate.match"))
    fragments.append(("class:candidate.sep", " · "))
    fragments.append(("class:candidate.age", relative_age(candidate.last_activity, now_ms)))
    return fragments


def said_label_fragments(match: ConversationMatch) -> StyleAndTextTuples:
    """The main column of a conversation match: `SAID_MARK`, the source mark of another agent's
    session (`CC`, `CX`, `GM`) and the session's label, cut."""
    fragments: StyleAndTextTuples = [("class:said.mark", SAID_MARK)]
    room = MAX_LABEL_CELLS - len(SAID_MARK)
    if mark := source_mark(match.session_id):
        fragments += [("class:candidate.source", mark), ("class:said.label", " ")]
        room -= len(mark) + 1
    fragments.append(("class:said.label", truncate_end(inert(match.label), room)))
    return fragments


def said_meta_fragments(match: ConversationMatch, now_ms: float) -> StyleAndTextTuples:
    """The meta column of a conversation match: who said it, the snippet with its match, the age."""
    fragments: StyleAndTextTuples = [("class:said.role", f"{role_label(match.role, match.checkpoint)} › ")]
    for text, matched in fit_snippet(snippet_pieces(match.snippet, match.spans), MAX_SNIPPET_CELLS):
        style = "class:said.snippet class:candidate.match" if matched else "class:said.snippet"
        fragments.append((style, text))
    fragments.append(("class:candidate.sep", " · "))
    fragments.append(("class:candidate.age", relative_age(match.last_activity, now_ms)))
    return fragments
