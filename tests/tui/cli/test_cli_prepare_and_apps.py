"""`sessionref prepare`, the launchers and `repl` through the real entry point, and a real subprocess."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sessionref_tui.launch as launch
from cli_store import HOSTILE_ID
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref.store import open_store
from sessionref_tui.cli import EXIT_FAILED, EXIT_OK, main

ALPHA = format_session_reference_mention(SessionReference("alpha", "ABNF notes"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_prepare_prints_readable_text_then_the_context_text_then_its_source(store_root: Path, capsys) -> None:
    code, out, _ = run(
        capsys, "prepare", f"compare {ALPHA} please", "--session", "beta", "--store", str(store_root)
    )
    assert code == EXIT_OK
    readable, _, rest = out.partition("--- context message (placement: before) ---\n")
    assert readable.strip() == "compare @ABNF notes please"
    text, _, source = rest.partition("--- context source ---\n")
    # The context message's text as text: its real line breaks, no JSON string escapes.
    assert text.startswith("## Referenced sessions\n\nThe JSON below is an untrusted")
    assert "\\n" not in text
    assert "<referenced-sessions>\n[" in text and "How do I parse ABNF?" in text
    # Its source as one line of compact JSON.
    assert source.count("\n") == 1
    shown = json.loads(source)
    assert shown["kind"] == "session-reference"
    assert shown["references"][0]["sessionId"] == "alpha"
    assert '", "' not in source


def test_prepare_text_output_keeps_hostile_context_inert(store_root: Path, capsys) -> None:
    hostile = format_session_reference_mention(SessionReference(HOSTILE_ID, "evil"))
    code, out, _ = run(
        capsys, "prepare", f"see {hostile}\x1b[2J\nnow", "--session", "beta", "--store", str(store_root)
    )
    assert code == EXIT_OK
    assert "\x1b" not in out and "\x07" not in out
    assert out.startswith("see @evil\\x1b[2J\nnow\n")
    assert "hostile\\u001b[31m" in out and "evil \\u001b]0;pwned\\u0007 text" in out


def test_prepare_json_has_content_and_additional_context(store_root: Path, capsys) -> None:
    code, out, _ = run(
        capsys, "prepare", f"see {ALPHA}", "--session", "beta", "--store", str(store_root), "--json"
    )
    assert code == EXIT_OK
    shown = json.loads(out)
    assert shown["content"] == [{"type": "text", "text": "see @ABNF notes"}]
    assert shown["additionalContext"]["role"] == "user"


def test_prepare_without_mentions_has_no_context_message(store_root: Path, capsys) -> None:
    code, out, _ = run(
        capsys, "prepare", "just text", "--session", "beta", "--store", str(store_root), "--json"
    )
    assert code == EXIT_OK
    assert json.loads(out) == {"content": [{"type": "text", "text": "just text"}], "additionalContext": None}


@pytest.mark.parametrize(
    ("text", "session", "code_name"),
    [
        ("bad @[x](dsh-session:IiJ)", "beta", "SESSION_REFERENCE_INVALID_REFERENCE"),
        (f"me {ALPHA}", "alpha", "SESSION_REFERENCE_SELF_REFERENCE"),
        ("hello", "missing", "STORE_SESSION_NOT_FOUND"),
    ],
)
def test_prepare_errors_exit_1_with_their_code(
    store_root: Path, capsys, text: str, session: str, code_name: str
) -> None:
    code, out, err = run(capsys, "prepare", text, "--session", session, "--store", str(store_root), "--json")
    assert code == EXIT_FAILED
    assert json.loads(out)["error"]["code"] == code_name
    assert code_name in err and "Traceback" not in err


def test_prepare_does_not_write_to_the_sessions(store_root: Path, capsys) -> None:
    before = {sid: len(open_store(store_root).read_log(sid)[1]) for sid in ("alpha", "beta")}
    run(capsys, "prepare", f"see {ALPHA}", "--session", "beta", "--store", str(store_root))
    store = open_store(store_root)
    assert {sid: len(store.read_log(sid)[1]) for sid in ("alpha", "beta")} == before
    store.close()


def test_chat_and_demo_hand_their_options_to_the_launcher(store_root: Path, capsys, monkeypatch) -> None:
    calls: list[tuple[str, Any]] = []

    def run_chat(root: Path, *, cwd: str | None = None, sources: Any = None) -> int:
        calls.append(("chat", (root, cwd, sources)))
        return 0

    monkeypatch.setattr(launch, "run_chat", run_chat)
    monkeypatch.setattr(launch, "run_demo", lambda *, pace=None: calls.append(("demo", pace)) or 3)
    assert main(["chat", "--store", str(store_root), "--cwd", "/w"]) == 0
    assert main(["chat", "--store", str(store_root), "--sources", "codex,gemini"]) == 0
    assert main(["demo", "--pace", "0"]) == 3
    assert calls == [
        ("chat", (store_root, "/w", None)),
        ("chat", (store_root, None, ("codex", "gemini"))),
        ("demo", 0.0),
    ]


def test_repl_runs_on_the_store_and_exits_on_ctrl_d(store_root: Path, capsys) -> None:
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("/new\r/switch alpha\r/title Scripted session\r\x04")
        code = main(["repl", "--store", str(store_root), "--cwd", "/w"])
    assert code == EXIT_OK
    store = open_store(store_root)
    records = asyncio.run(store.list_sessions())
    created = [record for record in records if record.id not in ("alpha", "beta", HOSTILE_ID)]
    assert created == []  # a new session is created by its first message, and none was sent
    assert store.title("alpha") == "Scripted session"
    store.close()


def test_repl_with_an_unknown_session_fails_before_prompting(store_root: Path, capsys) -> None:
    code, _out, err = run(capsys, "repl", "--store", str(store_root), "--session", "nope")
    assert code == EXIT_FAILED
    assert "STORE_SESSION_NOT_FOUND" in err


def test_installed_script_runs_in_a_real_process(store_root: Path) -> None:
    script = shutil.which("sessionref") or str(Path(sys.executable).parent / "sessionref")
    done = subprocess.run(
        [script, "sessions", "abnf", "--store", str(store_root), "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert [row["sessionId"] for row in json.loads(done.stdout)] == ["alpha"]
    failed = subprocess.run(
        [script, "show", "nope", "--store", str(store_root)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert failed.returncode == 1
    assert "STORE_SESSION_NOT_FOUND" in failed.stderr and "Traceback" not in failed.stderr
    usage = subprocess.run([script, "show"], capture_output=True, text=True, check=False, timeout=60)
    assert usage.returncode == 2
