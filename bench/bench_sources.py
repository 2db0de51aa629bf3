"""Benchmark: walking, discovery-scanning and reading Claude Code, Codex CLI and Gemini CLI histories.

Generates, in a temporary directory, N sessions per source (default 10,000) shaped like the real
tools write them: prompts, answers split over several lines, tool calls with 0.5-8 KB results,
reasoning, occasional renames, compactions, split Codex files and legacy Gemini `.json` files.
Then measures, per source:

* `walk`: listing the session files (`walk(root)`);
* `first scan`: the discovery scan of every file from nothing (what a first index build does),
  with its throughput; `peak heap`: the tracemalloc peak during a second, traced run of it;
* `rescan`: every file again with its stored state and nothing changed (stat only);
* `grow+resume`: 1,000 sessions get one more turn appended, then are rescanned from their
  stored states (only the new bytes are read);
* `read all`: reading every session in full (the naive alternative to a scan);
* `state`: the average size of a stored scan state (`json.dumps(state.to_json())`).

And, per source, a full read of one large session (default ~50 MB): time and tracemalloc peak.

Run: `.venv/bin/python bench/bench_sources.py [--sessions 10000] [--large-mb 50]`. Prints markdown tables.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sessionref.contract.projection import project_session_conversation
from sessionref.sources import claude_code, codex, gemini

WORDS = [
    *("cart", "discount", "refactor", "parser", "crash", "index", "title", "compaction", "session", "budget"),
    *("retention", "async", "agent", "model", "stream", "delta", "chunk", "layout", "escape", "unicode"),
    *("terminal", "render", "popup", "search", "latency", "sqlite", "migrate", "schema", "config", "loader"),
    *("widget", "composer", "preview", "backfill", "endpoint", "refund", "order", "tax", "shipping"),
]
GROWN_SESSIONS = 1_000


def words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def blob(rng: random.Random) -> str:
    return ("x" * 64 + "\n") * rng.randint(8, 128)


def iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment)) + ".000Z"


def dump(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":")) + "\n"


# -- generators ----------------------------------------------------------------------------------------


def claude_turn(rng: random.Random, state: dict[str, Any], moment: float) -> str:
    """One prompt and its answer (thinking, text, a tool call and its result, a final text)."""
    lines = []
    base = {"isSidechain": False, "userType": "external", "cwd": state["cwd"], "sessionId": state["id"]}

    def add(kind: str, message: dict[str, Any], **extra: Any) -> None:
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        record = {"parentUuid": state["parent"], **base, "type": kind, "message": message, "uuid": uid}
        record["timestamp"] = iso(moment)
        record.update(extra)
        state["parent"] = uid
        lines.append(dump(record))

    add("user", {"role": "user", "content": words(rng, 4, 30)})
    message_id = f"msg_{rng.getrandbits(48):012x}"
    model = {"id": message_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5"}
    add(
        "assistant",
        {**model, "content": [{"type": "thinking", "thinking": words(rng, 10, 40), "signature": "s"}]},
    )
    add("assistant", {**model, "content": [{"type": "text", "text": words(rng, 5, 40)}]})
    add(
        "assistant",
        {**model, "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {"p": "x"}}]},
    )
    add(
        "user",
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": blob(rng)}]},
    )
    add(
        "assistant",
        {**model, "id": message_id + "b", "content": [{"type": "text", "text": words(rng, 10, 80)}]},
    )
    return "".join(lines)


def claude_session(rng: random.Random, root: Path, index: int, turns: int) -> Path:
    state = {
        "id": str(uuid.UUID(int=rng.getrandbits(128))),
        "cwd": f"/home/ana/p{index % 100}",
        "parent": None,
    }
    path = root / "projects" / f"-home-ana-p{index % 100}" / f"{state['id']}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    moment = 1_760_000_000 + index * 600
    parts = [claude_turn(rng, state, moment + turn * 30) for turn in range(turns)]
    if rng.random() < 0.2:
        parts.append(
            dump({"type": "custom-title", "customTitle": words(rng, 2, 5), "sessionId": state["id"]})
        )
    if rng.random() < 0.3:
        parts.append(dump({"type": "summary", "summary": words(rng, 3, 8), "leafUuid": state["parent"]}))
    path.write_text("".join(parts), encoding="utf-8")
    return path


def codex_turn(rng: random.Random, moment: float) -> str:
    prompt, answer = words(rng, 4, 30), words(rng, 10, 80)

    def line(kind: str, payload: dict[str, Any]) -> str:
        return dump({"timestamp": iso(moment), "type": kind, "payload": payload})

    return "".join(
        [
            line(
                "turn_context",
                {"cwd": "/home/ana/api", "model": "gpt-5-codex", "approval_policy": "on-request"},
            ),
            line(
                "response_item",
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]},
            ),
            line("event_msg", {"type": "user_message", "message": prompt, "images": []}),
            line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "g" * 1200}),
            line(
                "response_item", {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"}
            ),
            line("response_item", {"type": "function_call_output", "call_id": "c", "output": blob(rng)}),
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": answer}],
                },
            ),
            line("event_msg", {"type": "agent_message", "message": answer}),
        ]
    )


def codex_session(rng: random.Random, root: Path, index: int, turns: int) -> list[Path]:
    session_id = str(uuid.UUID(int=rng.getrandbits(128)))
    moment = 1_760_000_000 + index * 600
    parts = 2 if rng.random() < 0.1 else 1
    paths = []
    for part in range(parts):
        start = moment + part * 3600
        day = time.gmtime(start)
        stamp = time.strftime("%Y-%m-%dT%H-%M-%S", day)
        path = root / "sessions" / f"{day.tm_year}" / f"{day.tm_mon:02d}" / f"{day.tm_mday:02d}"
        path = path / f"rollout-{stamp}-{session_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"id": session_id, "timestamp": iso(start), "cwd": "/home/ana/api", "model_provider": "openai"}
        meta["instructions"] = words(rng, 200, 400)
        lines = [dump({"timestamp": iso(start), "type": "session_meta", "payload": meta})]
        lines += [codex_turn(rng, start + turn * 30) for turn in range(max(1, turns // parts))]
        path.write_text("".join(lines), encoding="utf-8")
        paths.append(path)
    if index % 10 == 0:
        with (root / "session_index.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(dump({"id": session_id, "thread_name": words(rng, 2, 5), "updated_at": iso(moment)}))
    return paths


def gemini_messages(rng: random.Random, turns: int, moment: float) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for turn in range(turns):
        stamp = iso(moment + turn * 30)
        prompt = {"id": str(uuid.UUID(int=rng.getrandbits(128))), "timestamp": stamp, "type": "user"}
        messages.append({**prompt, "content": [{"text": words(rng, 4, 30)}]})
        result = [{"functionResponse": {"response": {"output": blob(rng)}}}]
        call = {"id": "c", "name": "read_file", "args": {}, "result": result}
        answer = {"id": str(uuid.UUID(int=rng.getrandbits(128))), "timestamp": stamp, "type": "gemini"}
        messages.append(
            {**answer, "content": words(rng, 10, 80), "model": "gemini-2.5-pro", "toolCalls": [call]}
        )
    return messages


def gemini_session(rng: random.Random, root: Path, index: int, turns: int) -> Path:
    session_id = str(uuid.UUID(int=rng.getrandbits(128)))
    moment = 1_760_000_000 + index * 600
    chats = root / "tmp" / f"project-{index % 50}" / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    (chats.parent / ".project_root").write_text(f"/home/ana/p{index % 50}\n", encoding="utf-8")
    metadata = {
        "sessionId": session_id,
        "projectHash": "h",
        "startTime": iso(moment),
        "lastUpdated": iso(moment),
    }
    messages = gemini_messages(rng, turns, moment)
    stem = f"session-{time.strftime('%Y-%m-%dT%H-%M', time.gmtime(moment))}-{session_id[:8]}"
    if rng.random() < 0.05:
        path = chats / f"{stem}.json"
        path.write_text(json.dumps({**metadata, "messages": messages}), encoding="utf-8")
        return path
    lines = [dump(metadata), *map(dump, messages)]
    if rng.random() < 0.3:
        lines.append(dump({"$set": {"summary": words(rng, 2, 5), "lastUpdated": iso(moment + turns * 30)}}))
    path = chats / f"{stem}.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


# -- generators for the database-backed and newer formats (used by bench_foreign_store --all-sources) --


def _turns(rng: random.Random, turns: int) -> list[tuple[str, str, str]]:
    """`(prompt, answer, tool output)` per turn."""
    return [
        (words(rng, 4, 12), "\n".join(words(rng, 6, 16) for _ in range(rng.randint(1, 4))), blob(rng))
        for _ in range(turns)
    ]


def antigravity_session(rng: random.Random, root: Path, index: int, turns: int) -> Path:
    """One Antigravity CLI transcript (requests in their wrappers, answers, tool calls and results)."""
    session_id = str(uuid.UUID(int=rng.getrandbits(128)))
    logs = root / "brain" / session_id / ".system_generated" / "logs"
    logs.mkdir(parents=True)
    moment = 1_760_000_000 + index * 600
    stamp = iso(moment)[:19] + "Z"
    cwd = json.dumps({"cwd": f"/home/ana/p{index % 50}", "os": "linux"})
    lines = [dump({"source": "SYSTEM", "created_at": stamp, "content": "You are a coding agent."})]
    for prompt, answer, output in _turns(rng, turns):
        request = f"<USER_REQUEST>{prompt}\n<ADDITIONAL_METADATA>{cwd}</ADDITIONAL_METADATA></USER_REQUEST>"
        lines += [
            dump({"source": "USER_EXPLICIT", "created_at": stamp, "content": request}),
            dump({"source": "TOOL_CALL", "created_at": stamp, "content": f"run_command: rg {prompt[:12]}"}),
            dump({"source": "TOOL_RESULT", "created_at": stamp, "content": output}),
            dump({"source": "MODEL", "created_at": stamp, "content": answer}),
        ]
    path = logs / "transcript.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def copilot_session(rng: random.Random, root: Path, index: int, turns: int) -> Path:
    """One GitHub Copilot CLI session folder: `events.jsonl` and `workspace.yaml`."""
    session_id = str(uuid.UUID(int=rng.getrandbits(128)))
    folder = root / "session-state" / session_id
    folder.mkdir(parents=True)
    moment = 1_760_000_000 + index * 600
    cwd = f"/home/ana/p{index % 50}"
    lines = [
        dump(
            {
                "type": "session.start",
                "timestamp": iso(moment),
                "data": {"sessionId": session_id, "context": {"cwd": cwd}},
            }
        )
    ]
    for number, (prompt, answer, output) in enumerate(_turns(rng, turns)):
        at = iso(moment + number * 30)
        lines += [
            dump({"type": "user.message", "id": f"u{number}", "timestamp": at, "data": {"content": prompt}}),
            dump(
                {
                    "type": "assistant.message",
                    "id": f"t{number}",
                    "timestamp": at,
                    "data": {
                        "content": "",
                        "toolRequests": [{"name": "grep", "arguments": {"pattern": prompt[:8]}}],
                        "reasoningText": words(rng, 5, 20),
                    },
                }
            ),
            dump({"type": "tool.execution_complete", "timestamp": at, "data": {"result": output}}),
            dump(
                {
                    "type": "assistant.message",
                    "id": f"a{number}",
                    "timestamp": at,
                    "data": {"content": answer},
                }
            ),
        ]
    (folder / "events.jsonl").write_text("".join(lines), encoding="utf-8")
    title = f"summary: {words(rng, 2, 5)}\n" if rng.random() < 0.5 else ""
    (folder / "workspace.yaml").write_text(
        f"id: {session_id}\ncwd: {cwd}\n{title}created_at: {iso(moment)}\n", encoding="utf-8"
    )
    return folder / "events.jsonl"


def qwen_session(rng: random.Random, root: Path, index: int, turns: int) -> Path:
    """One Qwen Code chat: a `parentUuid` chain with thoughts, function calls and responses."""
    session_id = str(uuid.UUID(int=rng.getrandbits(128)))
    cwd = f"/home/ana/p{index % 50}"
    chats = root / "projects" / cwd.replace("/", "-") / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    moment = 1_760_000_000 + index * 600
    lines: list[str] = []
    parent: str | None = None

    def add(kind: str, role: str, parts: list[dict[str, Any]]) -> None:
        nonlocal parent
        record_id = f"r{len(lines)}"
        lines.append(
            dump(
                {
                    "uuid": record_id,
                    "parentUuid": parent,
                    "sessionId": session_id,
                    "type": kind,
                    "timestamp": iso(moment + len(lines)),
                    "cwd": cwd,
                    "version": "0.9.0",
                    "message": {"role": role, "parts": parts},
                }
            )
        )
        parent = record_id

    for prompt, answer, output in _turns(rng, turns):
        add("user", "user", [{"text": prompt}])
        add(
            "assistant",
            "model",
            [
                {"text": words(rng, 5, 20), "thought": True},
                {"functionCall": {"name": "read_file", "args": {"path": "a.py"}}},
            ],
        )
        add(
            "tool_result",
            "model",
            [{"functionResponse": {"name": "read_file", "response": {"output": output}}}],
        )
        add("assistant", "model", [{"text": answer}])
    path = chats / f"{session_id}.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _sqlite(path: Path, schema: str) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(schema)
    return connection


def opencode_database(rng: random.Random, root: Path, sessions: int, turns: int) -> Path:
    """An `opencode.db` of `sessions` sessions (text, reasoning and tool parts; one in ten a child)."""
    path = root / "opencode.db"
    schema = (
        "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, directory TEXT,"
        " title TEXT, time_created INTEGER, time_updated INTEGER);"
        "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT);"
        "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT);"
        "CREATE INDEX part_session ON part(session_id);"
        "CREATE INDEX message_session ON message(session_id);"
    )
    with closing(_sqlite(path, schema)) as db:
        for index in range(sessions):
            session_id, moment = f"ses_{index:08d}", (1_760_000_000 + index * 600) * 1000
            parent = f"ses_{index - 1:08d}" if index % 10 == 9 else None
            title = words(rng, 2, 5) if rng.random() < 0.7 else "New session - 2026-01-01T00:00:00.000Z"
            db.execute(
                "INSERT INTO session VALUES (?, 'p', ?, ?, ?, ?, ?)",
                (session_id, parent, f"/home/ana/p{index % 50}", title, moment, moment + turns),
            )
            for number, (prompt, answer, output) in enumerate(_turns(rng, turns)):
                user, agent = f"msg_{index}_{number}u", f"msg_{index}_{number}a"
                db.execute(
                    "INSERT INTO message VALUES (?, ?, ?, ?)",
                    (user, session_id, moment + number * 2, json.dumps({"role": "user"})),
                )
                db.execute(
                    "INSERT INTO message VALUES (?, ?, ?, ?)",
                    (
                        agent,
                        session_id,
                        moment + number * 2 + 1,
                        json.dumps({"role": "assistant", "modelID": "m", "providerID": "p"}),
                    ),
                )
                db.executemany(
                    "INSERT INTO part VALUES (?, ?, ?, ?)",
                    [
                        (f"{user}.1", user, session_id, json.dumps({"type": "text", "text": prompt})),
                        (
                            f"{agent}.1",
                            agent,
                            session_id,
                            json.dumps({"type": "reasoning", "text": words(rng, 5, 20)}),
                        ),
                        (
                            f"{agent}.2",
                            agent,
                            session_id,
                            json.dumps({"type": "tool", "state": {"output": output}}),
                        ),
                        (f"{agent}.3", agent, session_id, json.dumps({"type": "text", "text": answer})),
                    ],
                )
        db.commit()
    return path


def cursor_database(rng: random.Random, root: Path, sessions: int, turns: int) -> Path:
    """Cursor's `globalStorage/state.vscdb` with `sessions` conversations (thinking and tool bubbles too)."""
    path = root / "globalStorage" / "state.vscdb"
    schema = "CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);"
    with closing(_sqlite(path, schema)) as db:
        for index in range(sessions):
            composer, moment = str(uuid.UUID(int=rng.getrandbits(128))), (1_760_000_000 + index * 600) * 1000
            name = words(rng, 2, 5) if rng.random() < 0.7 else ""
            db.execute(
                "INSERT INTO cursorDiskKV VALUES (?, ?)",
                (
                    f"composerData:{composer}",
                    json.dumps(
                        {
                            "composerId": composer,
                            "name": name,
                            "createdAt": moment,
                            "lastUpdatedAt": moment + turns,
                        }
                    ),
                ),
            )
            for number, (prompt, answer, output) in enumerate(_turns(rng, turns)):
                db.executemany(
                    "INSERT INTO cursorDiskKV VALUES (?, ?)",
                    [
                        (f"bubbleId:{composer}:{number}u", json.dumps({"type": 1, "text": prompt})),
                        (
                            f"bubbleId:{composer}:{number}t",
                            json.dumps(
                                {
                                    "type": 2,
                                    "text": "",
                                    "thinking": {"text": words(rng, 5, 20)},
                                    "toolFormerData": {"result": output},
                                }
                            ),
                        ),
                        (f"bubbleId:{composer}:{number}a", json.dumps({"type": 2, "text": answer})),
                    ],
                )
        db.commit()
    return path


def crush_databases(rng: random.Random, root: Path, projects: Path, sessions: int, turns: int) -> Path:
    """`sessions` Crush sessions over 50 projects' `.crush/crush.db`, listed in `root/projects.json`."""
    schema = (
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT, created_at INTEGER,"
        " updated_at INTEGER);"
        "CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT, role TEXT, parts TEXT, model TEXT,"
        " created_at INTEGER); CREATE INDEX messages_session ON messages(session_id);"
    )
    folders = [projects / f"p{number}" for number in range(50)]
    databases = [_sqlite(folder / ".crush" / "crush.db", schema) for folder in folders]
    try:
        for index in range(sessions):
            db, moment = databases[index % len(databases)], 1_760_000_000 + index * 600
            session_id = str(uuid.UUID(int=rng.getrandbits(128)))
            title = words(rng, 2, 5) if rng.random() < 0.7 else "Untitled Session"
            db.execute(
                "INSERT INTO sessions VALUES (?, NULL, ?, ?, ?)", (session_id, title, moment, moment + turns)
            )
            for number, (prompt, answer, output) in enumerate(_turns(rng, turns)):
                text = lambda value: json.dumps([{"type": "text", "data": {"text": value}}])  # noqa: E731
                tool = json.dumps(
                    [
                        {"type": "reasoning", "data": {"thinking": words(rng, 5, 20)}},
                        {"type": "tool_call", "data": {"id": "c", "name": "view"}},
                    ]
                )
                db.executemany(
                    "INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (f"{session_id}.{number}u", session_id, "user", text(prompt), None, moment + number),
                        (f"{session_id}.{number}t", session_id, "assistant", tool, "m", moment + number),
                        (
                            f"{session_id}.{number}r",
                            session_id,
                            "tool",
                            json.dumps([{"type": "tool_result", "data": {"content": output}}]),
                            None,
                            moment + number,
                        ),
                        (
                            f"{session_id}.{number}a",
                            session_id,
                            "assistant",
                            text(answer),
                            "m",
                            moment + number,
                        ),
                    ],
                )
        for db in databases:
            db.commit()
    finally:
        for db in databases:
            db.close()
    root.mkdir(parents=True, exist_ok=True)
    listed = [{"path": str(folder), "data_dir": ".crush"} for folder in folders]
    (root / "projects.json").write_text(json.dumps({"projects": listed}), encoding="utf-8")
    return root


# -- measurement ---------------------------------------------------------------------------------------


@dataclass
class Source:
    kind: str
    root: Path
    build: Callable[[random.Random, Path, int, int], Any]
    walk: Callable[[Path], list[Any]]
    scan_all: Callable[[list[Any], dict[Any, Any] | None], dict[Any, Any]]
    read_all: Callable[[list[Any]], int]
    grow: Callable[[random.Random, Any], None]


def claude_source(root: Path) -> Source:
    def scan_all(paths: list[Path], previous: dict[Any, Any] | None) -> dict[Any, Any]:
        states = {
            path: claude_code.scan_session_file(root, path, (previous or {}).get(path)) for path in paths
        }
        for state in states.values():
            state.summary()
        return states

    def grow(rng: random.Random, path: Path) -> None:
        state = {"id": path.stem, "cwd": "/home/ana/x", "parent": None}
        with path.open("a", encoding="utf-8") as handle:
            handle.write(claude_turn(rng, state, 1_790_000_000))

    return Source(
        "claude-code",
        root,
        claude_session,
        lambda root: list(claude_code.walk(root)),
        scan_all,
        lambda paths: sum(len(claude_code.read_session(root, p).snapshot["events"]) for p in paths),
        grow,
    )


def codex_source(root: Path) -> Source:
    def scan_all(groups: list[codex.CodexSessionFiles], previous: dict[Any, Any] | None) -> dict[Any, Any]:
        previous = previous or {}
        names = codex.scan_thread_names(root, previous.get("index"))
        states: dict[Any, Any] = {"index": names}
        for files in groups:
            scans = [codex.scan_session_file(root, path, previous.get(path)) for path in files.paths]
            states.update(zip(files.paths, scans, strict=True))
            codex.summarize(files.native_id, scans, names.names)
        return states

    def grow(rng: random.Random, files: codex.CodexSessionFiles) -> None:
        with files.paths[-1].open("a", encoding="utf-8") as handle:
            handle.write(codex_turn(rng, 1_790_000_000))

    names_cache: dict[str, Any] = {}

    def read_all(groups: list[codex.CodexSessionFiles]) -> int:
        names = names_cache.setdefault("names", codex.scan_thread_names(root).names)
        return sum(len(codex.read_session(root, files, names).snapshot["events"]) for files in groups)

    return Source("codex", root, codex_session, lambda root: list(codex.walk(root)), scan_all, read_all, grow)


def gemini_source(root: Path) -> Source:
    def scan_all(paths: list[Path], previous: dict[Any, Any] | None) -> dict[Any, Any]:
        states = {path: gemini.scan_session_file(root, path, (previous or {}).get(path)) for path in paths}
        project_cwds: dict[Path, str | None] = {}  # one `.project_root` read per project folder and pass
        for path, state in states.items():
            project = path.parent.parent
            if project not in project_cwds:
                project_cwds[project] = gemini.project_cwd(root, path)
            state.summary(project_cwds[project])
        return states

    def grow(rng: random.Random, path: Path) -> None:
        if path.suffix == ".jsonl":
            with path.open("a", encoding="utf-8") as handle:
                handle.writelines(dump(message) for message in gemini_messages(rng, 1, 1_790_000_000))

    return Source(
        "gemini",
        root,
        gemini_session,
        lambda root: list(gemini.walk(root)),
        scan_all,
        lambda paths: sum(len(gemini.read_session(root, p).snapshot["events"]) for p in paths),
        grow,
    )


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def traced_peak(action: Callable[[], Any]) -> float:
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def tree_bytes(root: Path) -> tuple[int, int]:
    files = [path for path in root.rglob("*") if path.is_file()]
    return len(files), sum(path.stat().st_size for path in files)


def bench_source(source: Source, sessions: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    for index in range(sessions):
        source.build(rng, source.root, index, rng.randint(2, 12))
    files, size = tree_bytes(source.root)
    walk_s, found = timed(lambda: source.walk(source.root))
    scan_s, states = timed(lambda: source.scan_all(found, None))
    peak = traced_peak(lambda: source.scan_all(found, None))
    rescan_s, _ = timed(lambda: source.scan_all(found, states))
    for item in rng.sample(found, min(GROWN_SESSIONS, len(found))):
        source.grow(rng, item)
    resume_s, _ = timed(lambda: source.scan_all(found, states))
    read_s, events = timed(lambda: source.read_all(found))
    state_sizes = [len(json.dumps(state.to_json())) for key, state in states.items() if key != "index"]
    return {
        "kind": source.kind,
        "sessions": len(found),
        "files": files,
        "mb": size / 2**20,
        "walk": walk_s,
        "scan": scan_s,
        "throughput": size / 2**20 / scan_s,
        "peak": peak,
        "rescan": rescan_s,
        "resume": resume_s,
        "read": read_s,
        "events": events,
        "state": sum(state_sizes) / max(1, len(state_sizes)),
    }


def bench_large(kind: str, directory: Path, megabytes: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    root = directory / f"large-{kind}"
    target = megabytes * 2**20
    if kind == "claude-code":
        path = claude_session(rng, root, 0, 1)
        state = {"id": path.stem, "cwd": "/home/ana/big", "parent": None}
        with path.open("a", encoding="utf-8") as handle:
            turn = 0
            while handle.tell() < target:
                handle.write(claude_turn(rng, state, 1_770_000_000 + turn))
                turn += 1

        def read() -> Any:
            return claude_code.read_session(root, path)
    elif kind == "codex":
        (path,) = codex_session(random.Random(seed + 1), root, 1, 1)
        with path.open("a", encoding="utf-8") as handle:
            turn = 0
            while handle.tell() < target:
                handle.write(codex_turn(rng, 1_770_000_000 + turn))
                turn += 1
        files = codex.CodexSessionFiles(path.name[-42:-6], (path,))

        def read() -> Any:
            return codex.read_session(root, files, {})
    else:
        path = gemini_session(random.Random(seed + 3), root, 1, 1)
        while path.suffix == ".json":
            path.unlink()
            path = gemini_session(random.Random(seed + 7), root, 2, 1)
        with path.open("a", encoding="utf-8") as handle:
            turn = 0
            while handle.tell() < target:
                handle.writelines(dump(message) for message in gemini_messages(rng, 1, 1_770_000_000 + turn))
                turn += 1

        def read() -> Any:
            return gemini.read_session(root, path)

    read_s, session = timed(read)
    peak = traced_peak(read)
    project_s, items = timed(lambda: project_session_conversation(session.snapshot))
    return {
        "kind": kind,
        "mb": path.stat().st_size / 2**20,
        "lines": session.lines_read,
        "items": len(items),
        "read": read_s,
        "throughput": path.stat().st_size / 2**20 / read_s,
        "peak": peak,
        "project": project_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=10_000, help="sessions per source (default 10000)")
    parser.add_argument("--large-mb", type=int, default=50, help="size of the large session per source")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="bench-sources-"))
    try:
        makers = {"claude-code": claude_source, "codex": codex_source, "gemini": gemini_source}
        rows = [
            bench_source(make(directory / kind), args.sessions, args.seed) for kind, make in makers.items()
        ]
        print(f"\n### Discovery: {args.sessions:,} sessions per source\n")
        print(
            "| source | sessions | files in root | size MB | walk s | first scan s | scan MB/s"
            f" | scan peak heap MB | rescan unchanged s | grow {GROWN_SESSIONS:,} + resume s"
            " | read all s | state bytes |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for row in rows:
            print(
                f"| {row['kind']} | {row['sessions']:,} | {row['files']:,} | {row['mb']:.0f}"
                f" | {row['walk']:.2f} | {row['scan']:.2f} | {row['throughput']:.0f} | {row['peak']:.1f}"
                f" | {row['rescan']:.2f} | {row['resume']:.2f} | {row['read']:.2f} | {row['state']:.0f} |"
            )
        print(f"\n### Full read of one large session (~{args.large_mb} MB)\n")
        print(
            "| source | size MB | lines | projected messages | read s | read MB/s | read peak heap MB"
            " | project s |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for kind in makers:
            row = bench_large(kind, directory, args.large_mb, args.seed)
            print(
                f"| {row['kind']} | {row['mb']:.0f} | {row['lines']:,} | {row['items']:,} | {row['read']:.2f}"
                f" | {row['throughput']:.0f} | {row['peak']:.1f} | {row['project']:.3f} |"
            )
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
