"""The sessions sidebar: this workspace's sessions first, then the others; select to switch.

A session from another agent's history shows its source mark (`CC`, `CX`, `GM`) before its title; one
from the shared catalog names its machine before its folder (`ann-laptop:~/app`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from sessionref.service.protocols import SessionRecord
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from sessionref_tui.display import (
    home_relative,
    inert,
    machine_folder,
    relative_age,
    truncate_end,
    truncate_middle,
)
from sessionref_tui.source_marks import MARK_CELLS, source_color, source_mark, untitled_name
from sessionref_tui.textual_compat import SteadyScrollbarOptionList
from sessionref_tui.widgets.candidate_rows import NO_CWD


class Listed(Protocol):
    """What the sidebar reads of a listed session (a `sessionref.service.candidates.Candidate`)."""

    @property
    def session_id(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def last_activity(self) -> int: ...


SIDEBAR_TITLE_WIDTH = 27
"""Titles are cut (with `…`) to this many cells so each session stays on two lines."""


@dataclass(frozen=True, slots=True)
class SidebarEntry:
    """One session as the sidebar lists it (title None: it has none yet, shown as `NEW_SESSION_NAME`)."""

    session_id: str
    title: str | None
    cwd: str | None
    last_activity: int
    """When the session was last active (epoch ms): its age and its place in the newest-first order."""
    machine: str | None = None
    """The machine a session from the shared catalog was published from (None: a local session)."""

    @classmethod
    def of(cls, record: SessionRecord, label: str | None) -> SidebarEntry:
        """The entry of `record` under `label` (the store's label is the id when there is no title)."""
        title = None if label is None or label == record.id else label
        return cls(record.id, title, record.cwd, record.last_activity)

    @classmethod
    def of_candidate(cls, candidate: Listed, machine: str | None = None) -> SidebarEntry:
        """The entry of a session the reference service listed (its label is its id when untitled),
        `machine` naming where a remote one was published."""
        title = None if candidate.label == candidate.session_id else candidate.label
        return cls(candidate.session_id, title, candidate.cwd, candidate.last_activity, machine)


@dataclass(frozen=True, slots=True)
class SessionGroup:
    """A heading and the sessions under it, newest first; `here` for the current session's folder."""

    heading: str
    entries: tuple[SidebarEntry, ...]
    here: bool = False


def group_sessions(entries: Sequence[SidebarEntry], cwd: str | None) -> list[SessionGroup]:
    """Sessions of `cwd` (the current session's folder) under "This folder", then all others under
    "Other folders"; empty groups dropped. The input order (newest first) is kept inside each group.
    """
    here = tuple(entry for entry in entries if cwd is not None and entry.cwd == cwd)
    others = tuple(entry for entry in entries if cwd is None or entry.cwd != cwd)
    groups = [SessionGroup("This folder", here, here=True), SessionGroup("Other folders", others)]
    return [group for group in groups if group.entries]


def group_heading(group: SessionGroup, cwd: str | None, home: str | None) -> Content:
    """A group's heading; "This folder" names the folder on a second line (home shortened to `~`)."""
    heading: list[str | tuple[str, str]] = [(group.heading, "bold $text-muted")]
    if group.here and cwd is not None:
        folder = truncate_middle(inert(home_relative(cwd, home)), SIDEBAR_TITLE_WIDTH + 2)
        heading += ["\n", (folder, "italic $text-muted")]
    return Content.assemble(*heading)


def _place(entry: SidebarEntry) -> str:
    folder = inert(entry.cwd) if entry.cwd else NO_CWD
    return machine_folder(entry.machine, folder, SIDEBAR_TITLE_WIDTH - 6)


def entry_prompt(entry: SidebarEntry, *, now_ms: int, show_cwd: bool, current: bool) -> Content:
    """Two lines: the source mark and the (inert) title with the current marker, then the age and, for
    other folders, the cwd."""
    mark = source_mark(entry.session_id)
    room = SIDEBAR_TITLE_WIDTH - (MARK_CELLS + 1 if mark else 0)
    title = truncate_end(inert(entry.title) if entry.title else untitled_name(entry.session_id), room)
    second: list[str | tuple[str, str]] = [(relative_age(entry.last_activity, now_ms), "dim")]
    if show_cwd or entry.machine is not None:
        second += [(" · ", "dim"), (_place(entry), "dim italic")]
    marker = ("▸ ", "bold $accent") if current else ("  ", "")
    source: list[str | tuple[str, str]] = []
    if mark:
        # One styled segment, the space included, so the mark and its gap are drawn as one.
        source = [(f"{mark} ", f"bold {source_color(entry.session_id)}")]
    return Content.assemble(marker, *source, (title, "bold" if current else ""), "\n  ", *second)


class SessionList(SteadyScrollbarOptionList):
    """The sidebar's option list: its scrollbar stays out of unrelated layout passes (see the base)."""


class Sidebar(Vertical):
    """Lists sessions grouped by folder; posts `Sidebar.SessionSelected` when the user picks one."""

    class SessionSelected(Message):
        """The user chose a session in the sidebar."""

        def __init__(self, session_id: str) -> None:
            super().__init__()
            self.session_id = session_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: list[SidebarEntry] = []
        self.current_id: str | None = None
        self.cwd: str | None = None
        """The current session's folder: the one "This folder" means."""

    def compose(self) -> ComposeResult:
        yield Static("Sessions", classes="sidebar-heading")
        yield SessionList(id="session-list")

    def show_sessions(
        self,
        entries: Sequence[SidebarEntry],
        *,
        cwd: str | None,
        current_id: str | None,
        now_ms: int,
        more: bool = False,
        home: str | None = None,
    ) -> None:
        """Replace the list with `entries` grouped by folder (`cwd`: the current session's, named in
        its heading with `home` shortened to `~`); `more` says sessions were left out for size."""
        self.entries = list(entries)
        self.current_id = current_id
        self.cwd = cwd
        option_list = self.query_one("#session-list", OptionList)
        options: list[Option | None] = []
        highlight: int | None = None
        for group in group_sessions(entries, cwd):
            if options:
                options.append(None)
            options.append(Option(group_heading(group, cwd, home), disabled=True))
            for entry in group.entries:
                if entry.session_id == current_id:
                    highlight = len(options)
                options.append(
                    Option(
                        entry_prompt(
                            entry,
                            now_ms=now_ms,
                            show_cwd=not group.here,
                            current=entry.session_id == current_id,
                        ),
                        id=entry.session_id,
                    )
                )
        if more:
            hint = Content.styled("… more sessions: Ctrl+O searches them all", "dim italic")
            options.append(Option(hint, disabled=True))
        option_list.set_options(options)
        if highlight is not None:
            option_list.highlighted = highlight

    @on(OptionList.OptionSelected, "#session-list")
    def _session_chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.SessionSelected(event.option.id))
