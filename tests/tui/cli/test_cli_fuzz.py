"""A bounded fuzz over the CLI's argument handling: exit statuses 0-2 and coded errors, never a traceback."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import sessionref_tui.launch as launch
import sessionref_tui.repl.app as repl_app
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sessionref_tui.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, main

WORDS = [
    "sessions",
    "show",
    "mention",
    "prepare",
    "chat",
    "demo",
    "repl",
    "--json",
    "--limit",
    "--cwd",
    "--label",
    "--session",
    "--pace",
    "--store",
    "-h",
    "--version",
    "--",
    "alpha",
    "a",
    "be",
    "beta",
    "0",
    "-1",
    "nan",
    "1e400",
    "@",
    "@[x](dsh-session:IiJ)",
    "@[ABNF](dsh-session:ImFscGhhIg)",
    "\x1b[2J",
    "@[" * 40,
    "\udcff",
    "",
    "a\x00b",
]
# Free text never looks like a path or an option, so no fuzzed `--store` or `--cwd` leaves the temp dir.
FREE_TEXT = st.text(max_size=12).filter(
    lambda text: not text.startswith(("-", "/", "~")) and "/" not in text and text not in (".", "..")
)
ARGV = st.lists(st.sampled_from(WORDS) | FREE_TEXT, max_size=7)
REPORTED = re.compile(r"^sessionref: ([A-Z][A-Z0-9_]*): ", re.MULTILINE)


class QuietLineMode:
    """Stands in for the line mode: the fuzz checks argument handling, not the prompt."""

    def __init__(self, workspace: Any, *, session_id: str | None = None) -> None:
        self.session_id = session_id

    async def run(self) -> int:
        return 0


@pytest.fixture
def sandbox(store_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default store is the test store; relative paths land in the temp dir; no app really starts."""
    monkeypatch.setenv("SESSIONREF_HOME", str(store_root))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(launch, "run_chat", lambda root, *, cwd=None, sources=None: 0)
    monkeypatch.setattr(launch, "run_demo", lambda *, pace=None: 0)
    monkeypatch.setattr(repl_app, "LineMode", QuietLineMode)
    return store_root


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=ARGV)
@example(argv=["sessions", "--limit", "9" * 5000])
@example(argv=["show", "\udcff"])
@example(argv=["sessions", "\udcff"])  # a non-UTF-8 query: the index cannot be asked
@example(argv=["prepare", "@[" * 40, "--session", "a"])
@example(argv=["mention", "alpha", "--label", "\x1b[2J"])
@example(argv=["demo", "--pace", "nan"])
@example(argv=["sessions", "--store", "a\x00b"])
@example(argv=["chat", "--store", "a\x00b"])
@example(argv=["repl", "--cwd", "a\x00b"])
@example(argv=["sessions", "--cwd", "a\x00b"])
def test_fuzzed_arguments_end_with_a_status_and_a_coded_message(
    sandbox: Path, capsys, argv: list[str]
) -> None:
    status = main(argv)
    captured = capsys.readouterr()
    assert status in (EXIT_OK, EXIT_FAILED, EXIT_USAGE)
    assert "Traceback" not in captured.err
    if status == EXIT_FAILED:
        codes = REPORTED.findall(captured.err)
        assert codes and "INTERNAL_ERROR" not in codes, captured.err
    if status == EXIT_USAGE:
        assert "usage:" in captured.err


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--pace", "nan"],
        ["demo", "--pace", "-1"],
        ["demo", "--pace", "1e400"],
        ["chat", "--store", "a\x00b"],
        ["sessions", "--store", "a\x00b"],
        ["repl", "--cwd", "a\x00b"],
    ],
)
def test_values_the_commands_cannot_use_are_usage_errors(sandbox: Path, capsys, argv: list[str]) -> None:
    assert main(argv) == EXIT_USAGE
    assert "usage:" in capsys.readouterr().err
