"""The resumable discovery scan: unchanged files are not read, grown files resume, rewritten files restart."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from histories import ROOTS, write_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st
from sessionref.sources import claude_code, codex, gemini

FIXTURE_FILES = sorted(
    [
        *claude_code.walk(ROOTS["claude-code"]),
        *(path for files in codex.walk(ROOTS["codex"]) for path in files.paths),
        *(path for path in gemini.walk(ROOTS["gemini"]) if path.suffix == ".jsonl"),
    ]
)
SCANNERS = {
    "claude-code": claude_code.scan_session_file,
    "codex": codex.scan_session_file,
    "gemini": gemini.scan_session_file,
}


def kind_of(path: Path) -> str:
    return next(kind for kind, root in ROOTS.items() if root in path.parents)


def claude_user(uuid: str, text: str, parent: str | None = None, second: int = 0) -> dict[str, object]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "cwd": "/home/ana/app",
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": uuid,
        "timestamp": f"2026-03-02T09:00:{second:02d}.000Z",
    }


def test_an_unchanged_file_returns_the_previous_state_itself(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "projects" / "p" / "s.jsonl", [claude_user("u1", "Hello there")])
    first = claude_code.scan_session_file(tmp_path, path)
    assert claude_code.scan_session_file(tmp_path, path, first) is first


def test_a_grown_file_is_read_from_the_previous_offset_only(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "projects" / "p" / "s.jsonl", [claude_user("u1", "First prompt here")])
    first = claude_code.scan_session_file(tmp_path, path)
    stored = first.to_json()
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "custom-title", "customTitle": "Renamed"}) + "\n")
        handle.write(json.dumps(claude_user("u2", "later", "u1", second=30)) + "\n")
    resumed = claude_code.scan_session_file(tmp_path, path, first)
    assert first.to_json() == stored  # the caller's state is never modified
    assert resumed.title == "Renamed" and resumed.prompt == "First prompt here"
    assert resumed.updated_at == first.updated_at + 30_000
    assert resumed.to_json() == claude_code.scan_session_file(tmp_path, path).to_json()


def test_a_resumed_scan_does_not_reread_the_old_lines(tmp_path: Path) -> None:
    filler = {"type": "file-history-snapshot", "pad": "x" * 400}
    path = write_jsonl(
        tmp_path / "projects" / "p" / "s.jsonl", [filler, {"type": "summary", "summary": "Alpha"}, filler]
    )
    first = claude_code.scan_session_file(tmp_path, path)
    # Change a consumed line outside the fingerprinted windows, keeping the size, then append:
    # a resumed scan must not see the change (it starts at the old offset).
    data = path.read_bytes().replace(b'"Alpha"', b'"Bravo"')
    path.write_bytes(data + b'{"type":"queue-operation"}\n')
    resumed = claude_code.scan_session_file(tmp_path, path, first)
    assert (resumed.summary_title, resumed.lines) == ("Alpha", 4)
    assert claude_code.scan_session_file(tmp_path, path).summary_title == "Bravo"


def test_a_half_written_line_waits_for_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "projects" / "p" / "s.jsonl"
    write_jsonl(path, [claude_user("u1", "Complete prompt")])
    partial = json.dumps({"type": "custom-title", "customTitle": "New name"})
    with path.open("a", encoding="utf-8") as handle:
        handle.write(partial[:20])
    first = claude_code.scan_session_file(tmp_path, path)
    assert (first.lines, first.pending_bytes, first.custom_title) == (1, 20, None)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(partial[20:] + "\n")
    resumed = claude_code.scan_session_file(tmp_path, path, first)
    assert (resumed.lines, resumed.pending_bytes, resumed.custom_title) == (2, 0, "New name")


@pytest.mark.parametrize("change", ["rewritten", "truncated"])
def test_a_replaced_file_is_scanned_again_from_the_start(tmp_path: Path, change: str) -> None:
    path = write_jsonl(tmp_path / "projects" / "p" / "s.jsonl", [claude_user("u1", "Old prompt words")] * 2)
    first = claude_code.scan_session_file(tmp_path, path)
    if change == "rewritten":
        write_jsonl(path, [claude_user("u1", "New prompt words")] * 3)
    else:
        write_jsonl(path, [claude_user("u1", "Short")])
    again = claude_code.scan_session_file(tmp_path, path, first)
    assert again.prompt == ("New prompt words" if change == "rewritten" else "Short")
    assert again.to_json() == claude_code.scan_session_file(tmp_path, path).to_json()


def test_a_state_for_another_path_is_not_resumed(tmp_path: Path) -> None:
    one = write_jsonl(tmp_path / "projects" / "p" / "a.jsonl", [claude_user("u1", "Alpha prompt")])
    two = write_jsonl(tmp_path / "projects" / "p" / "b.jsonl", [claude_user("u1", "Alpha prompt"), "{}"])
    state = claude_code.scan_session_file(tmp_path, two, claude_code.scan_session_file(tmp_path, one))
    assert state.path == str(two) and state.lines == 2


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda path: path.name)
def test_states_survive_a_json_round_trip(path: Path) -> None:
    kind = kind_of(path)
    state = SCANNERS[kind](ROOTS[kind], path)
    stored = json.loads(json.dumps(state.to_json()))
    assert type(state).from_json(stored) == state


@pytest.mark.parametrize(
    "mutate",
    [
        lambda shape: shape.update(kind="codex"),
        lambda shape: shape.update(version=0),
        lambda shape: shape.update(offset="12"),
        lambda shape: shape.update(created_at=True),
        lambda shape: shape.pop("fingerprint"),
        lambda shape: shape.update(prompt=["x"]),
    ],
)
def test_a_stored_state_of_the_wrong_shape_is_refused(mutate) -> None:  # type: ignore[no-untyped-def]
    path = FIXTURE_FILES[0]
    shape = claude_code.scan_session_file(ROOTS["claude-code"], path).to_json()
    mutate(shape)
    assert claude_code.ClaudeScan.from_json(shape) is None
    assert claude_code.ClaudeScan.from_json("not a dict") is None


def test_codex_thread_names_resume_like_any_scan(tmp_path: Path) -> None:
    index = write_jsonl(tmp_path / "session_index.jsonl", [{"id": "a", "thread_name": "First"}])
    first = codex.scan_thread_names(tmp_path)
    with index.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "a", "thread_name": "Second \x1b[1mname"}) + "\n")
        handle.write(json.dumps({"id": "b", "thread_name": "  "}) + "\n")
    resumed = codex.scan_thread_names(tmp_path, first)
    assert first.names == {"a": "First"}
    assert resumed.names == {"a": "Second name"}
    assert codex.ThreadNames.from_json(json.loads(json.dumps(resumed.to_json()))) == resumed
    assert codex.scan_thread_names(tmp_path / "missing").names == {}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FIXTURE_FILES), st.floats(0, 1), st.floats(0, 1))
def test_scanning_in_pieces_equals_scanning_at_once(path: Path, first_cut: float, second_cut: float) -> None:
    data = path.read_bytes()
    cuts = sorted((int(len(data) * first_cut), int(len(data) * second_cut)))
    kind = kind_of(path)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        target = root / "projects" / "p" / path.name
        target.parent.mkdir(parents=True)
        state = None
        for end in (*cuts, len(data)):
            target.write_bytes(data[:end])
            os.utime(target, ns=(end, end))
            state = SCANNERS[kind](root, target, state)
        assert state is not None
        assert state.to_json() == SCANNERS[kind](root, target).to_json()
