"""The line mode's colours and its bottom toolbar."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.styles import Style
from rich.cells import cell_len

from sessionref_tui.display import NEW_SESSION_NAME, inert, truncate_end, truncate_middle, truncate_start

REPL_STYLE: Final = Style.from_dict(
    {
        "prompt": "bold ansicyan",
        "mention": "bold ansimagenta underline",
        "mention.invalid": "bold ansired underline",
        "slash-command": "bold ansiblue",
        "candidate.label": "",
        "candidate.match": "bold underline",
        "candidate.here": "ansigreen",
        "candidate.machine": "ansicyan",
        "candidate.source": "bold ansiyellow",
        "said.mark": "bold ansiyellow",
        "said.label": "italic",
        "said.role": "italic",
        "said.snippet": "",
        "you": "bold ansicyan",
        "assistant": "bold ansigreen",
        "reference": "ansibrightblack italic",
        "checkpoint": "bold ansiyellow",
        "queued": "ansibrightblack bold",
        "queued.text": "ansibrightblack italic",
        "notice": "ansibrightblack",
        "error": "bold ansired",
        "error.message": "ansired",
        "log.seq": "ansibrightblack",
        "log.type": "bold",
        "log.source": "ansiblue",
        "bottom-toolbar": "noreverse bg:#262626 #d0d0d0",
        "toolbar.title": "bold",
        "toolbar.running": "bold ansiyellow",
        "toolbar.idle": "ansigreen",
        "toolbar.stream": "italic #a0a0a0",
        "toolbar.hint": "#a0a0a0",
    }
)
"""Named classes used by the prompt, the menu, the transcript and the toolbar."""


STREAM_PREFIX: Final = " assistant › "
"""What starts the toolbar's line showing the reply being streamed."""

NO_OTHER_SESSIONS: Final = "no other sessions yet: a session is listed once its first message is sent"
"""What a bare `@` (and `/sessions`) says when there is nothing to mention, rather than "no match"."""


@dataclass(frozen=True, slots=True)
class ToolbarState:
    """Everything the toolbar shows; raw data, made inert when rendered (`title` None: a new session).

    `no_matches` means the last `@` lookup found nothing; `query` is what it looked for;
    `searching` that it has run past `LOADING_DELAY`; `lookup_failure` why it failed.
    """

    title: str | None
    cwd: str | None
    status: str
    model_name: str
    streaming: str = ""
    searching: bool = False
    no_matches: bool = False
    query: str = ""
    preparing: bool = False
    queued: int = 0
    lookup_failure: str | None = None
    said_note: str | None = None
    """Why the "said in conversation" group has no rows ("indexing 40%…"), when it says why."""
    said_rows: bool = False
    """Whether the menu lists rows found by what was said (the toolbar names their mark)."""
    columns: int = 80
    """The terminal's width: every hint line fits in it."""


STATUS_LINE_FIXED_CELLS: Final = 11
"""The status line's cells besides its four fields: ` title │ cwd │ status │ model`."""


def status_line_cells(columns: int, status: int, title: int, cwd: int, model: int) -> tuple[int, int, int]:
    """The cells the title, cwd and model get so the status line fits `columns` (the status is whole):
    each at most its length and 40, 40 and 30 cells; when short of room the model gives way first,
    then the cwd, the title keeps the most."""
    room = max(0, columns - 1 - STATUS_LINE_FIXED_CELLS - status)
    cells = [min(title, 40), min(cwd, 40), min(model, 30)]
    # Short of room, the model gives way first (to 6 cells), then the cwd (to 8), then the title.
    for index, floor in ((2, 6), (1, 8), (0, 1), (1, 0), (2, 0)):
        excess = sum(cells) - room
        if excess <= 0:
            break
        cells[index] = max(min(cells[index], floor), cells[index] - excess)
    title_cells, cwd_cells, model_cells = cells
    return max(1, title_cells), cwd_cells, model_cells


def toolbar_fragments(state: ToolbarState) -> StyleAndTextTuples:
    """Optional hint lines (streaming tail, lookup state, preparing, queued) above one status line:
    session title │ cwd │ idle/running │ model."""
    fragments: StyleAndTextTuples = []

    def hint(text: str, style: str = "class:toolbar.hint") -> None:
        fragments.extend([(style, text), ("", "\n")])

    if state.streaming:
        # The reply's newest words, as written (Markdown markers and all: it is a glimpse, the
        # transcript renders it), made inert and kept to one line: its end, cut to the width.
        streamed = " ".join(inert(state.streaming).split())
        room = state.columns - cell_len(STREAM_PREFIX) - 1
        hint(STREAM_PREFIX + truncate_start(streamed, room), "class:toolbar.stream")
    if state.searching:
        hint(" @ searching sessions…")
    elif state.lookup_failure:
        hint(f" @ sessions unavailable: {inert(state.lookup_failure)}")
    elif state.no_matches and not state.query:
        hint(f" @ {NO_OTHER_SESSIONS}")
    elif state.no_matches:
        hint(" @ no matching sessions")
    if state.said_note:
        hint(f" @ said in conversation: {inert(state.said_note)}")
    elif state.said_rows:
        hint(" @ “ rows: found in what was said")
    if state.preparing:
        hint(" preparing… (Ctrl+C cancels)")
    if state.queued:
        hint(f" {state.queued} queued: the model sees them at its next step · Ctrl+C stops and returns them")
    status = inert(state.status)
    title_text = inert(state.title or NEW_SESSION_NAME)
    cwd_text = inert(state.cwd) if state.cwd else "(no cwd)"
    model_text = inert(state.model_name)
    title_cells, cwd_cells, model_cells = status_line_cells(
        state.columns, cell_len(status), cell_len(title_text), cell_len(cwd_text), cell_len(model_text)
    )
    title = truncate_end(title_text, title_cells)
    cwd = truncate_middle(cwd_text, cwd_cells)
    status_style = "class:toolbar.running" if state.status == "running" else "class:toolbar.idle"
    fragments += [
        ("class:toolbar.title", f" {title} "),
        ("", "│ "),
        ("", f"{cwd} "),
        ("", "│ "),
        (status_style, f"{status} "),
        ("", "│ "),
        ("", truncate_end(model_text, model_cells)),
    ]
    return fragments
