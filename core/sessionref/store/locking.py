"""The cross-process write lock of one session, and the mark of sessions sessionref created.

Every session sessionref creates gets a lock file, `.sessionref.lock`, in its folder, created
(exclusively) together with the log. It is two things at once:

* **the mark of ownership**: a session folder holding it was created by sessionref and may be
  appended to; a session without it belongs to another program (DSH) and is read-only (the
  store's `write_foreign` switch is for callers that know nobody else writes it; no host sets it);
* **the lock**: every append, repair and delete holds an exclusive OS advisory lock on it.

Why a separate lock file rather than the log itself: readers never open it, so a lock never
blocks a reader (on Windows, `msvcrt.locking` locks are mandatory and would block reads of a
locked log), and replacing or truncating the log can never drop the lock. Sessions of another
program (when the opt-in allows writing them) are locked through a file of ours instead,
`<root>/.sessionref-locks/<hash of the folder>.lock`, so nothing is added to their folders.

Platforms: POSIX uses `fcntl.flock` (released by the kernel when the process dies, even on
`kill -9`); Windows uses `msvcrt.locking` on the first byte of the lock file (also released with
the process). Where neither exists, writers of one process are still serialised but two
processes are not: then the store relies on appends being single `O_APPEND` writes of whole
lines and on the next seq being taken from the log's tail just before writing, which keeps every
line whole but may give two writers the same seq (a reader then skips the later line and
counts it). A lock wait is polled with `fcntl`'s non-blocking form so it can time out
(`LOCK_TIMEOUT_SECONDS`, then `STORE_LOCK_TIMEOUT`) instead of hanging on a stopped process.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from types import TracebackType

from sessionref.store.errors import STORE_LOCK_TIMEOUT, STORE_SESSION_NOT_FOUND, StoreError
from sessionref.store.paths import Folder

try:  # POSIX
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - Windows
    _fcntl = None  # type: ignore[assignment]
try:  # Windows
    import msvcrt as _msvcrt  # type: ignore[import-not-found,unused-ignore]
except ImportError:
    _msvcrt = None  # type: ignore[assignment,unused-ignore]

log = logging.getLogger("sessionref.store")

LOCK_FILE_NAME = ".sessionref.lock"
FOREIGN_LOCK_DIR = ".sessionref-locks"
LOCK_TIMEOUT_SECONDS = 10.0
"""How long a writer waits for another process's append (normally milliseconds) before giving up."""
_FIRST_RETRY_SECONDS = 0.001
_LONGEST_RETRY_SECONDS = 0.02
OWNER_NOTE = b"sessionref: this session was created by sessionref; writers lock this file.\n"


def lock_backend() -> str:
    """Which inter-process lock this platform gets: `flock`, `msvcrt` or `none`."""
    if _fcntl is not None:
        return "flock"
    if _msvcrt is not None:
        return "msvcrt"
    return "none"


def _try_lock(fd: int) -> bool:
    if _fcntl is not None:
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    if _msvcrt is not None:  # pragma: no cover - Windows
        os.lseek(fd, 0, os.SEEK_SET)
        try:
            _msvcrt.locking(fd, _msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    return True  # pragma: no cover - no inter-process lock on this platform (see the module doc)


def _unlock(fd: int) -> None:
    if _fcntl is not None:
        _fcntl.flock(fd, _fcntl.LOCK_UN)
    elif _msvcrt is not None:  # pragma: no cover - Windows
        os.lseek(fd, 0, os.SEEK_SET)
        _msvcrt.locking(fd, _msvcrt.LK_UNLCK, 1)


def foreign_lock_name(folder: str) -> str:
    """The lock file name (in `<root>/.sessionref-locks`) for another program's folder `project/session`."""
    digest = hashlib.sha256(folder.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{digest}.lock"


class SessionLock:
    """An exclusive lock on one lock file, held while a `with` block runs.

    `folder` is the opened folder holding the lock file `name`. With `must_exist` (a session's
    own lock) a missing file means the session is gone: `STORE_SESSION_NOT_FOUND`. After the lock
    is taken it is checked to still be the file at that name (a delete may have unlinked it
    meanwhile), so a writer never appends under a lock nobody else can see.
    """

    def __init__(self, folder: Folder, name: str, *, must_exist: bool, timeout: float | None = None) -> None:
        self._folder = folder
        self._name = name
        self._must_exist = must_exist
        self._timeout = LOCK_TIMEOUT_SECONDS if timeout is None else timeout
        self._fd: int | None = None

    def __enter__(self) -> SessionLock:
        deadline = time.monotonic() + self._timeout
        delay = _FIRST_RETRY_SECONDS
        while True:
            fd = self._open()
            try:
                while not _try_lock(fd):
                    if time.monotonic() >= deadline:
                        raise StoreError(
                            STORE_LOCK_TIMEOUT,
                            "another sessionref process kept this session locked for more than "
                            f"{self._timeout:g} s; try again",
                        )
                    time.sleep(delay)
                    delay = min(delay * 2, _LONGEST_RETRY_SECONDS)
                if self._folder.inode(self._name) == _identity(fd):
                    self._fd = fd
                    return self
                _unlock(fd)
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)  # the file was replaced or removed while we waited: lock the current one
            if self._must_exist and self._folder.inode(self._name) is None:
                raise StoreError(STORE_SESSION_NOT_FOUND, "the session was deleted meanwhile")

    def _open(self) -> int:
        flags = os.O_RDWR if self._must_exist else os.O_RDWR | os.O_CREAT
        try:
            return self._folder.open(self._name, flags, 0o644)
        except FileNotFoundError:
            raise StoreError(STORE_SESSION_NOT_FOUND, "the session was deleted meanwhile") from None

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                _unlock(fd)
            finally:
                os.close(fd)


def _identity(fd: int) -> tuple[int, int]:
    status = os.fstat(fd)
    return status.st_dev, status.st_ino


if lock_backend() == "none":  # pragma: no cover - exotic platforms
    log.warning("no inter-process file lock on this platform: appends from two processes are not serialised")
