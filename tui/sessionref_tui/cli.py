"""The `sessionref` command: the chat apps, and scriptable access to sessions and references.

Exit codes: 0 ok, 1 the operation failed (code and message on stderr; with
`--json` also a `{"error": {"code", "message"}}` object on stdout), 2 usage.
Nothing here prints a traceback: our error types become code + message, and
anything unexpected is reported as `INTERNAL_ERROR`. Everything printed from data
(titles, ids, cwds, message text) is made inert first.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from sessionref.errors import CodedError, error_parts

from sessionref_tui.display import inert, relative_age, truncate_end, truncate_middle

if TYPE_CHECKING:
    from sessionref.store import SessionStore

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2

STORE_HELP: Final = (
    "session store directory (default: $SESSIONREF_HOME, else the platform's user data directory). "
    "A DSH sessions directory (…/--project--/<id>/session.jsonl[.zstd]) works too: its sessions can be "
    "listed, shown and referenced; .zstd logs are read-only."
)

DESCRIPTION: Final = """\
Mention one AI chat session inside another.

  sessionref demo                 the chat app on a seeded temporary store (offline demo model)
  sessionref chat                 the chat app on your store
  sessionref repl                 the same chat as a line-mode prompt in your terminal scrollback
  sessionref sessions [QUERY]     sessions you can mention, ranked like @ completion
  sessionref show ID              one session's current conversation
  sessionref mention ID           the canonical @[label](dsh-session:…) token for a session
  sessionref prepare TEXT --session ID
                                  what a message would send: readable text + the context message
"""

EPILOG: Final = """\
DSH sessions: point --store at a DSH sessions directory (for example ~/.dsh/sessions) to list, show,
mention and reference its sessions; compressed .jsonl.zstd logs are read-only.
Exit codes: 0 ok, 1 the operation failed, 2 usage error. Add --json for machine-readable output."""


class CliError(CodedError):
    """A failure the CLI reports with a stable code."""


_JSON_UNSAFE: Final = frozenset(
    {*range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A),
     0x2028, 0x2029}
)


def safe_json(value: Any, *, indent: int | None = 2) -> str:
    """JSON text safe in a terminal: non-ASCII kept; controls, bidi marks, surrogates `\\u`-escaped."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return "".join(
        f"\\u{ord(char):04x}" if ord(char) in _JSON_UNSAFE or 0xD800 <= ord(char) <= 0xDFFF else char
        for char in text
    )


def inert_block(text: str) -> str:
    """Multi-line text with each line made inert (line breaks kept)."""
    return "\n".join(inert(line) for line in text.split("\n"))


# -- parser --------------------------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `sessionref` with every subcommand."""
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument("--store", metavar="DIR", type=Path, help=STORE_HELP)
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print JSON instead of text")

    parser = argparse.ArgumentParser(prog="sessionref", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name: str, help_text: str, *parents: argparse.ArgumentParser) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=help_text, description=help_text, parents=[store, *parents],
                                   epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)

    chat = add("chat", "Run the chat app (Textual) on the store.")
    chat.add_argument("--cwd", metavar="DIR", help="working directory new sessions belong to (default: here)")
    demo = add("demo", "Run the chat app on a fresh temporary store with sample sessions (no key needed).")
    demo.add_argument("--pace", type=float, default=None, metavar="SECONDS",
                      help="seconds between streamed words of the demo model")
    repl = add("repl", "Chat in a line-mode prompt in the normal terminal scrollback.")
    repl.add_argument("--session", metavar="ID", help="continue this session (default: start a new one)")
    repl.add_argument("--cwd", metavar="DIR", help="working directory new sessions belong to (default: here)")

    sessions = add("sessions", "List sessions you can mention, ranked like @ completion.", as_json)
    sessions.add_argument("query", nargs="?", default="", help="text to find in the title, id or cwd")
    sessions.add_argument("--limit", type=_positive_int, default=50, metavar="N", help="at most N rows (50)")
    sessions.add_argument("--cwd", metavar="DIR", help="rank sessions of DIR first (default: here)")

    show = add("show", "Print a session's current (folded) conversation.", as_json)
    show.add_argument("session_id", metavar="ID")

    mention = add("mention", "Print the canonical mention token of a session.", as_json)
    mention.add_argument("session_id", metavar="ID")
    mention.add_argument("--label", help="label to show (default: the session's title, else its id)")

    prepare = add("prepare", "Parse mentions in TEXT as if sent from a session; print what would be sent.",
                  as_json)
    prepare.add_argument("text", metavar="TEXT")
    prepare.add_argument("--session", required=True, metavar="ID", help="the session the text is sent from")
    return parser


# -- helpers --------------------------------------------------------------------------------------------


def _store_root(args: argparse.Namespace) -> Path:
    if args.store is not None:
        return Path(args.store)
    from sessionref.store import default_store_root

    return default_store_root()


LARGE_STORE_SESSIONS: Final = 500
"""First-time indexing of at least this many sessions prints progress on stderr."""


def progress_printer(*, threshold: int = LARGE_STORE_SESSIONS) -> Callable[[int, int], None]:
    """A `progress(done, total)` callback printing a percentage on stderr, at most once per percent.

    Stays silent when fewer than `threshold` sessions are being indexed.
    """
    last = -1

    def progress(done: int, total: int) -> None:
        nonlocal last
        if total < threshold:
            return
        percent = 100 if total <= 0 else done * 100 // total
        if percent == last:
            return
        last = percent
        end = "\n" if done >= total else ""
        print(f"\rindexing sessions: {done}/{total} ({percent}%)", end=end, file=sys.stderr, flush=True)

    return progress


def open_cli_store(args: argparse.Namespace) -> SessionStore:
    """Open the store named by `--store` (or the default), printing indexing progress on stderr."""
    from sessionref.store import open_store

    root = _store_root(args)
    if args.store is not None and not root.is_dir():
        raise CliError("CLI_STORE_NOT_FOUND", f"store directory {inert(str(root))!r} does not exist")
    return open_store(root, progress=progress_printer())


def _report(args: argparse.Namespace, code: str, message: str) -> int:
    print(f"sessionref: {inert(code)}: {inert(message)}", file=sys.stderr)
    if getattr(args, "json", False):
        print(safe_json({"error": {"code": code, "message": message}}))
    return EXIT_FAILED


def _iso(created_at_ms: int) -> str:
    return datetime.fromtimestamp(created_at_ms / 1000, tz=UTC).isoformat(timespec="seconds")


def _now_ms() -> float:
    return datetime.now(tz=UTC).timestamp() * 1000


# -- subcommands --------------------------------------------------------------------------------------


def _cmd_chat(args: argparse.Namespace) -> int:
    from sessionref_tui.launch import run_chat

    return run_chat(_store_root(args), cwd=args.cwd)


def _cmd_demo(args: argparse.Namespace) -> int:
    from sessionref_tui.launch import run_demo

    return run_demo(pace=args.pace)


REPL_LOG_NAME: Final = "repl.log"
"""Where the line mode's diagnostics go (in the store root), so no traceback lands in the terminal."""


def _route_diagnostics(root: Path) -> None:
    """Send library log records to `<root>/repl.log` (or drop them when the store is read-only)."""
    handler: logging.Handler
    try:
        handler = logging.FileHandler(root / REPL_LOG_NAME, encoding="utf-8", delay=True)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    except OSError:
        handler = logging.NullHandler()
    if not os.access(root, os.W_OK):
        handler = logging.NullHandler()
    logging.getLogger().addHandler(handler)


def _cmd_repl(args: argparse.Namespace) -> int:
    from sessionref.settings import build_model, load_settings
    from sessionref.workspace import Workspace

    from sessionref_tui.repl.app import LineMode

    store = open_cli_store(args)
    _route_diagnostics(store.root)
    try:
        settings = load_settings(os.environ, store_root=store.root)
        cwd = os.path.abspath(args.cwd) if args.cwd else os.getcwd()
        if args.session is not None:
            store.record(args.session)  # unknown id: a clear error before the prompt opens

        async def run() -> int:
            workspace = Workspace(store, build_model(settings), cwd=cwd, settings=settings)
            try:
                return await LineMode(workspace, session_id=args.session).run()
            finally:
                await workspace.close(close_store=False)

        return asyncio.run(run())
    finally:
        store.close()


@dataclass(frozen=True, slots=True)
class Vantage:
    """A pseudo-agent for `list_candidates`: no session of its own (none is excluded), just a cwd."""

    id: str
    cwd: str | None


async def _candidates(store: SessionStore, query: str, limit: int, cwd: str | None) -> list[Any]:
    from sessionref.references import SessionReferences

    # The very call the @ completion makes, so the ranking is the same.
    return await SessionReferences(store).list_candidates(Vantage(id="", cwd=cwd), query, limit)


def _cmd_sessions(args: argparse.Namespace) -> int:
    store = open_cli_store(args)
    try:
        cwd = os.path.abspath(args.cwd) if args.cwd else os.getcwd()
        found = asyncio.run(_candidates(store, args.query, args.limit, cwd))
    finally:
        store.close()
    if args.json:
        print(safe_json([candidate.to_json(with_mention=True) for candidate in found]))
        return EXIT_OK
    if not found:
        print("no matching sessions", file=sys.stderr)
        return EXIT_OK
    now = _now_ms()
    print(f"{'TITLE':<36}  {'ID':<36}  {'AGE':>8}  CWD (● = {truncate_middle(inert(cwd), 40)})")
    for candidate in found:
        label = truncate_end(inert(candidate.label), 36)
        session_id = truncate_end(inert(candidate.session_id), 36)
        here = "●" if candidate.same_workspace else " "
        place = "(no cwd)" if candidate.cwd is None else truncate_middle(inert(candidate.cwd), 50)
        age = relative_age(candidate.created_at, now)
        print(f"{label:<36}  {session_id:<36}  {age:>8}  {here} {place}")
    return EXIT_OK


def _cmd_show(args: argparse.Namespace) -> int:
    from sessionref.projection import project_session_conversation

    store = open_cli_store(args)
    try:
        snapshot = asyncio.run(store.read_surface(args.session_id))
        title = store.title(args.session_id)
    finally:
        store.close()
    header = snapshot["session"]
    items = project_session_conversation(snapshot)
    if args.json:
        print(safe_json({
            "sessionId": header.get("id", args.session_id),
            "title": title,
            "cwd": header.get("cwd"),
            "createdAt": header.get("createdAt"),
            "capturedThroughSeq": snapshot.get("capturedThroughSeq"),
            "conversation": [{"role": item.role, "text": item.text, "checkpoint": item.checkpoint}
                             for item in items],
        }))
        return EXIT_OK
    print(f"# {inert(title or args.session_id)}")
    print(f"id:      {inert(str(header.get('id', args.session_id)))}")
    print(f"cwd:     {inert(str(header['cwd'])) if header.get('cwd') is not None else '(no cwd)'}")
    if isinstance(header.get("createdAt"), int):
        print(f"created: {_iso(header['createdAt'])}")
    print(f"through: seq {snapshot.get('capturedThroughSeq')}")
    if not items:
        print("\n(no messages)")
    for item in items:
        who = "checkpoint" if item.checkpoint else ("you" if item.role == "user" else "assistant")
        print(f"\n{who} ›")
        print(inert_block(item.text))
    return EXIT_OK


def _cmd_mention(args: argparse.Namespace) -> int:
    from sessionref.uri import SessionReference, format_session_reference_mention

    store = open_cli_store(args)
    try:
        store.record(args.session_id)
        label = args.label if args.label is not None else (store.title(args.session_id) or args.session_id)
    finally:
        store.close()
    # The label is what readers see (made inert, as in the completion menu); the URI keeps the raw id.
    mention = format_session_reference_mention(SessionReference(args.session_id, inert(label)))
    if args.json:
        print(safe_json({"sessionId": args.session_id, "label": inert(label), "mention": mention}))
    else:
        print(mention)
    return EXIT_OK


def _cmd_prepare(args: argparse.Namespace) -> int:
    from sessionref.settings import build_model, load_settings
    from sessionref.workspace import Workspace

    store = open_cli_store(args)
    try:
        store.record(args.session)
        settings = load_settings(os.environ, store_root=store.root)

        async def run() -> Any:
            workspace = Workspace(store, build_model(settings), cwd=None, settings=settings)
            try:
                return await workspace.references.prepare_text(workspace.agent(args.session), args.text)
            finally:
                await workspace.close(close_store=False)

        prepared = asyncio.run(run())
    finally:
        store.close()
    content = list(prepared.content)
    context = prepared.additional_context
    if args.json:
        print(safe_json({"content": content, "additionalContext": context}))
        return EXIT_OK
    readable = "\n".join(block.get("text", "") for block in content if block.get("type") == "text")
    print(inert_block(readable))
    print()
    if context is None:
        print("(no context message: the text mentions no session)")
    else:
        print(f"--- context message (placement: {settings.placement}) ---")
        print(safe_json(context))
    return EXIT_OK


HANDLERS: Final[dict[str, Callable[[argparse.Namespace], int]]] = {
    "chat": _cmd_chat,
    "demo": _cmd_demo,
    "repl": _cmd_repl,
    "sessions": _cmd_sessions,
    "show": _cmd_show,
    "mention": _cmd_mention,
    "prepare": _cmd_prepare,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run `sessionref` with `argv` (default: the process arguments); returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    try:
        return HANDLERS[args.command](args)
    except KeyboardInterrupt:
        print("sessionref: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # every failure is reported as code + message, never a traceback
        return _report(args, *error_parts(error))


if __name__ == "__main__":
    sys.exit(main())
