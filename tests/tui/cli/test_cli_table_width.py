"""`sessions` and `search` fit an 80-column terminal: ids cut to their shortest unique prefix, which
`show` still takes; piped output and `--json` keep whole ids (issue 21)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.cells import cell_len
from sessionref_tui.cli import EXIT_OK, main
from sessionref_tui.cli.table_fit import shortest_unique_prefixes
from test_cli_foreign import CHECKOUT, homes  # noqa: F401  (the fixture)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run_in_terminal(monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str]:
    """Run the CLI with standard output on an 80-column terminal."""
    terminal = Terminal()
    with monkeypatch.context() as patched:
        patched.setenv("COLUMNS", "80")
        patched.setattr("sys.stdout", terminal)
        code = main(list(argv))
    return code, terminal.getvalue()


def test_prefixes_are_the_shortest_that_tell_the_ids_apart() -> None:
    ids = ["f0155ab6-1111", "f0155ab6-2222", "0a1b2c3d4e5f", "claude-code:7a3e91c0-52d4", "short"]
    assert shortest_unique_prefixes(ids) == [
        "f0155ab6-1",
        "f0155ab6-2",
        "0a1b2c3d",
        "claude-code:7a3e91c0",
        "short",
    ]
    assert shortest_unique_prefixes(["abcdefghij", "abcdefghijkl"]) == ["abcdefghij", "abcdefghijk"]


@pytest.mark.usefixtures("homes")
def test_sessions_fits_80_columns_and_its_prefixes_name_the_sessions(
    store_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run_in_terminal(monkeypatch, "sessions", "--store", str(store_root), "--limit", "50")
    assert code == EXIT_OK
    lines = out.splitlines()
    assert len(lines) > 10
    assert all(cell_len(line) <= 80 for line in lines), max(lines, key=cell_len)
    prefix = next(line.split()[0] for line in lines if line.startswith("claude-code:7a3e"))
    assert CHECKOUT.startswith(prefix) and prefix != CHECKOUT
    code = main(["show", prefix, "--store", str(store_root), "--json"])
    assert code == EXIT_OK
    assert json.loads(capsys.readouterr().out)["sessionId"] == CHECKOUT


@pytest.mark.usefixtures("homes")
def test_piped_sessions_keep_whole_ids(store_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions", "--store", str(store_root), "--limit", "50"]) == EXIT_OK
    ids = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert CHECKOUT in ids


def test_search_fits_80_columns(store_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = run_in_terminal(monkeypatch, "search", "grammar", "--store", str(store_root))
    assert code == EXIT_OK
    lines = out.splitlines()
    assert len(lines) >= 3, out
    assert all(cell_len(line) <= 80 for line in lines), max(lines, key=cell_len)


def test_a_catalog_row_with_a_long_machine_name_fits_the_width() -> None:
    from sessionref.service.candidates import Candidate
    from sessionref_tui.cli.data_commands import format_session_rows

    remote = Candidate("r1", "Chased the flaky deploy", "/home/bob/src/deploy-service", 1, False, 2)
    local = Candidate("l1", "Local work", "/work/app", 1, True, 3)
    machines = {"r1": "build-machine-in-the-basement-rack-7"}
    rows = format_session_rows([remote, local], "/work/app", 10_000, 80, machines)
    assert all(cell_len(row) <= 80 for row in rows)
    assert "build-machin…:/home" in rows[1]  # the machine cut first, then the folder
