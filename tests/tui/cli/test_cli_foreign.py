"""The CLI with Claude Code, Codex CLI and Gemini CLI histories: `sources`, `snapshot`, `--sources`,
marks in `sessions`, foreign ids in `show`, `mention` and `prepare` (issue 11)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_store import HERE
from histories import GOLDEN, copy_root
from sessionref.contract.uri import SessionReference, format_session_reference_mention
from sessionref_tui.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, main

UPDATE = os.environ.get("SESSIONREF_UPDATE_GOLDEN") == "1"
CHECKOUT = "claude-code:7a3e91c0-52d4-4f6b-8e1a-2c9b0d7f3e02"
SPLIT = "codex:2c3d4e5f-1111-4b6c-9d0e-000000000002"
RELEASE = "gemini:5e4d3c2b-aaaa-4bbb-8ccc-dddddddddddd"


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Private copies of the fixture roots, found through the tools' own variables."""
    folder = tmp_path / "homes"
    roots = {kind: copy_root(kind, folder) for kind in ("claude-code", "codex")}
    gemini_home = folder / "gemini-home"
    roots["gemini"] = copy_root("gemini", gemini_home)
    (gemini_home / "gemini").rename(gemini_home / ".gemini")
    roots["gemini"] = gemini_home / ".gemini"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(roots["claude-code"]))
    monkeypatch.setenv("CODEX_HOME", str(roots["codex"]))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(gemini_home))
    return roots


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_sources_lists_what_was_found_and_why(store_root: Path, homes: dict[str, Path], capsys) -> None:
    code, out, _ = run(capsys, "sources", "--store", str(store_root), "--json")
    assert code == EXIT_OK
    rows = {row["kind"]: row for row in json.loads(out)}
    assert rows["claude-code"]["on"] is True and rows["claude-code"]["sessions"] == 4
    assert rows["codex"]["root"] == str(homes["codex"]) and rows["codex"]["why"] == "found"
    assert isinstance(rows["gemini"]["lastIndexed"], int)
    code, out, _ = run(capsys, "sources", "--store", str(store_root), "--sources", "codex")
    assert code == EXIT_OK
    lines = out.splitlines()
    assert lines[0].split() == ["SOURCE", "READ", "SESSIONS", "INDEXED", "WHY", "FOLDER"]
    assert lines[1].split()[:3] == ["claude-code", "no", "-"] and "switched off by --sources" in lines[1]
    assert lines[2].split()[:4] == ["codex", "yes", "4", "just"] and lines[2].endswith(str(homes["codex"]))


def test_sources_without_a_store_says_nothing_is_indexed(
    tmp_path: Path, homes: dict[str, Path], capsys
) -> None:
    code, out, err = run(capsys, "sources", "--store", str(tmp_path / "missing"))
    assert code == EXIT_OK
    assert "no session store" in err
    assert out.splitlines()[1].split()[:4] == ["claude-code", "yes", "-", "-"]
    assert not (tmp_path / "missing").exists()


def test_sessions_marks_foreign_sessions_and_names_their_source(
    store_root: Path, homes: dict[str, Path], capsys
) -> None:
    code, out, _ = run(capsys, "sessions", "--store", str(store_root), "--cwd", "/home/ana/shop", "--json")
    assert code == EXIT_OK
    rows = json.loads(out)
    sources = {row["sessionId"]: row["source"] for row in rows}
    assert sources["alpha"] == "store" and sources[CHECKOUT] == "claude-code"
    assert sources[SPLIT] == "codex" and sources[RELEASE] == "gemini"
    assert rows[0]["sameWorkspace"] is True  # /home/ana/shop's sessions first, whatever their source
    for fresh in ("--fresh", "--limit"):  # opened and caught up, then answered from the index
        argv = ["sessions", "--store", str(store_root), "--cwd", HERE]
        code, out, _ = run(capsys, *argv, *(["--fresh"] if fresh == "--fresh" else ["--limit", "50"]))
        header, *lines = out.splitlines()
        column = header.index("SRC")
        marks = {line.split()[0]: line[column : column + 3].strip() for line in lines}
        assert marks[CHECKOUT] == "CC" and marks[SPLIT] == "CX" and marks[RELEASE] == "GM"
        assert marks["alpha"] == ""  # the store's own sessions have no mark
        assert len(lines) == 3 + 12


@pytest.mark.parametrize("listed", ["none", "codex"])
def test_the_sources_option_narrows_every_listing(
    store_root: Path, homes: dict[str, Path], capsys, listed: str
) -> None:
    for extra in (["--fresh"], []):  # the store, then the index
        argv = ["sessions", "--store", str(store_root), "--json", "--sources", listed, *extra]
        code, out, _ = run(capsys, *argv)
        assert code == EXIT_OK
        found = {row["source"] for row in json.loads(out)}
        assert found == ({"store"} if listed == "none" else {"store", "codex"})
    code, _, err = run(capsys, "show", CHECKOUT, "--store", str(store_root), "--sources", listed)
    assert code == EXIT_FAILED and "STORE_SESSION_NOT_FOUND" in err


def test_a_bad_sources_value_is_a_usage_error_or_a_coded_one(
    store_root: Path, homes: dict[str, Path], capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = run(capsys, "sessions", "--store", str(store_root), "--sources", "claude,codex")
    assert code == EXIT_USAGE and "unknown source 'claude'" in err
    monkeypatch.setenv("SESSIONREF_SOURCES", "everything")
    code, _, err = run(capsys, "sessions", "--store", str(store_root))
    assert code == EXIT_FAILED and "SETTINGS_INVALID" in err
    monkeypatch.delenv("SESSIONREF_SOURCES")
    (store_root / "config.toml").write_text("[sources]\ncodex = 'maybe'\n", encoding="utf-8")
    code, _, err = run(capsys, "sources", "--store", str(store_root))
    assert code == EXIT_FAILED and "SETTINGS_INVALID" in err and "[sources] codex" in err


def test_config_switches_a_source_off(store_root: Path, homes: dict[str, Path], capsys) -> None:
    (store_root / "config.toml").write_text("[sources]\ngemini = false\n", encoding="utf-8")
    code, out, _ = run(capsys, "sessions", "--store", str(store_root), "--json")
    assert code == EXIT_OK
    assert "gemini" not in {row["source"] for row in json.loads(out)}
    code, out, _ = run(capsys, "sources", "--store", str(store_root))
    assert "switched off by [sources] gemini in config.toml" in out


def test_show_and_mention_take_foreign_ids_and_their_prefixes(
    store_root: Path, homes: dict[str, Path], capsys
) -> None:
    code, out, _ = run(capsys, "show", "claude-code:7a3", "--store", str(store_root))
    assert code == EXIT_OK
    assert out.startswith("# Checkout refactor\n")
    assert f"id:      {CHECKOUT}" in out and "source:  Claude Code, read-only" in out
    assert "checkpoint ›" in out and "Now write the tests for the pricing module." in out
    code, out, _ = run(capsys, "show", SPLIT, "--store", str(store_root), "--json")
    shown = json.loads(out)
    assert shown["source"] == "codex" and shown["capturedThroughSeq"] == 14
    assert shown["conversation"][0]["checkpoint"] is True
    code, out, _ = run(capsys, "mention", "gemini:5e4", "--store", str(store_root))
    assert code == EXIT_OK
    expected = format_session_reference_mention(
        SessionReference(RELEASE, "Write release notes for v2 from the changelog.")
    )
    assert out.strip() == expected


def test_prepare_of_a_foreign_session_matches_the_golden_context_message(
    store_root: Path, homes: dict[str, Path], capsys
) -> None:
    mention = format_session_reference_mention(SessionReference(CHECKOUT, "Checkout refactor"))
    code, out, _ = run(capsys, "prepare", f"compare with {mention}", "--session", "alpha",
                       "--store", str(store_root), "--json")  # fmt: skip
    assert code == EXIT_OK
    context = json.loads(out)["additionalContext"]
    text = context["content"][0]["text"]
    golden = GOLDEN / "cli" / "prepare-claude-code-7a3e91c0.txt"
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")
    code, out, _ = run(capsys, "snapshot", "claude-code:7a3e", "--store", str(store_root))
    assert code == EXIT_OK
    assert out == text + "\n"  # the same message, exactly, through a pipe


def test_snapshot_is_bounded_and_writes_nothing(store_root: Path, homes: dict[str, Path], capsys) -> None:
    before = sorted(path.relative_to(store_root) for path in store_root.rglob("*"))
    code, out, _ = run(capsys, "snapshot", SPLIT, "--store", str(store_root), "--max-bytes", "300", "--json")
    assert code == EXIT_OK
    snapshot = json.loads(out)
    assert (
        snapshot["sessionId"] == SPLIT
        and snapshot["label"] == "Migrate the users table to UUID keys without downtime."
    )
    (record,) = snapshot["source"]["references"]
    assert record["truncated"] is True
    assert '"reason":"storage-not-configured"' in snapshot["text"]
    after = sorted(path.relative_to(store_root) for path in store_root.rglob("*"))
    assert [path for path in after if path.parts[0] == "spill"] == []
    assert set(before) <= set(after)
    code, out, err = run(capsys, "snapshot", SPLIT, "--store", str(store_root), "--max-bytes", "40")
    assert code == EXIT_FAILED and out == "" and "SESSION_REFERENCE_BUDGET_EXCEEDED" in err
    code, _, err = run(capsys, "snapshot", "alpha", "--store", str(store_root))
    assert code == EXIT_OK  # any session, the store's own too


def test_prepare_as_if_sent_from_a_foreign_session_only_reads(
    store_root: Path, homes: dict[str, Path], capsys
) -> None:
    # `prepare` never sends: preparing "from" a foreign session reads, like from any other.
    code, out, _ = run(capsys, "prepare", "plain text", "--session", CHECKOUT, "--store", str(store_root))
    assert code == EXIT_OK and out.startswith("plain text\n")


@pytest.mark.parametrize(("listed", "code"), [("codex", EXIT_OK), ("none", EXIT_FAILED)])
def test_repl_reads_the_sources_its_option_names(
    store_root: Path, homes: dict[str, Path], capsys, listed: str, code: int
) -> None:
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("\x04")
        argv = ["repl", "--store", str(store_root), "--session", "codex:2c3d", "--sources", listed]
        assert main(argv) == code
    if code == EXIT_FAILED:  # the Codex session is not there without its source
        assert "STORE_SESSION_NOT_FOUND" in capsys.readouterr().err
