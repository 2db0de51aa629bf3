"""The argument parser of `sessionref`: subcommands, options, help texts and bounded usage errors."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn

from sessionref.contract.excerpts import bounded_excerpt
from sessionref.sources.registry import SOURCES

from sessionref_tui.cli.catalog_command import add_catalog_parser
from sessionref_tui.cli.output import EXIT_USAGE
from sessionref_tui.display import inert

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

USAGE_MESSAGE_CHARS: Final = 300
"""Characters of an argparse error (which may quote the bad argument) printed with the usage line."""

DSH_NOTE: Final = (
    "A DSH sessions directory (…/--project--/<id>/session.jsonl[.zstd]) works too: its sessions can be "
    "listed, shown and referenced; .zstd logs are read-only."
)
READ_STORE_HELP: Final = (
    "session store directory (default: $SESSIONREF_HOME, else the platform's user data directory). "
    "It must exist (error CLI_STORE_NOT_FOUND otherwise); `sessionref chat` or `sessionref repl` creates "
    "it. Before the default store exists, other agents' histories are still read "
    "(their index is kept in the cache directory). " + DSH_NOTE
)
WRITE_STORE_HELP: Final = (
    "session store directory (default: $SESSIONREF_HOME, else the platform's user data directory). "
    "Created when missing (a note on stderr says so). " + DSH_NOTE
)
ID_HELP: Final = "a session id, or a unique start of one (an exact id always wins)"
CWD_HELP: Final = "working directory new sessions belong to (default: here)"
SESSIONS_DESCRIPTION: Final = (
    "List sessions you can mention, ranked like @ completion.\n\n"
    "Fast for scripts: the answer comes straight from the store's discovery index while a sessionref "
    "process caught that index up with the logs less than a minute ago; otherwise the store is opened "
    "and caught up first. What sessionref writes is always in the index at once; a session another "
    "program (such as DSH) created or changed may show up to a minute late. --fresh always catches up."
)

_SOURCE_NAMES: Final = ", ".join(info.name for info in SOURCES)
_SOURCE_KINDS: Final = ", ".join(info.kind for info in SOURCES)

DESCRIPTION: Final = f"""\
Mention one AI chat session inside another.

  sessionref demo                 the chat app on a seeded temporary store (offline demo model)
  sessionref chat                 the chat app on your store
  sessionref repl                 the same chat as a line-mode prompt in your terminal scrollback
  sessionref sessions [QUERY]     sessions you can mention, ranked like @ completion
  sessionref search TEXT          sessions found by what was said in them
  sessionref show ID              one session's current conversation
  sessionref mention ID           the canonical @[label](dsh-session:…) token for a session
  sessionref prepare TEXT --session ID
                                  what a message would send: readable text + the context message
  sessionref snapshot ID          the bounded context message for one session, to hand to any agent
  sessionref sources              the other agents' histories found
  sessionref mcp                  serve every session to other agents over MCP (stdio)
  sessionref catalog ACTION       the shared catalog on PostgreSQL: init, status, publish, share

ID may be a unique start of a session id (as `sessions` prints them). Sessions of other agents
are listed too, read-only, their ids named by their source ({_SOURCE_KINDS}): claude-code:<uuid>.
"""

SOURCES_HELP: Final = (
    f"which other agents' histories to read: a comma-separated list of {_SOURCE_KINDS}, "
    "or all / none (default: [sources] in config.toml, $SESSIONREF_SOURCES, else every one found)"
)
SOURCES_DESCRIPTION: Final = (
    f"List the other agents' histories sessionref reads ({_SOURCE_NAMES}): where "
    "each one's folder is, whether it is read and why, how many sessions were found and when it was "
    "last indexed. Switch one off with [sources] <name> = false in config.toml, $SESSIONREF_SOURCES "
    "or --sources; set its folder with [sources] <name>_root."
)
SNAPSHOT_DESCRIPTION: Final = (
    "Print the context message the model would get for one session: the framed, bounded, untrusted "
    "snapshot, exactly as sessionref sends it. Hand it to any agent (a file, a pipe, a paste). Works "
    "for any session: the store's own, DSH's, or one from Claude Code, Codex CLI or Gemini CLI. "
    "Writes nothing: when the budget cuts the session, the full transcript is not saved, and the "
    "notice at the end says so."
)

DSH_EPILOG: Final = """\
DSH sessions: point --store at a DSH sessions directory (for example ~/.dsh/sessions) to list, show,
mention and reference its sessions; compressed .jsonl.zstd logs are read-only."""
EXIT_EPILOG: Final = (
    "Exit codes: 0 ok, 1 the operation failed, 2 usage error, 141 the reader of the output went away\n"
    "(| head: the command stops quietly)."
)
JSON_EPILOG: Final = """\
With --json the output is JSON, and so is a failure: {"error": {"code", "message"}} on stdout
(the message is on stderr too)."""

TOP_EPILOG: Final = f"""\
{DSH_EPILOG}
{EXIT_EPILOG}
`sessions`, `search`, `show`, `mention`, `prepare`, `snapshot` and `sources` take --json for
machine-readable output."""

SEARCH_DESCRIPTION: Final = (
    "Find sessions by what was said in them (your messages, the assistant's, compaction summaries; never "
    "tool output or injected context), best first: relevance, then sessions of --cwd, then recent activity; "
    "one row per session with its best matching message.\n\n"
    "TEXT may be a question or a few words: sessions holding every word come first, then those holding "
    "most of the rarer ones (other forms of a word count: crashes finds crash; a typo in a long word is "
    "forgiven; max_retries, max retries and maxretries match each other; question words are ignored). "
    '"quoted words" must stand together in that order; case and accents are ignored; Chinese, Japanese '
    "and Korean text matches by substring. --strict: every word must be said, the last one also as the "
    "start of a word (migr finds migration), as the @ picker matches one word.\n\n"
    "The store's index of what was said is caught up first (built on first use, with progress on stderr)."
)

MCP_DESCRIPTION: Final = (
    "Serve every session sessionref can see to another agent over the Model Context Protocol "
    "(JSON-RPC on stdin/stdout; diagnostics on stderr). Read-only: tools list_sessions, "
    "search_conversations, get_snapshot and get_messages, each session as a dsh-session: resource, "
    "and a `mention` prompt. It uses the same store and sources as `sessionref chat`; nothing else "
    "to configure. Needs the optional SDK: pip install 'sessionref[mcp]'."
)
MCP_EPILOG: Final = """\
Setup, one line per agent (see docs/mcp.md):
  Claude Code  claude mcp add sessionref -- sessionref mcp
  Codex CLI    ~/.codex/config.toml:
               [mcp_servers.sessionref]  command = "sessionref"  args = ["mcp"]
  Gemini CLI   ~/.gemini/settings.json:
               "mcpServers": {"sessionref": {"command": "sessionref", "args": ["mcp"]}}
  Cursor       ~/.cursor/mcp.json:
               "mcpServers": {"sessionref": {"command": "sessionref", "args": ["mcp"]}}
  Zed          settings.json:
               "context_servers": {"sessionref": {"source": "custom", "command": "sessionref",
                                                  "args": ["mcp"]}}

A listing hides the caller's own live session: a session of --cwd active in the last two minutes.
Exit codes: 0 the client closed the connection, 2 usage error or the MCP SDK is missing."""

DEMO_DESCRIPTION: Final = (
    "Run the chat app on a fresh temporary store with sample sessions (no key needed). The store is "
    "deleted when you quit, so --store is not accepted: use `sessionref chat --store DIR` for your own."
)


def package_version() -> str:
    """The installed sessionref version (from package metadata), or "unknown" when not installed."""
    from importlib.metadata import PackageNotFoundError, version  # ~10 ms: only for --version

    try:
        return version("sessionref")
    except PackageNotFoundError:
        return "unknown"


class VersionAction(argparse.Action):
    """`--version`: print `sessionref <version>` and exit 0, reading the metadata only then."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str = argparse.SUPPRESS,
        default: str = argparse.SUPPRESS,
        help: str | None = None,
    ) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        parser._print_message(f"sessionref {package_version()}\n", sys.stdout)
        parser.exit()


class BoundedArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors quote a bounded, inert excerpt of what was typed."""

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        # argparse drops write errors here; a closed pipe must reach `main` to end with status 141.
        if message:
            (file or sys.stderr).write(message)

    def error(self, message: str) -> NoReturn:
        """Print the usage and the (bounded, inert) message on stderr; exit 2."""
        self.print_usage(sys.stderr)
        shown = inert(bounded_excerpt(message, USAGE_MESSAGE_CHARS))
        self.exit(EXIT_USAGE, f"{self.prog}: error: {shown}\n")


class _RefuseDemoStore(argparse.Action):
    """`demo --store DIR`: a usage error explaining that the demo always uses a throwaway store."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        parser.error(
            "the demo always runs on a fresh temporary store that is deleted when you quit, so --store "
            "is not accepted; to chat on your own store run `sessionref chat --store DIR`"
        )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {bounded_excerpt(text, 40)!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {bounded_excerpt(text, 40)!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError("must be a finite number of seconds, zero or more")
    from sessionref.models.base import MAX_DEMO_PACE  # only when --pace is given: not at launch

    if value > MAX_DEMO_PACE:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_DEMO_PACE:g} seconds")
    return value


def _directory(text: str) -> Path:
    if "\x00" in text:
        raise argparse.ArgumentTypeError("a directory name cannot contain a NUL character")
    return Path(text)


def _source_list(text: str) -> tuple[str, ...]:
    from sessionref.host.source_settings import SourceListError, parse_source_list

    try:
        return parse_source_list(text)
    except SourceListError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _cwd(text: str) -> str:
    return str(_directory(text))


def _epilog(*, with_json: bool, dsh: bool = True) -> str:
    parts = [DSH_EPILOG] if dsh else []
    parts.append(EXIT_EPILOG)
    if with_json:
        parts.append(JSON_EPILOG)
    return "\n".join(parts)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `sessionref` with every subcommand."""
    read_store = BoundedArgumentParser(add_help=False)
    read_store.add_argument("--store", metavar="DIR", type=_directory, help=READ_STORE_HELP)
    write_store = BoundedArgumentParser(add_help=False)
    write_store.add_argument("--store", metavar="DIR", type=_directory, help=WRITE_STORE_HELP)
    as_json = BoundedArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print JSON instead of text")
    sources = BoundedArgumentParser(add_help=False)
    sources.add_argument("--sources", metavar="LIST", type=_source_list, default=None, help=SOURCES_HELP)

    parser = BoundedArgumentParser(
        prog="sessionref",
        description=DESCRIPTION,
        epilog=TOP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=VersionAction, help="show the version and exit")
    # The description lists the commands once, with their arguments: argparse's own list is not shown.
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, help="a command above; COMMAND --help says more"
    )

    def add(
        name: str,
        help_text: str,
        *parents: BoundedArgumentParser,
        description: str | None = None,
        dsh: bool = True,
    ) -> argparse.ArgumentParser:
        return commands.add_parser(
            name,
            description=description or help_text,
            parents=list(parents),
            epilog=_epilog(with_json=as_json in parents, dsh=dsh),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    chat = add("chat", "Run the chat app (Textual) on the store.", write_store, sources)
    chat.add_argument("--cwd", metavar="DIR", type=_cwd, help=CWD_HELP)

    demo = add(
        "demo",
        "Run the chat app on a fresh temporary store with sample sessions (no key needed).",
        description=DEMO_DESCRIPTION,
        dsh=False,
    )
    demo.add_argument(
        "--pace",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="seconds between streamed words of the demo model",
    )
    demo.add_argument("--store", nargs="?", action=_RefuseDemoStore, help=argparse.SUPPRESS)

    repl = add("repl", "Chat in a line-mode prompt in the normal terminal scrollback.", write_store, sources)
    repl.add_argument(
        "--session", metavar="ID", help=f"continue this session: {ID_HELP} (default: a new one)"
    )
    repl.add_argument("--cwd", metavar="DIR", type=_cwd, help=CWD_HELP)

    sessions = add(
        "sessions",
        "List sessions you can mention, ranked like @ completion.",
        read_store,
        as_json,
        sources,
        description=SESSIONS_DESCRIPTION,
    )
    sessions.add_argument("query", nargs="?", default="", help="text to find in the title, id or cwd")
    sessions.add_argument("--limit", type=_positive_int, default=50, metavar="N", help="at most N rows (50)")
    sessions.add_argument(
        "--cwd", metavar="DIR", type=_cwd, help="rank sessions of DIR first (default: here)"
    )
    sessions.add_argument(
        "--fresh",
        action="store_true",
        help="catch up with every log first, even if the index was caught up recently",
    )

    search = add(
        "search",
        "Find sessions by what was said in them.",
        read_store,
        as_json,
        sources,
        description=SEARCH_DESCRIPTION,
    )
    search.add_argument("text", metavar="TEXT", help="words to find (quote a phrase: '\"retry budget\"')")
    search.add_argument(
        "--limit", type=_positive_int, default=20, metavar="N", help="at most N sessions (20)"
    )
    search.add_argument(
        "--strict",
        action="store_true",
        help="every word must be said (for scripts: no other forms, no typos)",
    )
    search.add_argument(
        "--cwd",
        metavar="DIR",
        type=_cwd,
        help="rank sessions of DIR first among equally good matches (default: here)",
    )

    show = add("show", "Print a session's current (folded) conversation.", read_store, as_json, sources)
    show.add_argument("session_id", metavar="ID", help=ID_HELP)

    mention = add("mention", "Print the canonical mention token of a session.", read_store, as_json, sources)
    mention.add_argument("session_id", metavar="ID", help=ID_HELP)
    mention.add_argument("--label", help="label to show (default: the session's title, else its id)")

    prepare = add(
        "prepare",
        "Parse mentions in TEXT as if sent from a session; print what would be sent.",
        read_store,
        as_json,
        sources,
    )
    prepare.add_argument("text", metavar="TEXT")
    prepare.add_argument(
        "--session", required=True, metavar="ID", help=f"the session the text is sent from: {ID_HELP}"
    )

    snapshot = add(
        "snapshot",
        "Print the bounded context message for one session (to hand to any agent).",
        read_store,
        as_json,
        sources,
        description=SNAPSHOT_DESCRIPTION,
    )
    snapshot.add_argument("session_id", metavar="ID", help=ID_HELP)
    snapshot.add_argument(
        "--max-bytes",
        type=_positive_int,
        default=None,
        metavar="N",
        help="byte budget of the snapshot's JSON (default: [references] maxReferenceBytes, "
        "else the automatic budget of the configured model)",
    )

    mcp = add(
        "mcp",
        "Serve every session to other agents over MCP (stdio).",
        write_store,
        sources,
        description=MCP_DESCRIPTION,
    )
    mcp.epilog = MCP_EPILOG
    mcp.add_argument(
        "--cwd",
        metavar="DIR",
        type=_cwd,
        help="the caller's folder: its sessions rank first, its live one is hidden (default: here)",
    )

    listing = add(
        "sources",
        "List the Claude Code, Codex CLI and Gemini CLI histories found.",
        read_store,
        as_json,
        sources,
        description=SOURCES_DESCRIPTION,
    )
    listing.set_defaults(command="sources")
    add_catalog_parser(commands, read_store)
    return parser
