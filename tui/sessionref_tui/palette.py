"""Command palette providers: the app's commands, and a session switcher that searches the store.

Textual's `Matcher.highlight` and `Hit.help` parse their strings as markup, so
nothing from data goes through them: session hits are displayed as `Content`
assembled from literal (inert) segments, with the matched substring styled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from sessionref_tui.display import (
    home_relative,
    inert,
    match_spans,
    relative_age,
    truncate_end,
    truncate_middle,
)
from sessionref_tui.source_marks import source_color, source_mark, untitled_name

if TYPE_CHECKING:
    from sessionref_tui.chat_screen import ChatScreen


def calling_chat(provider: Provider) -> ChatScreen | None:
    """The chat the palette was opened over (None over another screen: its commands are not offered)."""
    from sessionref_tui.chat_screen import ChatScreen  # imports this module: ask for it once running

    screen = provider.screen
    return screen if isinstance(screen, ChatScreen) else None


@dataclass(frozen=True, slots=True)
class AppCommand:
    """A palette entry: its name, one line of help and the app action it runs."""

    name: str
    help: str
    action: str


APP_COMMANDS: tuple[AppCommand, ...] = (
    AppCommand("New session", "Start a session in the folder sessionref started in (Ctrl+N)", "new_session"),
    AppCommand("Switch session…", "Search all sessions by title, id or folder (Ctrl+O)", "switch_session"),
    AppCommand("Rename session", "Give the current session a title (Ctrl+R)", "rename"),
    AppCommand(
        "New session mentioning this one",
        "Continue from this read-only session in a new one, with your draft (Ctrl+F)",
        "mention_in_new_session",
    ),
    AppCommand("Compact session…", "Summarise the conversation so far, after asking (F8)", "compact"),
    AppCommand("Toggle inspector", "Show or hide the live log of this session (Ctrl+T)", "toggle_inspector"),
    AppCommand("Toggle sidebar", "Show or hide the sessions list (Ctrl+G)", "toggle_sidebar"),
    AppCommand("Clear the draft", "Empty the composer (Ctrl+Z there brings it back)", "clear_draft"),
)


SAME_FOLDER_MARK = "●"
"""Marks a session in the current session's folder, as the `@` picker does."""


def session_hit_display(
    label: str,
    cwd: str | None,
    age: str,
    needle: str,
    *,
    same_folder: bool,
    home: str | None = None,
    session_id: str = "",
    machine: str | None = None,
) -> Content:
    """`[mark ]label  ·  [● ]cwd · age` as literal content; the case-insensitive match of `needle` is styled.

    The folder is always named (`home` shortened to `~`); `●` marks the current session's folder;
    a session from another agent's history (by `session_id`) starts with its source mark; a remote
    session's `machine` comes before its folder (`ann-laptop:~/app`)."""
    shown = truncate_end(inert(label), 48)
    parts: list[str | tuple[str, str]] = []
    if mark := source_mark(session_id):
        parts += [(mark, f"bold {source_color(session_id)}"), " "]
    position = 0
    for start, end in match_spans(shown, needle):
        parts += [shown[position:start], (shown[start:end], "bold underline $text-accent")]
        position = end
    parts.append(shown[position:])
    folder = truncate_middle(inert(home_relative(cwd, home)), 40) if cwd else "(no cwd)"
    if machine is not None:
        folder = f"{inert(machine)}:{folder}"
    parts.append(("  ·  ", "dim"))
    if same_folder:
        parts.append((f"{SAME_FOLDER_MARK} ", "bold"))
    parts += [(folder, "dim italic"), (" · " + age, "dim")]
    return Content.assemble(*parts)


class AppCommands(Provider):
    """New, switch, rename, compact, continue from a read-only session, the two toggles and clearing
    the draft, by name;
    only those that can run now are offered."""

    def _run(self, action: str) -> Callable[[], object]:
        return partial(self.screen.run_action, action)

    def _available(self) -> list[AppCommand]:
        """The commands that can run now (no rename for a new session, no compaction twice, …)."""
        chat = calling_chat(self)
        if chat is None:
            return []
        return [command for command in APP_COMMANDS if chat.check_action(command.action, ()) is not False]

    async def discover(self) -> Hits:
        for command in self._available():
            yield DiscoveryHit(command.name, self._run(command.action), help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._available():
            score = matcher.match(command.name)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(command.name), self._run(command.action), help=command.help
                )


class SessionSwitcher(Provider):
    """Sessions as the reference service ranks them (the current session's folder first, then newest),
    minus the current one; `Workspace.limits.switcher` of them per query."""

    async def _hits(self, query: str) -> list[tuple[str, Content, Callable[[], object]]]:
        chat = calling_chat(self)
        if chat is None:
            return []
        workspace = chat.workspace
        found = await workspace.candidates(chat.agent, query, workspace.limits.switcher)
        now_ms = chat.now_ms()
        hits: list[tuple[str, Content, Callable[[], object]]] = []
        for candidate in found:
            label = candidate.label
            display = session_hit_display(
                untitled_name(candidate.session_id) if label == candidate.session_id else label,
                candidate.cwd,
                relative_age(candidate.last_activity, now_ms),
                query,
                same_folder=candidate.same_workspace,
                home=chat.home_dir,
                session_id=candidate.session_id,
                machine=workspace.machine_of(candidate.session_id),
            )
            hits.append((label, display, partial(chat.open_session, candidate.session_id)))
        return hits

    async def discover(self) -> Hits:
        for label, display, command in await self._hits(""):
            yield DiscoveryHit(display, command, text=label)

    async def search(self, query: str) -> Hits:
        found = await self._hits(query)
        for rank, (label, display, command) in enumerate(found):
            # The store already ranked them (folder, then recency); keep that order.
            yield Hit(1.0 - rank / (len(found) + 1), display, command, text=label)
