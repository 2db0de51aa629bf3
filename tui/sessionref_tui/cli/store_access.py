"""Which store a command uses, and what happens when its directory does not exist yet.

Commands that only read (`sessions`, `search`, `show`, `mention`, `prepare`, `snapshot`) never create a
store. When the default store does not exist yet but other agents' histories are read, they read those
through an empty stand-in store in the user cache directory (`reading_stand_in`), where the discovery
index of those histories then lives; otherwise a missing directory is `CLI_STORE_NOT_FOUND` with a
hint. The chat commands (`chat`, `repl`) create a missing store directory and say so on stderr,
whether it is the default store or one named by `--store`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from sessionref.contract.errors import CodedError, InternalErrorLog

from sessionref_tui.cli.output import note
from sessionref_tui.errors import CliCode

if TYPE_CHECKING:
    from sessionref.host.settings import Settings
    from sessionref.host.sources import SourceStatus
    from sessionref.store import SessionStore
    from sessionref.store.foreign_state import ForeignRoot

CLI_STORE_NOT_FOUND: Final = CliCode.STORE_NOT_FOUND
CLI_STORE_NOT_CREATED: Final = CliCode.STORE_NOT_CREATED

LARGE_STORE_SESSIONS: Final = 500
"""First-time indexing of at least this many sessions prints progress on stderr."""

INDEX_MAX_AGE_SECONDS: Final = 60
"""`sessions` answers from the discovery index alone while the last walk over the logs (by any
sessionref process) is at most this old; past it, it opens the store, which catches up first.

The trade-off: what sessionref itself writes is in the index at once, but a session another
program (DSH) creates, renames or continues may show up to this many seconds late. Scripts that
call `sessionref sessions` in a loop pay for one catch-up per minute, not one per call;
`sessions --fresh` always catches up."""


class CliError(CodedError):
    """A failure the CLI reports with a stable code."""


def store_root(args: argparse.Namespace) -> Path:
    """The directory named by `--store`, else the default store (`$SESSIONREF_HOME` or the data dir)."""
    if args.store is not None:
        return Path(args.store).expanduser()
    from sessionref.host.settings import default_store_root

    return default_store_root()


WRITING_COMMANDS: Final = frozenset({"chat", "repl", "demo"})
"""The commands that write a store; every other command only reads one (and its index)."""


def internal_error_log(args: argparse.Namespace) -> InternalErrorLog | None:
    """Where an unexpected error of this command keeps its traceback: for a command that only reads,
    the user's state folder (it writes nothing into the store but the index); else the command's
    store, or the default store (`demo` has no `--store`); None when not even that can be named."""
    from sessionref.host.internal_errors import StoreInternalErrorLog, user_state_error_log

    if getattr(args, "command", None) not in WRITING_COMMANDS:
        return user_state_error_log()
    try:
        root = store_root(args) if hasattr(args, "store") else store_root(argparse.Namespace(store=None))
    except Exception:  # e.g. no home directory: the message then says the traceback was not kept
        return None
    return StoreInternalErrorLog(root)


def progress_printer(
    *, threshold: int = LARGE_STORE_SESSIONS, what: str = "indexing sessions"
) -> Callable[[int, int | None], None]:
    """A `progress(done, total)` callback printing `what: done/total (percent)` on stderr, at most once
    per percent.

    Stays silent when fewer than `threshold` sessions are being indexed, or the total is not known.
    """
    last = -1

    def progress(done: int, total: int | None) -> None:
        nonlocal last
        if total is None or total < threshold:
            return
        percent = 100 if total <= 0 else done * 100 // total
        if percent == last:
            return
        last = percent
        end = "\n" if done >= total else ""
        print(f"\r{what}: {done}/{total} ({percent}%)", end=end, file=sys.stderr, flush=True)

    return progress


STAND_IN_FOLDER: Final = "without-a-store"
"""The folder, in the user cache directory, of the empty store read-only commands read other agents'
histories through while the default store does not exist yet."""


def reading_stand_in() -> Path:
    """The stand-in store of read-only commands (see the module docstring); a cache, never a store
    anyone writes to: created here when missing."""
    import platformdirs

    root = platformdirs.user_cache_path("sessionref") / STAND_IN_FOLDER
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        reason = error.strerror or str(error)
        raise CliError(CLI_STORE_NOT_FOUND, f"cannot create the cache folder {root}: {reason}") from None
    return root


def existing_store_root(args: argparse.Namespace) -> Path:
    """The store directory a read-only command reads: the store named or the default one; when the
    default one does not exist yet and other agents' histories are on, the stand-in in the cache
    directory; else `CLI_STORE_NOT_FOUND` (with a hint). Never creates the store itself."""
    root = store_root(args)
    if root.exists():
        return root
    if args.store is None and command_roots(args, command_settings(root)):
        return reading_stand_in()
    raise CliError(
        CLI_STORE_NOT_FOUND,
        f"there is no session store at {root} yet; `sessionref chat` or `sessionref repl` "
        "creates it when it starts (or pass --store DIR to read another one)",
    )


def created_store_root(args: argparse.Namespace) -> Path:
    """The store directory of a chat command, created (with a note on stderr) when it is missing."""
    root = store_root(args)
    if root.exists():
        return root
    try:
        root.mkdir(parents=True)
    except FileExistsError:
        return root  # another process created it meanwhile
    except OSError as error:
        reason = error.strerror or str(error)
        message = f"cannot create the store directory {root}: {reason}"
        raise CliError(CLI_STORE_NOT_CREATED, message) from None
    note(f"created a new session store at {root}")
    return root


def command_settings(root: Path) -> Settings:
    """The settings of a command on the store at `root` (its `config.toml`, then the environment)."""
    import os

    from sessionref.host.settings import load_settings

    return load_settings(os.environ, store_root=root)


def command_sources(args: argparse.Namespace, settings: Settings) -> list[SourceStatus]:
    """Every other agent's source as this command sees it: settings, then its `--sources` option."""
    from sessionref.host.sources import resolve_sources

    return resolve_sources(settings, selection=getattr(args, "sources", None))


def command_roots(args: argparse.Namespace, settings: Settings) -> list[ForeignRoot]:
    """The roots of the sources this command reads (see `command_sources`)."""
    from sessionref.host.sources import enabled_roots

    return enabled_roots(command_sources(args, settings))


def open_cli_store(
    args: argparse.Namespace, *, create: bool = False, settings: Settings | None = None
) -> SessionStore:
    """Open the command's store (created first when `create`), printing indexing progress on stderr.

    It reads the other agents' sources that are on (`[sources]`, `SESSIONREF_SOURCES`, `--sources`).
    """
    from sessionref.store import open_store

    root = created_store_root(args) if create else existing_store_root(args)
    chosen = settings if settings is not None else command_settings(root)
    return open_store(root, progress=progress_printer(), sources=command_roots(args, chosen))
