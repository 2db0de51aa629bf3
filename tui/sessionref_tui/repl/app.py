"""`sessionref repl`: a prompt_toolkit chat in the normal terminal scrollback.

The line mode starts on a `DraftSession` (and `/new` makes another): nothing is
written until its first message is sent, which creates the session on disk.
One `PromptSession` is re-run for every message. Sending never blocks the
prompt: `Workspace.submit` (parse mentions, prepare, idle/running delivery) runs
as a task, and the session's log events, subscribed from the store, are printed
above the prompt as they are appended, so the reply streams while the user keeps
typing and can send again: the message is queued for the model's next step and
shown once as `queued › …` (`QueueView`). Ctrl+C stops the reply and every queued
message comes back into the prompt. A failed prepare prints the error and puts
the draft back (`PromptDrafts`). The session's events reach the transcript through
`SessionFeed`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, Final

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app_or_none
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import History, InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output
from prompt_toolkit.patch_stdout import patch_stdout
from rich.cells import cell_len
from sessionref.agent import Agent, TurnFailure
from sessionref.contract.errors import describe_error
from sessionref.host.workspace import DraftSession
from sessionref.service.abort import AbortSignal

from sessionref_tui.display import NEW_SESSION_NAME, inert
from sessionref_tui.lookup import LOOKUP_DEBOUNCE
from sessionref_tui.repl.chrome import REPL_STYLE, ToolbarState, toolbar_fragments
from sessionref_tui.repl.commands import run_command
from sessionref_tui.repl.completer import MentionLookups, SessionMentionCompleter
from sessionref_tui.repl.history import StoreHistory
from sessionref_tui.repl.keys import ESCAPE_SEQUENCE_WAIT_SECONDS, line_mode_key_bindings
from sessionref_tui.repl.lexer import MentionLexer
from sessionref_tui.repl.prompt_drafts import PromptDrafts
from sessionref_tui.repl.prompt_wrap import PROMPT, WordWrapProcessor, continuation
from sessionref_tui.repl.queue_view import QueueView
from sessionref_tui.repl.session_feed import SessionFeed
from sessionref_tui.repl.transcript import Transcript
from sessionref_tui.source_marks import untitled_name
from sessionref_tui.submit_errors import READ_ONLY_CODES

if TYPE_CHECKING:
    from sessionref.host.workspace import Workspace

logger = logging.getLogger(__name__)

HISTORY_FILE_NAME: Final = "repl-history"
"""Prompt history file, one per store, kept in the store root."""


def open_history(root: os.PathLike[str] | str) -> History:
    """A `StoreHistory` in the store root when it is writable, else an in-memory one (read-only DSH dirs).

    The file is never opened through a link (see `sessionref_tui.repl.history`).
    """
    path = os.path.join(root, HISTORY_FILE_NAME)
    if os.access(root, os.W_OK) and (not os.path.lexists(path) or os.access(path, os.W_OK)):
        return StoreHistory(os.fspath(root), HISTORY_FILE_NAME)
    return InMemoryHistory()


class LineMode:
    """The running line mode: prompt, completion, event stream and command host."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        session_id: str | None = None,
        input: Input | None = None,
        output: Output | None = None,
        debounce: float = LOOKUP_DEBOUNCE,
        history: History | None = None,
    ) -> None:
        self.workspace = workspace
        self._target: Agent | DraftSession = (
            workspace.agent(session_id) if session_id else workspace.draft_session()
        )
        self._title: str | None = None
        self._output = output
        self._uses_real_terminal = input is None and output is None
        self.transcript = Transcript(
            output=output, style=REPL_STYLE, on_change=self._invalidate, columns=self._columns
        )
        self.queue = QueueView(
            workspace,
            self.transcript,
            current=lambda: self._target,
            into_prompt=lambda drafts: self.drafts.put_back(drafts),
            name_of=self._name_of,
        )
        self.feed = SessionFeed(
            workspace, self.transcript, current=lambda: self._target, retitled=self._retitled
        )
        mentions = workspace.mention_source(lambda: self._target)
        self.lookups = MentionLookups(
            mentions.candidates, conversations=mentions.conversations, debounce=debounce
        )
        self.lookups.on_update += lambda _lookups: self._invalidate()
        self.session: PromptSession[str] = PromptSession(
            input=input,
            output=output,
            multiline=True,
            completer=SessionMentionCompleter(self.lookups, machine_of=workspace.machine_of),
            complete_while_typing=True,
            lexer=MentionLexer(),
            history=history or open_history(workspace.store_root),
            key_bindings=line_mode_key_bindings(self),
            bottom_toolbar=self._toolbar,
            style=REPL_STYLE,
            prompt_continuation=continuation,
            erase_when_done=True,
            reserve_space_for_menu=8,
            input_processors=[WordWrapProcessor(cell_len(PROMPT))],
        )
        self.session.app.ttimeoutlen = ESCAPE_SEQUENCE_WAIT_SECONDS
        self.drafts = PromptDrafts(
            self.session, self.transcript, self._invalidate, loaded=self.lookups.pasted
        )
        self.lookups.attach(self.session.default_buffer)
        self._preparing: AbortSignal | None = None
        self._exit_armed = False
        self._exit_requested = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._unsubscribe_status: Callable[[], None] | None = None
        self.session.default_buffer.on_text_changed += self._disarm_exit

    # -- CommandHost ---------------------------------------------------------

    @property
    def agent(self) -> Agent | DraftSession:
        """The session the prompt sends to: an Agent, or a DraftSession its first message creates."""
        return self._target

    @property
    def status(self) -> str:
        """`running` while the current session's agent runs a turn, else `idle` (always for a draft)."""
        return self._target.status if isinstance(self._target, Agent) else "idle"

    @property
    def preparing(self) -> bool:
        """True while a message with mentions is being prepared (Enter is held back meanwhile)."""
        return self._preparing is not None

    def switch_to(self, target: Agent | DraftSession) -> None:
        """Make `target` current: new event filter, status listener, title and completion vantage.

        Prints a header naming it once: `New session · cwd` for a draft, `title · id · cwd` (or
        `New session · id · cwd` while it has no title) for a session on disk, then its recent messages.
        """
        self.transcript.flush_streams()
        self._adopt(target)
        self.lookups.reset_for_new_vantage()
        cwd = inert(target.cwd) if target.cwd else "(no cwd)"
        if isinstance(target, DraftSession):
            self.transcript.notice(f"── {NEW_SESSION_NAME} · {cwd} · created by its first message ──")
            return
        self.transcript.notice(f"── {inert(self.session_name)} · {inert(target.id)} · {cwd} ──")
        self.feed.replay_recent(target.id)
        kept = self.queue.take_kept(target.id)
        if kept:
            self.drafts.put_back(kept)
            count = len(kept)
            noun = "message that came back is" if count == 1 else "messages that came back are"
            self.transcript.notice(f"{count} queued {noun} in the prompt")

    @property
    def session_name(self) -> str:
        """What the current session is called: its title, else `NEW_SESSION_NAME`."""
        return self._title or NEW_SESSION_NAME

    def _adopt(self, target: Agent | DraftSession) -> None:
        """Point the status listener and the title at `target` (no output)."""
        if self._unsubscribe_status is not None:
            self._unsubscribe_status()
            self._unsubscribe_status = None
        self._target = target
        self._title = None
        if isinstance(target, Agent):
            self._title = self.workspace.title(target.id)
            removers = [
                target.on_status(lambda _status: self._invalidate()),
                target.on_turn_error(self._turn_failed),
            ]

            def unsubscribe() -> None:
                for remove in removers:
                    remove()

            self._unsubscribe_status = unsubscribe
        self._invalidate()

    def _retitled(self, title: str | None) -> None:
        self._title = title

    def _turn_failed(self, failure: TurnFailure) -> None:
        # A failure the log recorded is printed from its turn/end; this one only exists here.
        if not failure.logged:
            self.transcript.error(
                failure.code, f"the reply stopped and the log could not record it: {failure.message}"
            )

    def start_prompt_with(self, text: str) -> None:
        """Put canonical `text` at the start of the prompt, now or when the next prompt starts."""
        self.drafts.start_with(text)

    def in_background(self, label: str, work: Awaitable[None]) -> None:
        """Run `work` as a task; its failure is printed with its code, never raised."""

        async def guarded() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception as error:
                self.transcript.error(*describe_error(error, self.workspace.error_log))

        task = asyncio.get_running_loop().create_task(guarded(), name=f"repl:{label}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- running ---------------------------------------------------------------

    async def run(self) -> int:
        """Prompt until the user exits; returns the process exit code (0)."""
        self.feed.attach()
        self.queue.attach()
        self._adopt(self._target)
        model_name = inert(self.workspace.model.name)
        self.transcript.notice(f"sessionref line mode · model: {model_name} · /help for keys")
        self.workspace.start_conversation_search()  # in the background: the prompt is not held back
        self.workspace.watch_changes(self._sessions_changed)  # `@` and /sessions see new sessions at once
        loop = asyncio.get_running_loop()

        def publishing_note(note: str | None) -> None:  # in the publishing thread
            loop.call_soon_threadsafe(self._publishing_note, note)

        self.workspace.start_publishing(publishing_note)
        if isinstance(self._target, Agent):
            self.feed.replay_recent(self._target.id)
        guard = patch_stdout(raw=False) if self._uses_real_terminal else nullcontext()
        try:
            with guard:
                while not self._exit_requested:
                    try:
                        text = await self.session.prompt_async(
                            [("class:prompt", PROMPT)], pre_run=self.drafts.apply_pending
                        )
                    except EOFError:
                        break
                    except KeyboardInterrupt:
                        continue
                    await self._dispatch(text)
        finally:
            await self._shutdown()
        return 0

    def _publishing_note(self, note: str | None) -> None:
        """A background publish failed: one notice line (a later success says nothing)."""
        if note is not None:
            self.transcript.notice(inert(note))

    def _sessions_changed(self) -> None:
        """Live discovery re-walked the store: the next `@` lookup lists what changed (nothing to redraw)."""

    async def _dispatch(self, text: str) -> None:
        stripped = text.strip()
        if not stripped:
            return
        if stripped.startswith("/"):
            self.transcript.print([("class:notice", "› "), ("class:slash-command", inert(stripped))])
            try:
                await run_command(self, stripped)
            except Exception as error:
                self.transcript.error(*describe_error(error, self.workspace.error_log))
            return
        self._start_submit(text)

    def _start_submit(self, text: str) -> None:
        signal = AbortSignal()
        self._preparing = signal
        target = self._target
        task = asyncio.get_running_loop().create_task(self._submit(target, text, signal))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _submit(self, target: Agent | DraftSession, text: str, signal: AbortSignal) -> None:
        try:
            result = await self.workspace.submit(target, text, signal=signal)
        except asyncio.CancelledError:
            self.drafts.restore_failed(text)
            raise
        except Exception as error:
            self.drafts.restore_failed(text)
            code, message = describe_error(error, self.workspace.error_log)
            self.transcript.error(code, message)
            if code in READ_ONLY_CODES:
                self.transcript.notice("/continue starts a new session that mentions this one")
            return
        finally:
            if self._preparing is signal:
                self._preparing = None
            self._invalidate()
        if result.created and self._target is target:
            self._adopt(result.agent)  # the draft now exists on disk; keep showing it

    async def _shutdown(self) -> None:
        self.lookups.close()
        self.queue.detach()
        if self._preparing is not None:
            self._preparing.abort("exit")
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if isinstance(self._target, Agent) and self._target.status == "running":
            await self._target.cancel()
        self.transcript.flush_streams()
        self.feed.detach()
        if self._unsubscribe_status is not None:
            self._unsubscribe_status()

    # -- keys --------------------------------------------------------------------

    def accept_completion(self) -> None:
        """Insert the highlighted completion (or the first) and close the menu."""
        buffer = self.session.default_buffer
        state = buffer.complete_state
        if state is None or not state.completions:
            return
        completion = state.current_completion or state.completions[0]
        buffer.apply_completion(completion)
        buffer.complete_state = None

    def interrupt(self) -> None:
        """Ctrl+C: cancel a prepare, else cancel a running reply, else (once) keep the messages that
        just came back, else clear the prompt, else arm/exit (exit only on a prompt that was empty)."""
        buffer = self.session.default_buffer
        if self._preparing is not None:
            self._preparing.abort("cancelled by Ctrl+C")
            self.transcript.notice("cancelling the message being prepared…")
            return
        target = self._target
        if isinstance(target, Agent) and (target.status == "running" or self.queue.count):
            self.transcript.notice("stopping the reply…")
            self.in_background("stop", self._stop(target))
            return
        if self.drafts.holds_returned():
            # A second Ctrl+C right after the stopped reply's messages came back: they stay.
            self.drafts.take_returned()
            self.transcript.notice(
                "the messages that came back are in the prompt: Enter sends them, Ctrl+C clears"
            )
            return
        if buffer.text:
            buffer.append_to_history()  # Ctrl+C clears the line, but nothing typed is lost
            buffer.reset()
            return
        if self._exit_armed:
            self.request_exit()
            return
        self._exit_armed = True
        self.transcript.notice("press Ctrl+C again (or Ctrl+D) to exit")

    async def _stop(self, agent: Agent) -> None:
        """Stop the reply; queued messages come back through the drafts listener (`QueueView`)."""
        await self.workspace.stop(agent)

    def request_exit(self) -> None:
        """Leave the prompt loop after the current prompt."""
        self._exit_requested = True
        app = self.session.app
        if app.is_running and app.future is not None and not app.future.done():
            app.exit(exception=EOFError())

    def _disarm_exit(self, _buffer: object) -> None:
        self._exit_armed = False

    # -- data ----------------------------------------------------------------------

    # -- toolbar -----------------------------------------------------------------------

    def _toolbar(self) -> StyleAndTextTuples:
        latest = self.lookups.latest
        said = self.lookups.said
        return toolbar_fragments(
            ToolbarState(
                title=self.session_name,
                cwd=self._target.cwd,
                status=self.status,
                model_name=self.workspace.model.name,
                streaming=self.transcript.partial_line,
                searching=self.lookups.loading,
                no_matches=latest is not None and not latest.candidates and not (said and said.matches),
                query=latest.query if latest is not None else "",
                lookup_failure=self.lookups.failed,
                preparing=self.preparing,
                queued=self.queue.count,
                columns=self._columns(),
                said_note=said.note if said is not None else None,
                said_rows=said is not None and bool(said.matches),
            )
        )

    def _columns(self) -> int:
        return self.session.app.output.get_size().columns

    def _name_of(self, session_id: str) -> str:
        try:
            return self.workspace.title(session_id) or untitled_name(session_id)
        except Exception:
            return session_id

    def _invalidate(self) -> None:
        app = get_app_or_none()
        if app is not None and app.is_running:
            app.invalidate()


async def run_repl_async(
    workspace: Workspace,
    *,
    session_id: str | None = None,
    input: Input | None = None,
    output: Output | None = None,
) -> int:
    """Run the line mode on `workspace` until the user exits; returns the exit code."""
    return await LineMode(workspace, session_id=session_id, input=input, output=output).run()


def run_repl(
    workspace: Workspace,
    *,
    session_id: str | None = None,
    input: Input | None = None,
    output: Output | None = None,
) -> int:
    """Blocking entry point: run the line mode in a fresh event loop (must not be called from one)."""
    return asyncio.run(run_repl_async(workspace, session_id=session_id, input=input, output=output))
