"""`sessionref … | head`: a reader that goes away ends every printing command quietly with status 141."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_store import user_message
from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref.store import open_store
from sessionref_tui.cli import EXIT_CLOSED_PIPE, main

SCRIPT = shutil.which("sessionref") or str(Path(sys.executable).parent / "sessionref")
ALPHA = format_session_reference_mention(SessionReference("alpha", "ABNF notes"))
NOISE = ("Traceback", "Exception ignored", "BrokenPipeError", "Broken pipe")

PRINTING_COMMANDS = [
    ["sessions"],
    ["sessions", "--json"],
    ["show", "alpha"],
    ["show", "alpha", "--json"],
    ["mention", "alpha"],
    ["mention", "alpha", "--json"],
    ["prepare", f"see {ALPHA}", "--session", "beta"],
    ["prepare", f"see {ALPHA}", "--session", "beta", "--json"],
    ["show", "nope", "--json"],  # a failure whose JSON error object meets the closed pipe
    ["sessions", "--help"],
]


def into_closed_pipe(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run the installed script with stdout on a pipe whose reader has already gone away."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [SCRIPT, *argv], stdout=write_end, stderr=subprocess.PIPE, text=True, check=False, timeout=60
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("argv", PRINTING_COMMANDS, ids=" ".join)
def test_a_closed_pipe_ends_the_command_quietly(store_root: Path, argv: list[str]) -> None:
    done = into_closed_pipe([*argv, "--store", str(store_root)])
    assert done.returncode == EXIT_CLOSED_PIPE
    assert not any(noise in done.stderr for noise in NOISE), done.stderr


def test_version_into_a_closed_pipe_is_quiet() -> None:
    done = into_closed_pipe(["--version"])
    assert done.returncode == EXIT_CLOSED_PIPE and done.stderr == ""


def test_head_reading_a_few_bytes_of_a_long_output(store_root: Path) -> None:
    # Far more than a pipe holds: the command is still writing when `head` has had its 10 bytes.
    store = open_store(store_root)
    try:
        store.append("beta", [user_message("long line " * 200_000, "u-big")])
    finally:
        store.close()
    process = subprocess.Popen(
        [SCRIPT, "show", "beta", "--json", "--store", str(store_root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    head = process.stdout.read(10)
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == EXIT_CLOSED_PIPE
    assert head == b'{\n  "sessi'
    assert not any(noise in stderr for noise in NOISE), stderr


class ClosedPipe(io.StringIO):
    """A stdout whose reader is gone: every write and flush fails as a real one would."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_main_returns_141_instead_of_raising(store_root: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["sessions", "--json", "--store", str(store_root)]) == EXIT_CLOSED_PIPE
    assert capsys.readouterr().err == ""
