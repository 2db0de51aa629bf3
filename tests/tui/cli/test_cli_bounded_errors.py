"""A 10 MB argument never becomes a 10 MB line: every error the CLI prints quotes a bounded excerpt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sessionref.contract.excerpts import MESSAGE_CHARS
from sessionref_tui.cli import EXIT_FAILED, EXIT_USAGE, main

HUGE = "x" * 10_000_000
STDERR_BOUND = MESSAGE_CHARS + 1000  # the message, its code and a usage line


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    "argv",
    [
        ["show", HUGE],
        ["mention", "zz" + HUGE],
        ["prepare", "hello", "--session", HUGE],
        ["prepare", "see @[x](dsh-session:" + "A" * 10_000_000 + ")", "--session", "beta"],
        ["repl", "--session", HUGE],
    ],
)
def test_failures_quote_bounded_excerpts_on_stderr_and_in_json(
    store_root: Path, capsys, argv: list[str]
) -> None:
    as_json = [] if argv[0] == "repl" else ["--json"]
    code, out, err = run(capsys, *argv, "--store", str(store_root), *as_json)
    assert code == EXIT_FAILED
    assert len(err) < STDERR_BOUND and err.count("\n") == 1
    if out:
        message = json.loads(out)["error"]["message"]
        assert len(message) <= MESSAGE_CHARS + 50
        assert "characters left out" in message or len(message) < 400


@pytest.mark.parametrize(
    "argv",
    [
        [HUGE],
        ["sessions", "--limit", HUGE],
        ["sessions", "q", HUGE],
        ["demo", "--pace", HUGE],
        ["show", "a", "--" + HUGE],
    ],
)
def test_usage_errors_quote_bounded_excerpts(capsys, argv: list[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == EXIT_USAGE and out == ""
    assert len(err) < STDERR_BOUND
    assert "usage:" in err


def test_usage_errors_show_typed_control_characters_inert(capsys) -> None:
    code, _out, err = run(capsys, "sessions", "q", "extra\x1b]0;pwned\x07")
    assert code == EXIT_USAGE
    assert "\x1b" not in err and "\x07" not in err
    assert "extra\\x1b]0;pwned\\x07" in err
