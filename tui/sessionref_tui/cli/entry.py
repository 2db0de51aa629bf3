"""`main`: parse the arguments, run one subcommand, turn every failure into a code and an exit status."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Final

from sessionref.contract.errors import describe_error

from sessionref_tui.cli.app_commands import cmd_chat, cmd_demo, cmd_repl
from sessionref_tui.cli.catalog_command import cmd_catalog
from sessionref_tui.cli.data_commands import cmd_mention, cmd_sessions, cmd_show
from sessionref_tui.cli.mcp_command import cmd_mcp
from sessionref_tui.cli.output import EXIT_USAGE, finish_output, quiet_after_closed_pipe, report_error
from sessionref_tui.cli.parser import build_parser
from sessionref_tui.cli.prepare_command import cmd_prepare
from sessionref_tui.cli.search_command import cmd_search
from sessionref_tui.cli.source_commands import cmd_snapshot, cmd_sources
from sessionref_tui.cli.store_access import internal_error_log

EXIT_INTERRUPTED: Final = 130

HANDLERS: Final[dict[str, Callable[[argparse.Namespace], int]]] = {
    "chat": cmd_chat,
    "demo": cmd_demo,
    "repl": cmd_repl,
    "sessions": cmd_sessions,
    "show": cmd_show,
    "mention": cmd_mention,
    "prepare": cmd_prepare,
    "snapshot": cmd_snapshot,
    "sources": cmd_sources,
    "search": cmd_search,
    "mcp": cmd_mcp,
    "catalog": cmd_catalog,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run `sessionref` with `argv` (default: the process arguments); returns the exit status.

    A reader that goes away (`| head`) ends the command quietly with status 141.
    """
    try:
        status = _run(argv)
        finish_output()
        return status
    except BrokenPipeError:
        return quiet_after_closed_pipe()


SEARCH_VALUE_OPTIONS = frozenset({"--limit", "--cwd", "--store", "--sources"})
"""The options of `search` that take a value (parser.py); with `--json` and `-h`/`--help`, all it has."""
SEARCH_FLAGS = frozenset({"--json", "-h", "--help"})


def dashed_search_text(argv: Sequence[str]) -> list[str]:
    """`search -retry`: a search text that starts with "-" and is no option of `search` is its TEXT.

    argparse would read it as an unknown option (a usage error); it is moved after `--` instead,
    so `sessionref search -retry --json` finds "-retry". Any other command line is left as it is.
    """
    args = list(argv)
    if not args or args[0] != "search" or "--" in args:
        return args
    kept, texts, index = [args[0]], list[str](), 1
    while index < len(args):
        arg = args[index]
        name = arg.split("=", 1)[0]
        if name in SEARCH_VALUE_OPTIONS:
            takes_next = "=" not in arg
            kept.extend(args[index : index + (2 if takes_next else 1)])
            index += 2 if takes_next else 1
            continue
        if arg in SEARCH_FLAGS or not arg.startswith("-") or arg == "-":
            (kept if arg in SEARCH_FLAGS else texts).append(arg)
        else:
            texts.append(arg)
        index += 1
    if len(texts) != 1 or not texts[0].startswith("-"):
        return args
    return [*kept, "--", texts[0]]


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(dashed_search_text(sys.argv[1:] if argv is None else argv))
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    try:
        return HANDLERS[args.command](args)
    except KeyboardInterrupt:
        print("sessionref: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        raise  # not a failure of the command: main ends quietly
    except Exception as error:  # every failure is reported as code + message, never a traceback
        code, message = describe_error(error, internal_error_log(args))
        return report_error(code, message, as_json=bool(getattr(args, "json", False)))
