"""The user interfaces' stable error codes (every code of every layer: docs/errors.md)."""

from __future__ import annotations

from enum import StrEnum


class CliCode(StrEnum):
    """Codes of `sessionref_tui.cli.store_access.CliError`."""

    STORE_NOT_FOUND = "CLI_STORE_NOT_FOUND"
    """A read-only command was pointed at a store directory that does not exist."""
    STORE_NOT_CREATED = "CLI_STORE_NOT_CREATED"
    """A chat command could not create the missing store directory."""


class ReplCode(StrEnum):
    """Codes the line mode shows: a slash command's `CommandError`, or a turn ended with no code."""

    UNKNOWN_COMMAND = "REPL_UNKNOWN_COMMAND"
    NO_SESSION_YET = "REPL_NO_SESSION_YET"
    USAGE = "REPL_USAGE"
    NO_SUCH_SESSION = "REPL_NO_SUCH_SESSION"
    TURN_FAILED = "TURN_FAILED"
    """A logged turn ended in an error but its `turn/end` carries no `errorCode`."""
