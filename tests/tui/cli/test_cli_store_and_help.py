"""A missing store directory, the empty store, help, --version and `demo --store`."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
import sessionref_tui.launch as launch
from cli_store import build_store
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from sessionref.store import open_store
from sessionref_tui.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, main

READ_COMMANDS = [["sessions"], ["show", "x"], ["mention", "x"], ["prepare", "hi", "--session", "x"]]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- empty store (issue 9 item 19) ----------------------------------------------------------------------


@pytest.fixture
def empty_store(tmp_path: Path) -> Path:
    root = tmp_path / "empty"
    open_store(root).close()
    return root


@pytest.mark.parametrize("query", [[], ["anything"]])
def test_an_empty_store_says_there_are_no_sessions_yet_and_how_to_start(
    empty_store: Path, capsys, query: list[str]
) -> None:
    code, out, err = run(capsys, "sessions", *query, "--store", str(empty_store))
    assert (code, out) == (EXIT_OK, "")
    assert "no sessions yet" in err and "sessionref chat" in err and "sessionref repl" in err
    assert "no matching" not in err


def test_an_empty_store_lists_nothing_as_json(empty_store: Path, capsys) -> None:
    code, out, _ = run(capsys, "sessions", "--store", str(empty_store), "--json")
    assert (code, json.loads(out)) == (EXIT_OK, [])


def test_a_query_matching_nothing_still_says_no_match(tmp_path: Path, capsys) -> None:
    root = build_store(tmp_path / "store")
    code, out, err = run(capsys, "sessions", "zzz-nothing", "--store", str(root))
    assert (code, out) == (EXIT_OK, "")
    assert "no matching sessions" in err and "no sessions yet" not in err


# -- a missing store directory (issue 9 item 21) --------------------------------------------------------


@pytest.mark.parametrize("argv", READ_COMMANDS)
def test_read_commands_on_a_missing_store_fail_with_a_hint_and_create_nothing(
    tmp_path: Path, capsys, argv: list[str]
) -> None:
    absent = tmp_path / "absent"
    code, out, err = run(capsys, *argv, "--store", str(absent), "--json")
    assert code == EXIT_FAILED
    error = json.loads(out)["error"]
    assert error["code"] == "CLI_STORE_NOT_FOUND"
    assert str(absent) in error["message"] and "sessionref chat" in error["message"]
    assert "CLI_STORE_NOT_FOUND" in err
    assert not absent.exists()


def test_the_default_store_is_not_created_by_a_read_command(tmp_path: Path, capsys, monkeypatch) -> None:
    home = tmp_path / "home-store"
    monkeypatch.setenv("SESSIONREF_HOME", str(home))
    code, _out, err = run(capsys, "sessions")
    assert code == EXIT_FAILED and "CLI_STORE_NOT_FOUND" in err
    assert not home.exists()


def test_chat_creates_a_missing_store_and_says_so(tmp_path: Path, capsys, monkeypatch) -> None:
    calls: list[Any] = []

    def run_chat(root: Path, *, cwd: str | None = None, sources: object = None) -> int:
        calls.append((root, root.is_dir()))
        return 0

    monkeypatch.setattr(launch, "run_chat", run_chat)
    new = tmp_path / "new" / "store"
    code, _out, err = run(capsys, "chat", "--store", str(new))
    assert code == EXIT_OK
    assert calls == [(new, True)]
    assert f"created a new session store at {new}" in err
    code, _out, err = run(capsys, "chat", "--store", str(new))
    assert code == EXIT_OK and "created" not in err


def test_chat_creates_the_default_store_too(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(launch, "run_chat", lambda root, *, cwd=None, sources=None: 0)
    home = tmp_path / "home-store"
    monkeypatch.setenv("SESSIONREF_HOME", str(home))
    code, _out, err = run(capsys, "chat")
    assert code == EXIT_OK and home.is_dir() and "created a new session store" in err


def test_repl_creates_a_missing_store_and_says_so(tmp_path: Path, capsys) -> None:
    new = tmp_path / "fresh"
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("\x04")
        code = main(["repl", "--store", str(new)])
    assert code == EXIT_OK
    assert new.is_dir()
    assert f"created a new session store at {new}" in capsys.readouterr().err


def test_a_store_that_cannot_be_created_is_a_coded_error(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(launch, "run_chat", lambda root, *, cwd=None, sources=None: 0)
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    code, _out, err = run(capsys, "chat", "--store", str(blocker / "store"))
    assert code == EXIT_FAILED and "CLI_STORE_NOT_CREATED" in err and "Traceback" not in err


# -- help, --version, demo --store (issue 9 items 7 and 21) ---------------------------------------------


@pytest.mark.parametrize("command", ["chat", "demo", "repl"])
def test_commands_without_json_do_not_advertise_it(command: str, capsys) -> None:
    code, out, _ = run(capsys, command, "--help")
    assert code == EXIT_OK and "--json" not in out


@pytest.mark.parametrize("command", ["sessions", "show", "mention", "prepare"])
def test_commands_with_json_explain_it(command: str, capsys) -> None:
    code, out, _ = run(capsys, command, "--help")
    assert code == EXIT_OK
    assert "--json" in out and '{"error": {"code", "message"}}' in out


def test_help_says_what_happens_to_a_missing_store(capsys) -> None:
    _code, chat_help, _ = run(capsys, "chat", "--help")
    assert "Created when missing" in chat_help
    _code, sessions_help, _ = run(capsys, "sessions", "--help")
    assert "must exist" in sessions_help and "CLI_STORE_NOT_FOUND" in sessions_help


def test_version_comes_from_the_package_metadata(capsys) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == EXIT_OK
    assert out.strip() == f"sessionref {version('sessionref')}"


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--store", "/tmp/x"],
        ["demo", "--store"],
        ["demo", "--pace", "0", "--store=/x"],
    ],
)
def test_demo_refuses_a_store_with_a_usage_error_that_says_why(argv: list[str], capsys, monkeypatch) -> None:
    monkeypatch.setattr(launch, "run_demo", lambda *, pace=None: pytest.fail("the demo must not start"))
    code, _out, err = run(capsys, *argv)
    assert code == EXIT_USAGE
    assert "temporary store" in err and "sessionref chat --store DIR" in err


def test_demo_help_explains_the_throwaway_store(capsys) -> None:
    code, out, _ = run(capsys, "demo", "--help")
    assert code == EXIT_OK
    assert "deleted when you quit" in out and "--store is not accepted" in out


def test_top_help_lists_each_command_once_and_names_every_json_command(capsys) -> None:
    _code, out, _ = run(capsys, "--help")
    for command in ("chat", "demo", "repl", "sessions", "search", "show", "mention", "prepare", "snapshot"):
        assert sum(line.split()[:2] == ["sessionref", command] for line in out.splitlines()) == 1, command
        assert not any(line.startswith(f"    {command} ") for line in out.splitlines()), command
    flat = " ".join(out.split())
    assert "`snapshot` and `sources` take --json" in flat
