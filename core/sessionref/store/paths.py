"""Files below the store root, reached without following symbolic links.

Every session file lives at `<root>/<project>/<session>/<name>`. A relative path (from the walk
or from an index row) is checked for that shape before it is used, and a session folder is
entered one component at a time with `O_NOFOLLOW`, relative to the directory above it
(`openat`), so neither a symlink planted in the root nor a folder swapped for one while we work
can make the store read or write outside the root. The root itself may be a symlink: the user
chose it. Symlinks below the root are never followed, even ones that point back inside it (they
would only list a session twice); they are refused with `STORE_UNSAFE_PATH`.

Where the platform cannot open relative to a directory (Windows), every component is checked
with `lstat` (symlinks and junctions refused) before the path is opened. The check and the open
are then two steps, so a swap in between is not excluded on those platforms.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Sequence
from types import TracebackType

from sessionref.store.errors import STORE_UNREADABLE, STORE_UNSAFE_PATH, StoreError
from sessionref.store.layout import LOG_NAME, ZSTD_LOG_NAME

LOG_NAMES = frozenset({LOG_NAME, ZSTD_LOG_NAME})
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# A FIFO named like a log must not hang a reader; regular files ignore O_NONBLOCK.
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
HAS_DIR_FD = bool(_O_NOFOLLOW and _O_DIRECTORY and os.open in os.supports_dir_fd)
_LINK_ERRNOS = frozenset({errno.ELOOP, getattr(errno, "EMLINK", errno.ELOOP)})
_REPARSE_POINT = getattr(stat, "FILE_ATTRIBUTE_REPARSE_POINT", 0x400)
_PREAD = getattr(os, "pread", None)
_LOG_SUFFIXES = tuple(f"/{name}" for name in sorted(LOG_NAMES))


def _has_forbidden(text: str) -> bool:
    """NUL anywhere, and on Windows a backslash or colon: never part of a folder name we enter."""
    if "\x00" in text:
        return True
    return os.name == "nt" and ("\\" in text or ":" in text)


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a name that is not valid UTF-8 on disk (surrogate-escaped)
        return False
    return True


def valid_segment(name: str) -> bool:
    """Whether the store enters a folder of this name: not hidden, not `.`/`..`, UTF-8, no separator."""
    return name != "" and name[0] != "." and "/" not in name and not _has_forbidden(name) and _is_utf8(name)


def log_path_shape(relative: str) -> bool:
    """Whether `relative` reads `<project>/<session>/session.jsonl[.zstd]` with names the store enters.

    Plain string tests (this runs for every index row when a store opens); UTF-8 is not checked.
    """
    return (
        relative.count("/") == 2
        and relative.endswith(_LOG_SUFFIXES)
        and relative[0] not in "./"
        and "/." not in relative
        and "//" not in relative
        and not _has_forbidden(relative)
    )


def checked_log_path(relative: object) -> str | None:
    """`relative` when it is `<project>/<session>/session.jsonl[.zstd]` with valid folder names, else None."""
    if not isinstance(relative, str) or not log_path_shape(relative) or not _is_utf8(relative):
        return None
    return relative


def is_link(status: os.stat_result) -> bool:
    """True for a symbolic link, or a junction / other reparse point on Windows."""
    return stat.S_ISLNK(status.st_mode) or bool(getattr(status, "st_file_attributes", 0) & _REPARSE_POINT)


def unsafe_path(where: str) -> StoreError:
    """The error for a symbolic link (or other way out of the root) met at `where`."""
    return StoreError(
        STORE_UNSAFE_PATH,
        f"{where} is a symbolic link; sessionref does not follow links below the store root",
    )


def _regular(fd: int, where: str) -> int:
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StoreError(STORE_UNREADABLE, f"{where} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_log_nofollow(path: str) -> int:
    """Open the log at `path` for reading, refusing a symlink as its last component or a non-file.

    The walk uses this: the folders above were listed without following links a moment ago.
    """
    if not _O_NOFOLLOW and is_link(os.lstat(path)):
        raise unsafe_path(path)
    try:
        fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY)
    except OSError as error:
        if error.errno in _LINK_ERRNOS:
            raise unsafe_path(path) from None
        raise
    return _regular(fd, path)


class Folder:
    """A folder below the root, entered without following links; files are opened relative to it.

    Use as a context manager. `create=True` makes missing folders (mode 0o755). Raises
    `StoreError(STORE_UNSAFE_PATH)` for a link on the way, `FileNotFoundError` for a missing folder.
    """

    def __init__(self, root: str, parts: Sequence[str], *, create: bool = False) -> None:
        self.path = os.path.join(root, *parts)
        self._fd: int | None = None
        if HAS_DIR_FD:
            self._fd = self._open_chain(root, parts, create)
        else:
            self._check_chain(root, parts, create)

    @staticmethod
    def _open_chain(root: str, parts: Sequence[str], create: bool) -> int:
        flags = os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC
        fd = os.open(root, flags)
        where = root
        try:
            for part in parts:
                where = os.path.join(where, part)
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o755, dir_fd=fd)
                try:
                    child = os.open(part, flags | _O_NOFOLLOW, dir_fd=fd)
                except OSError as error:
                    if error.errno not in _LINK_ERRNOS and error.errno != errno.ENOTDIR:
                        raise
                    # Linux answers ENOTDIR, others ELOOP, for a link opened as a folder.
                    try:
                        status = os.stat(part, dir_fd=fd, follow_symlinks=False)
                    except OSError:
                        raise FileNotFoundError(errno.ENOENT, "not a folder", where) from None
                    if is_link(status):
                        raise unsafe_path(where) from None
                    raise FileNotFoundError(errno.ENOENT, "not a folder", where) from None
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    @staticmethod
    def _check_chain(root: str, parts: Sequence[str], create: bool) -> None:
        where = root
        for part in parts:
            where = os.path.join(where, part)
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(where, 0o755)
            status = os.lstat(where)
            if is_link(status):
                raise unsafe_path(where)
            if not stat.S_ISDIR(status.st_mode):
                raise FileNotFoundError(errno.ENOENT, "not a folder", where)

    def __enter__(self) -> Folder:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the folder (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def open(self, name: str, flags: int, mode: int = 0o644) -> int:
        """A file descriptor for `name` in this folder; a link or a non-regular file is refused."""
        where = os.path.join(self.path, name)
        flags |= _O_NONBLOCK | _O_CLOEXEC | _O_BINARY
        try:
            if self._fd is not None:
                fd = os.open(name, flags | _O_NOFOLLOW, mode, dir_fd=self._fd)
            else:
                try:
                    if is_link(os.lstat(where)):
                        raise unsafe_path(where)
                except FileNotFoundError:
                    if not flags & os.O_CREAT:
                        raise
                fd = os.open(where, flags, mode)
        except OSError as error:
            if error.errno in _LINK_ERRNOS:
                raise unsafe_path(where) from None
            raise
        return _regular(fd, where)

    def _lstat(self, name: str) -> os.stat_result:
        """The status of `name` in this folder, not following a link."""
        if self._fd is not None:
            return os.stat(name, dir_fd=self._fd, follow_symlinks=False)
        return os.lstat(os.path.join(self.path, name))

    def exists(self, name: str) -> bool:
        """Whether `name` is a regular file (not a link) in this folder."""
        try:
            status = self._lstat(name)
        except OSError:
            return False
        return stat.S_ISREG(status.st_mode)

    def inode(self, name: str) -> tuple[int, int] | None:
        """(device, inode) of `name` in this folder without following a link; None if it is gone."""
        try:
            status = self._lstat(name)
        except FileNotFoundError:
            return None
        return status.st_dev, status.st_ino

    def unlink(self, name: str) -> None:
        """Remove `name` from this folder if it is there."""
        try:
            if self._fd is not None:
                os.unlink(name, dir_fd=self._fd)
            else:
                os.unlink(os.path.join(self.path, name))
        except FileNotFoundError:
            pass

    def link(self, existing: str, new: str) -> None:
        """Give the file `existing` in this folder a second name `new`; FileExistsError if `new` is taken.

        A hard link never replaces anything. Where links are unsupported, `new` is reserved with an
        exclusive create and `existing` is renamed over the reservation.
        """
        try:
            if self._fd is not None:
                os.link(existing, new, src_dir_fd=self._fd, dst_dir_fd=self._fd, follow_symlinks=False)
            else:
                source, target = os.path.join(self.path, existing), os.path.join(self.path, new)
                os.link(source, target, follow_symlinks=False)
            return
        except FileExistsError:
            raise
        except (OSError, NotImplementedError):
            pass
        os.close(self.open(new, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        if self._fd is not None:
            os.replace(existing, new, src_dir_fd=self._fd, dst_dir_fd=self._fd)
        else:
            os.replace(os.path.join(self.path, existing), os.path.join(self.path, new))

    def remove_folder(self, name: str) -> bool:
        """Remove the empty folder `name` inside this one (never through a link); False if it stays."""
        try:
            if self._fd is not None:
                os.rmdir(name, dir_fd=self._fd)
            else:
                where = os.path.join(self.path, name)
                if is_link(os.lstat(where)):
                    return False
                os.rmdir(where)
        except OSError:
            return False
        return True

    def fsync(self) -> None:
        """Make the folder's entries durable (best effort; not every platform can)."""
        try:
            if self._fd is not None:
                os.fsync(self._fd)
                return
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


def read_fd(fd: int) -> bytes:
    """Everything from the current position of `fd` to its end."""
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def pread_exact(fd: int, size: int, offset: int) -> bytes:
    """`size` bytes of `fd` from `offset` (fewer only at the end of the file)."""
    parts: list[bytes] = []
    while size > 0:
        if _PREAD is not None:
            chunk = _PREAD(fd, size, offset)
        else:  # pragma: no cover - Windows has no pread
            os.lseek(fd, offset, os.SEEK_SET)
            chunk = os.read(fd, size)
        if not chunk:
            break
        parts.append(chunk)
        size -= len(chunk)
        offset += len(chunk)
    return b"".join(parts)


def open_in_root(root: str, name: str, flags: int, mode: int = 0o644) -> int:
    """A file descriptor for the file `name` directly in the store root, opened as `Folder.open` does.

    A symbolic link (dangling or not), a FIFO or any other non-regular file named `name` is
    refused (`STORE_UNSAFE_PATH` / `STORE_UNREADABLE`), so a history or diagnostic log the store
    keeps beside its sessions is never written through a link to somewhere else.
    """
    with Folder(root, ()) as folder:
        return folder.open(name, flags, mode)
