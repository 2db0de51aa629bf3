"""The line mode's prompt history in the store root, opened the way the store opens its own files.

prompt_toolkit's `FileHistory` opens its file by name and follows a symbolic link, so a
`repl-history` link would receive what the user types wherever it points. `StoreHistory` keeps
the same file format (an entry is a `# <time>` line followed by its lines, each prefixed `+`)
but opens the file through `sessionref.store.paths.open_in_root`: never through a link, only a
regular file, non-blocking (a FIFO in its place does not hang the prompt). A history that cannot
be read loads as empty; an entry that cannot be written is dropped (logged), never an error.
"""

from __future__ import annotations

import datetime
import logging
import os
from collections.abc import Iterable

from prompt_toolkit.history import History
from sessionref.contract.errors import CodedError
from sessionref.store.paths import open_in_root, read_fd

logger = logging.getLogger(__name__)

MAX_HISTORY_BYTES = 4 * 1024 * 1024
"""At most this much of the history file is loaded (its newest part); older entries stay on disk."""


def parse_history(text: str) -> list[str]:
    """The entries of a history file's text, oldest first."""
    entries: list[str] = []
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("+"):
            lines.append(line[1:])
        elif lines:
            entries.append("\n".join(lines))
            lines = []
    if lines:
        entries.append("\n".join(lines))
    return entries


def format_entry(entry: str, now: datetime.datetime) -> str:
    """One entry as it is appended to the file."""
    body = "".join(f"+{line}\n" for line in entry.split("\n"))
    return f"\n# {now.isoformat(sep=' ', timespec='seconds')}\n{body}"


class StoreHistory(History):
    """A prompt history kept in the file `name` of the store `root` (see the module docstring)."""

    def __init__(self, root: str, name: str) -> None:
        super().__init__()
        self.root = root
        self.name = name

    def load_history_strings(self) -> Iterable[str]:
        """The stored entries, newest first (what prompt_toolkit expects)."""
        try:
            fd = open_in_root(self.root, self.name, os.O_RDONLY)
        except (OSError, CodedError) as error:
            if not isinstance(error, FileNotFoundError):
                logger.warning("not loading the prompt history %s: %s", self.name, error)
            return []
        try:
            size = os.fstat(fd).st_size
            if size > MAX_HISTORY_BYTES:
                os.lseek(fd, size - MAX_HISTORY_BYTES, os.SEEK_SET)
            data = read_fd(fd)
        except OSError as error:
            logger.warning("not loading the prompt history %s: %s", self.name, error)
            return []
        finally:
            os.close(fd)
        return list(reversed(parse_history(data.decode("utf-8", "replace"))))

    def store_string(self, string: str) -> None:
        """Append one entry to the file (dropped, with a log line, when it cannot be written)."""
        entry = format_entry(string, datetime.datetime.now()).encode("utf-8", "surrogateescape")
        try:
            fd = open_in_root(self.root, self.name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except (OSError, CodedError) as error:
            logger.warning("not saving to the prompt history %s: %s", self.name, error)
            return
        try:
            os.write(fd, entry)
        except OSError as error:
            logger.warning("not saving to the prompt history %s: %s", self.name, error)
        finally:
            os.close(fd)
