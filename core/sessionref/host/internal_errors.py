"""The store's log of internal errors: where the traceback of a bug that reached a host is kept.

An unexpected exception (not a `CodedError`, not an `OSError`) is shown to a person as
`INTERNAL_ERROR` with one line saying what happened (`sessionref.contract.errors.describe_error`);
its traceback, which a bug report needs and a person should not have to read in the terminal,
is appended to `<store>/.sessionref-logs/internal-errors.log`, and the message names that file.
A command that only reads a store writes nothing there but the index (docs/reliability.md): its
log is `user_state_error_log()`, the same file layout in the user's state folder (platformdirs),
which is created for it when missing.

The file follows the store's own rules for files it owns (`sessionref.store.paths.Folder`): the
folder is entered without following a symbolic link, the file is opened with `O_NOFOLLOW` (a
link or a non-regular file in its place is refused), created private (0600) and only ever
appended to; its lines are inert (`sessionref.contract.terminal_text`). The folder is hidden, so
the store's walk never takes it for a project folder and nothing is added that another program
could read as a session. The store root itself is never created here: without a store there is
nowhere to write, and the message says so.

The log is bounded: an entry is cut to `ENTRY_CHARS` characters (head and tail kept), and when
an append would take the file past `LOG_MAX_BYTES` it is first renamed to
`internal-errors.log.1` (replacing the previous one), so at most two generations are kept.
Two processes rotating at the same moment may drop the older generation; no append is lost.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Final

from sessionref.contract.errors import CodedError
from sessionref.contract.excerpts import bounded_excerpt
from sessionref.contract.terminal_text import inert_lines
from sessionref.store.paths import Folder

LOG_FOLDER: Final = ".sessionref-logs"
"""The store-root folder of sessionref's own diagnostic logs (hidden: the walk never enters it)."""

LOG_NAME: Final = "internal-errors.log"
"""The file internal errors are appended to."""

ROTATED_NAME: Final = "internal-errors.log.1"
"""The previous generation, kept when the log is rotated."""

LOG_MAX_BYTES: Final = 1024 * 1024
"""The log is rotated before an append would take it past this size (two generations kept)."""

ENTRY_CHARS: Final = 32_768
"""At most this many characters of one traceback are written (head and tail kept)."""

_APPEND: Final = os.O_WRONLY | os.O_APPEND | os.O_CREAT
_MODE: Final = 0o600


def log_path(store_root: Path) -> Path:
    """Where the internal-error log of the store at `store_root` is."""
    return store_root / LOG_FOLDER / LOG_NAME


def format_entry(error: BaseException, now: float) -> bytes:
    """One log entry: a UTC timestamp line, the process id, then the bounded traceback, each line
    inert (people read this file in a terminal; an error's text may quote data)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    trace = inert_lines("".join(traceback.format_exception(error)))
    text = f"=== {stamp} pid {os.getpid()}\n{bounded_excerpt(trace, ENTRY_CHARS)}"
    if not text.endswith("\n"):
        text += "\n"
    return (text + "\n").encode("utf-8")


def append_entry(store_root: Path, entry: bytes, *, create_root: bool = False) -> Path:
    """Append `entry` to the store's internal-error log (rotating it first when full); returns its path.

    `create_root` makes a missing `store_root` (private, 0700) instead of refusing it. Raises
    `OSError` or the store's `STORE_UNSAFE_PATH` error when it cannot be written.
    """
    root = os.fspath(store_root)
    if create_root:
        os.makedirs(root, mode=0o700, exist_ok=True)
    if not os.path.isdir(root):
        raise FileNotFoundError(f"there is no store at {root}")
    with Folder(root, [LOG_FOLDER], create=True) as folder:
        fd = folder.open(LOG_NAME, _APPEND, _MODE)
        try:
            if os.fstat(fd).st_size + len(entry) > LOG_MAX_BYTES:
                os.close(fd)
                fd = -1
                _rotate(folder)
                fd = folder.open(LOG_NAME, _APPEND, _MODE)
            os.write(fd, entry)
        finally:
            if fd >= 0:
                os.close(fd)
    return log_path(store_root)


def _rotate(folder: Folder) -> None:
    """Make the full log the previous generation and start an empty one.

    When another process rotated first, its fresh log may already hold entries: it is left alone.
    """
    folder.unlink(ROTATED_NAME)
    try:
        folder.link(LOG_NAME, ROTATED_NAME)
    except (FileExistsError, FileNotFoundError):  # another process rotated first
        return
    folder.unlink(LOG_NAME)


class StoreInternalErrorLog:
    """An `InternalErrorLog` writing to the store at `store_root` (see the module docstring)."""

    def __init__(
        self, store_root: Path, *, clock: Callable[[], float] = time.time, create_root: bool = False
    ) -> None:
        self.store_root = store_root
        self._clock = clock
        self._create_root = create_root

    @property
    def path(self) -> Path:
        """The log file's path."""
        return log_path(self.store_root)

    def record(self, error: BaseException) -> str:
        """Append `error`'s traceback; returns `the traceback is in <path>`, or why it is not kept."""
        try:
            entry = format_entry(error, self._clock())
            path = append_entry(self.store_root, entry, create_root=self._create_root)
        except CodedError as failure:  # e.g. STORE_UNSAFE_PATH: a link where the folder should be
            return f"its traceback could not be saved ({failure.message})"
        except OSError as failure:
            return f"its traceback could not be saved ({failure.strerror or failure})"
        return f"the traceback is in {path}"


def user_state_error_log() -> StoreInternalErrorLog:
    """The internal-error log of commands that must not write the store: in the user's state folder."""
    import platformdirs

    return StoreInternalErrorLog(platformdirs.user_state_path("sessionref"), create_root=True)
