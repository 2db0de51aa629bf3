"""The `sessionref` command: the chat apps, and scriptable access to sessions and references.

Exit codes: 0 ok, 1 the operation failed (code and message on stderr; with `--json` also a
`{"error": {"code", "message"}}` object on stdout), 2 usage, 141 the reader of the output went
away (`| head`; nothing is printed). Nothing here prints a traceback: our error types become
code + message, and anything unexpected is reported as `INTERNAL_ERROR`. Everything printed from
data (titles, ids, cwds, message text) is made inert first, and error messages are bounded.

Modules: `parser` (arguments and help), `entry` (`main`), `output` (printing), `store_access`
(which store, created or not), `data_commands` (`sessions`, `show`, `mention`), `search_command`,
`prepare_command`, `app_commands` (`chat`, `demo`, `repl`).
"""

from sessionref_tui.cli.entry import HANDLERS, main
from sessionref_tui.cli.output import (
    EXIT_CLOSED_PIPE,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    inert_block,
    safe_json,
)
from sessionref_tui.cli.parser import build_parser, package_version
from sessionref_tui.cli.store_access import (
    CLI_STORE_NOT_CREATED,
    CLI_STORE_NOT_FOUND,
    LARGE_STORE_SESSIONS,
    CliError,
    progress_printer,
)

__all__ = [
    "CLI_STORE_NOT_CREATED",
    "CLI_STORE_NOT_FOUND",
    "EXIT_CLOSED_PIPE",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "HANDLERS",
    "LARGE_STORE_SESSIONS",
    "CliError",
    "build_parser",
    "inert_block",
    "main",
    "package_version",
    "progress_printer",
    "safe_json",
]
