"""What the CLI prints: terminal-safe JSON, inert text blocks, bounded error reports, a closed pipe.

Every message the CLI prints about a failure goes through :func:`report_error`: the message is cut
to a bounded excerpt (a 10 MB argument never becomes a 10 MB line) and made inert.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Final, TextIO

from sessionref.contract.excerpts import MESSAGE_CHARS, bounded_excerpt
from sessionref.contract.terminal_text import inert, inert_lines, terminal_safe_json

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_CLOSED_PIPE: Final = 141
"""Exit status when the reader of our output went away (``| head``): 128 + SIGPIPE, what a shell
reports for ``cat`` or ``git`` in the same place, so ``set -o pipefail`` scripts can tell the output
was cut. Nothing is printed about it."""


def safe_json(value: Any, *, indent: int | None = 2, compact: bool = False) -> str:
    """JSON text safe in a terminal (`sessionref.contract.terminal_text.terminal_safe_json`)."""
    return terminal_safe_json(value, indent=indent, compact=compact)


def inert_block(text: str) -> str:
    """Multi-line text with each line made inert (line breaks kept)."""
    return inert_lines(text)


def bounded_message(message: str) -> str:
    """An error message as the CLI prints it: at most :data:`MESSAGE_CHARS` (head and tail kept)."""
    return bounded_excerpt(message, MESSAGE_CHARS)


def report_error(code: str, message: str, *, as_json: bool) -> int:
    """Print ``sessionref: CODE: message`` on stderr (and the JSON error object on stdout with
    ``as_json``), bounded and inert; returns :data:`EXIT_FAILED`."""
    code = bounded_excerpt(code, 100)
    message = bounded_message(message)
    print(f"sessionref: {inert(code)}: {inert(message)}", file=sys.stderr)
    if as_json:
        print(safe_json({"error": {"code": code, "message": message}}))
    return EXIT_FAILED


def note(message: str) -> None:
    """A one-line remark for the person at the terminal, on stderr (stdout stays data only), inert."""
    print(f"sessionref: {inert(bounded_message(message))}", file=sys.stderr)


def finish_output() -> None:
    """Flush stdout and stderr now, so a closed pipe surfaces here as ``BrokenPipeError``."""
    sys.stdout.flush()
    sys.stderr.flush()


def quiet_after_closed_pipe() -> int:
    """After ``BrokenPipeError``: point every stream that cannot be flushed at the null device, so
    nothing (no second traceback at interpreter exit) is printed; returns :data:`EXIT_CLOSED_PIPE`."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            _point_at_devnull(stream)
    return EXIT_CLOSED_PIPE


def _point_at_devnull(stream: TextIO) -> None:
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError):
        return  # not a real file (e.g. captured in tests): nothing will flush to a closed pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)
