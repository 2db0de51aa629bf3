"""Saving full transcripts as files under the store root (a `SpillStore` for the reference service).

`<root>/spill/<encoded target id>/<name>`: every folder on the way is entered without following a
link (a `spill` folder that is a symlink out of the root is refused), files are written to a
temporary name, made durable, then linked into place without ever replacing an existing file.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from pathlib import Path

from sessionref.contract.omissions import SpillOwner, SpillRef, SpillSource
from sessionref.store.layout import SAFE_SEGMENT_CHARS, encode_session_segment
from sessionref.store.paths import Folder

SPILL_FOLDER = "spill"


def encode_path_segment(session_id: str) -> str:
    """A reversible, portable folder name for a session id: the store's `~XXXX` segment escaping,
    with `~` for the empty id (which a store folder can never have, but an owner can)."""
    return "~" if session_id == "" else encode_session_segment(session_id)


def _safe_file_name(suggested_name: str) -> str:
    """The suggested name reduced to a harmless file name (no separators, no dot files)."""
    cleaned = "".join(char if char in SAFE_SEGMENT_CHARS else "_" for char in suggested_name)
    cleaned = cleaned.lstrip(".")
    return cleaned[:120] or "transcript.txt"


def _numbered(name: str, attempt: int) -> str:
    if attempt == 1:
        return name
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem:
        return f"{name}-{attempt}"
    return f"{stem}-{attempt}.{suffix}"


class DirectorySpillStore:
    """Saves transcripts as files `<root>/spill/<encoded target id>/<name>`.

    A second save with the same suggested name gets `-2`, `-3`, ... so locators recorded in
    earlier messages stay valid. The locator is the absolute file path. A folder on the way that
    is a link raises the store's `STORE_UNSAFE_PATH` error (the reference service then reports
    the transcript as `save-failed`).
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).absolute()

    async def save_text(
        self, owner: SpillOwner, source: SpillSource, suggested_name: str, content: str
    ) -> SpillRef:
        """Write the transcript durably under a fresh name; raises `OSError` or `StoreError` on failure."""
        data = content.encode("utf-8", "surrogatepass")
        parts = [SPILL_FOLDER, encode_path_segment(owner.session_id)]
        name = await asyncio.to_thread(self._write, parts, _safe_file_name(suggested_name), data)
        locator = str(self.root.joinpath(*parts, name))
        return SpillRef(locator, len(data), f"Read {locator} by lines.")

    def _write(self, parts: list[str], name: str, data: bytes) -> str:
        with Folder(os.fspath(self.root), parts, create=True) as folder:
            temp = f".partial-{uuid.uuid4().hex}"
            fd = folder.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            try:
                with os.fdopen(fd, "wb") as stream:
                    stream.write(data)
                    stream.flush()
                    os.fsync(stream.fileno())
                attempt = 1
                while True:
                    target = _numbered(name, attempt)
                    try:
                        folder.link(temp, target)
                    except FileExistsError:
                        attempt += 1
                        continue
                    break
            finally:
                with contextlib.suppress(OSError):
                    folder.unlink(temp)
            folder.fsync()
        return target
