"""Slash commands of the line mode: `/new`, `/continue`, `/sessions`, `/switch`, `/title`, `/compact`, `/log`,
`/help`.

Mentions are never parsed inside a slash command. Each command reports through
the host's transcript; failures raise `CommandError` (or the store's and
reference service's own errors), which the host prints as code + message.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from prompt_toolkit.formatted_text import StyleAndTextTuples
from rich.cells import cell_len
from sessionref.contract.errors import CodedError
from sessionref.host.workspace import DraftSession

from sessionref_tui.display import (
    inert,
    machine_folder,
    relative_age,
    truncate_end,
    wrap_cells,
)
from sessionref_tui.errors import ReplCode
from sessionref_tui.event_view import log_rows as event_rows
from sessionref_tui.event_view import skipped_lines_notice
from sessionref_tui.mentions import MentionTarget, mention_for
from sessionref_tui.repl.chrome import NO_OTHER_SESSIONS
from sessionref_tui.repl.transcript import DEFAULT_COLUMNS, Transcript
from sessionref_tui.source_marks import MARK_CELLS, source_mark

if TYPE_CHECKING:
    from sessionref.agent import Agent
    from sessionref.host.workspace import Workspace

LABEL_CELLS: Final = 36
"""Widest label column of `/sessions` (narrower on a narrow terminal)."""

ID_CELLS: Final = 24
"""Id column of `/sessions`: enough to tell ids apart (`/switch` takes any unique id)."""

AGE_CELLS: Final = 8
"""Age column of `/sessions` ("just now" is the widest age)."""

HELP_TEXT: Final = """\
Enter sends · Alt+Enter or Ctrl+J inserts a newline · @ completes sessions (Tab/Enter accept, Esc closes)
Sending while a reply runs queues the message ("queued ›") for the model's next step
Ctrl+C stops a running reply and puts queued messages back in the prompt, or cancels a message being prepared
Ctrl+C twice on an empty prompt (or Ctrl+D) exits
/new                     start a new session in this directory (created by its first message)
/continue [text]         a new session whose message starts by mentioning this one (e.g. a read-only one)
/sessions [query]        list sessions you can mention (this directory first)
/switch <id or title>    continue another session
/title <text>            rename the current session
/compact                 replace the conversation so far with a model-written summary
/log                     the current session's log events: seq, type, source kind, preview
/help                    this text"""

HELP_COMMAND_CELLS: Final = 25
"""Where a command's description starts in `/help` (its wrapped rows are indented to it)."""


class CommandError(CodedError):
    """A slash command could not run; `code` is stable, `message` is for the user."""


class CommandHost(Protocol):
    """What commands need from the running line mode."""

    @property
    def workspace(self) -> Workspace: ...
    @property
    def agent(self) -> Agent | DraftSession: ...
    @property
    def transcript(self) -> Transcript: ...

    def switch_to(self, target: Agent | DraftSession) -> None:
        """Make `target` the current session (toolbar, event stream, completion vantage)."""
        ...

    def in_background(self, label: str, work: Awaitable[None]) -> None:
        """Run `work` without blocking the prompt; errors are printed, never raised."""
        ...

    def start_prompt_with(self, text: str) -> None:
        """Put canonical `text` at the start of the prompt (mentions shown as mentions)."""
        ...


def split_command(line: str) -> tuple[str, str]:
    """`"/title  My chat "` -> `("title", "My chat")`: the command name and its trimmed argument."""
    head, _, rest = line.strip().partition(" ")
    return head[1:].lower(), rest.strip()


async def run_command(host: CommandHost, line: str) -> None:
    """Run one slash command line; raises `CommandError` for unknown commands or bad arguments."""
    name, argument = split_command(line)
    handler = COMMANDS.get(name)
    if handler is None:
        raise CommandError(ReplCode.UNKNOWN_COMMAND, f"unknown command /{inert(name)} (try /help)")
    await handler(host, argument)


def help_lines(columns: int) -> list[str]:
    """`HELP_TEXT` word-wrapped to `columns`; a command's wrapped rows stay under its description."""
    rows: list[str] = []
    for line in HELP_TEXT.splitlines():
        is_command = line.startswith("/")
        head, indent = (line[:HELP_COMMAND_CELLS], HELP_COMMAND_CELLS) if is_command else ("", 2)
        pieces = wrap_cells(line[len(head) :], max(columns - 1 - indent, 20))
        rows += [head + pieces[0], *(" " * indent + piece for piece in pieces[1:])]
    return rows


async def _help(host: CommandHost, _argument: str) -> None:
    host.transcript.print_lines([[("class:notice", row)] for row in help_lines(host.transcript.columns())])


async def _new(host: CommandHost, _argument: str) -> None:
    host.switch_to(host.workspace.draft_session())


def _existing(host: CommandHost, command: str) -> Agent:
    """The current session's Agent; `REPL_NO_SESSION_YET` while it is a draft (nothing on disk)."""
    target = host.agent
    if isinstance(target, DraftSession):
        raise CommandError(
            ReplCode.NO_SESSION_YET,
            f"/{command} needs a session: this one is created by its first message, so send one first",
        )
    return target


async def _candidates(host: CommandHost, query: str) -> Sequence[Any]:
    """What `/sessions query` lists (and `/switch` chooses among): `Workspace.limits.session_list` rows."""
    workspace = host.workspace
    return await workspace.candidates(host.agent, query, workspace.limits.session_list)


def candidate_row(
    candidate: Any,
    now_ms: float,
    columns: int = DEFAULT_COLUMNS,
    *,
    marks: bool = False,
    machine: str | None = None,
) -> str:
    """One inert row that fits `columns`: label, id (when it differs), last-activity age, then the
    cwd (● = the current session's directory; `machine:` before it for a remote session) in the rest
    of the width. With `marks`, the row starts with the session's source mark (`CC`, `CX`, `GM`, or
    blanks for the store's own)."""
    if marks:
        mark = source_mark(candidate.session_id)
        rest = candidate_row(candidate, now_ms, columns - MARK_CELLS - 1, machine=machine)
        return f"{mark:<{MARK_CELLS}} " + rest
    room = columns - 1
    label_cells = max(12, min(LABEL_CELLS, room - (ID_CELLS + AGE_CELLS + 8 + 12)))
    label = truncate_end(inert(candidate.label), label_cells)
    same = candidate.label == candidate.session_id
    session_id = "" if same else truncate_end(inert(candidate.session_id), ID_CELLS)
    age = relative_age(candidate.last_activity, now_ms)
    here = "●" if candidate.same_workspace else " "
    cwd_cells = room - (label_cells + ID_CELLS + AGE_CELLS + 8)
    place = "(no cwd)" if candidate.cwd is None else inert(candidate.cwd)
    cwd = machine_folder(machine, place, max(cwd_cells, 8))
    row = f"{_pad(label, label_cells)}  {_pad(session_id, ID_CELLS)}  {_pad(age, AGE_CELLS)}  {here} {cwd}"
    return truncate_end(row, room)


def _print_candidates(host: CommandHost, candidates: Sequence[Any]) -> None:
    now = time.time() * 1000
    columns = host.transcript.columns()
    marks = any(source_mark(candidate.session_id) for candidate in candidates)
    host.transcript.print_lines(
        [
            [
                (
                    "class:candidate.label",
                    candidate_row(
                        candidate,
                        now,
                        columns,
                        marks=marks,
                        machine=host.workspace.machine_of(candidate.session_id),
                    ),
                )
            ]
            for candidate in candidates
        ]
    )


async def _sessions(host: CommandHost, query: str) -> None:
    found = await _candidates(host, query)
    if not found:
        host.transcript.notice(f"no session matches “{inert(query)}”" if query else NO_OTHER_SESSIONS)
        return
    _print_candidates(host, found)


async def _switch(host: CommandHost, argument: str) -> None:
    if not argument:
        raise CommandError(ReplCode.USAGE, "usage: /switch <id or title>")
    if argument == host.agent.id:
        host.transcript.notice("already in that session")
        return
    if host.workspace.has_session(argument):
        host.switch_to(host.workspace.agent(argument))
        return
    found = await _candidates(host, argument)
    exact = [c for c in found if c.label.lower() == argument.lower()]
    matches = exact or list(found)
    if len(matches) == 1:
        host.switch_to(host.workspace.agent(matches[0].session_id))
        return
    if not matches:
        raise CommandError(ReplCode.NO_SUCH_SESSION, f"no session matches {inert(argument)!r}")
    host.transcript.notice(f"{len(matches)} sessions match; use an id:")
    _print_candidates(host, matches)


async def _continue(host: CommandHost, argument: str) -> None:
    """A new session whose prompt starts with a mention of this one (what the app's Ctrl+F does for a
    read-only session), followed by `argument`."""
    from sessionref.service.candidates import label_from_title

    agent = _existing(host, "continue")
    label = inert(label_from_title(agent.id, host.workspace.title(agent.id)))
    host.switch_to(host.workspace.draft_session())
    host.start_prompt_with(f"{mention_for(MentionTarget(agent.id, label))} {argument}".rstrip() + " ")
    host.transcript.notice(f"new session mentioning “{label}”: send to continue from it")


async def _title(host: CommandHost, argument: str) -> None:
    if not argument:
        raise CommandError(ReplCode.USAGE, "usage: /title <text>")
    await host.workspace.rename(_existing(host, "title").id, argument)


async def _compact(host: CommandHost, _argument: str) -> None:
    agent = _existing(host, "compact")

    async def compact() -> None:
        await agent.compact()
        host.transcript.notice("compacted: the summary replaces the earlier conversation")

    host.transcript.notice("compacting…")
    host.in_background("compact", compact())


LOG_TYPE_CELLS: Final = 20
"""The widest event type `/log` shows (longer ones are cut with `…`)."""


def log_rows(events: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, str, str]]:
    """(seq, type, source, preview) per row of `events`, inert; a run of `assistant/chunk` events of
    one step is one row `a–b` (the same rows as the app's inspector: `event_view.log_rows`)."""
    return [
        (inert(row.seq), truncate_end(inert(row.type), LOG_TYPE_CELLS), inert(row.source), inert(row.preview))
        for row in event_rows(events)
    ]


def log_lines(rows: Sequence[tuple[str, str, str, str]], columns: int) -> list[StyleAndTextTuples]:
    """`/log` rows as aligned columns sized to their content; the preview gets the rest of the
    terminal's `columns` and is cut with `…`, so no row wraps (unless the terminal is narrower
    than the seq, type and source columns themselves)."""
    if not rows:
        return []
    seq_cells = max(cell_len(seq) for seq, _kind, _source, _preview in rows)
    kind_cells = max(cell_len(kind) for _seq, kind, _source, _preview in rows)
    source_cells = max(cell_len(source) for _seq, _kind, source, _preview in rows)
    preview_cells = columns - 1 - (seq_cells + 2) - (kind_cells + 1) - (source_cells + 1)
    return [
        [
            ("class:log.seq", _pad_left(seq, seq_cells) + "  "),
            ("class:log.type", _pad(kind, kind_cells) + " "),
            ("class:log.source", _pad(source, source_cells) + " "),
            ("class:log.preview", truncate_end(preview, preview_cells)),
        ]
        for seq, kind, source, preview in rows
    ]


def _pad(text: str, cells: int) -> str:
    return text + " " * (cells - cell_len(text))


def _pad_left(text: str, cells: int) -> str:
    return " " * (cells - cell_len(text)) + text


async def _log(host: CommandHost, _argument: str) -> None:
    if isinstance(host.agent, DraftSession):
        host.transcript.notice("(no log yet: this session is created by its first message)")
        return
    report = host.workspace.read_log(host.agent.id)
    events = report.events
    if not events:
        host.transcript.notice("(the log has no events yet)")
    columns = host.transcript.columns()
    host.transcript.print_lines(log_lines(log_rows(events), columns))
    if (skipped := skipped_lines_notice(report.skipped_lines)) is not None:
        host.transcript.notice(skipped)


COMMANDS: Final[dict[str, Callable[[CommandHost, str], Awaitable[None]]]] = {
    "help": _help,
    "new": _new,
    "continue": _continue,
    "sessions": _sessions,
    "switch": _switch,
    "title": _title,
    "compact": _compact,
    "log": _log,
}
"""Command name -> handler(host, argument)."""
