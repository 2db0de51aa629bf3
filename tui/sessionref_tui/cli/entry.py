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


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
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
