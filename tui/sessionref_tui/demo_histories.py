"""Small homes of the other agents for `sessionref demo`, written from scratch.

The demo never reads the user's own histories: it writes these homes into its temporary folder
and points the sources there, so the tour shows sessions from every tool, with their marks.
Each file is laid out and shaped the way the tool writes it (`docs/…/agent-histories.md`): tool
calls, thinking and injected scaffolding are there too, and the readers leave them out. Times are
relative to `now_ms`, so ages look real and a fixed clock gives the same pictures on every run.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from sessionref.sources import SourceKind

HISTORY_NAMESPACE: Final = uuid.UUID("5e55104e-f00d-4cab-9a1e-0000000000cc")
MINUTE_MS: Final = 60_000
HOUR_MS: Final = 60 * MINUTE_MS
DAY_MS: Final = 24 * HOUR_MS
ELSEWHERE: Final = "/srv/billing-service"
NOTES: Final = "/home/ana/notes"


def history_id(name: str) -> str:
    """The deterministic native id of the demo history session `name`."""
    return str(uuid.uuid5(HISTORY_NAMESPACE, name))


def _iso(moment_ms: int) -> str:
    return datetime.fromtimestamp(moment_ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{moment_ms % 1000:03d}Z"
    )


def _write(path: Path, records: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    text = "".join(dumps(record) + "\n" for record in records)
    path.write_text(text, encoding="utf-8")


def _escaped(cwd: str) -> str:
    """Claude Code's project folder name for `cwd` (`/`, `.`, `\\` and `:` become `-`)."""
    return "".join("-" if char in "/.\\:" else char for char in cwd)


# -- Claude Code ----------------------------------------------------------------------------------


class _Claude:
    """Writes one Claude Code session: lines chained by `parentUuid`, one per content block."""

    def __init__(self, name: str, cwd: str, start_ms: int) -> None:
        self.native = history_id(name)
        self.cwd = cwd
        self.moment = start_ms
        self.parent: str | None = None
        self.count = 0
        self.records: list[dict[str, Any]] = []

    def _line(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.count += 1
        self.moment += 20_000
        uid = str(uuid.uuid5(HISTORY_NAMESPACE, f"{self.native}-{self.count}"))
        record = {
            "parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
            "sessionId": self.native, "version": "2.0.30", "gitBranch": "main", "type": kind,
            **fields, "uuid": uid, "timestamp": _iso(self.moment),
        }  # fmt: skip
        self.parent = uid
        self.records.append(record)
        return record

    def prompt(self, text: str) -> None:
        self._line("user", message={"role": "user", "content": text})

    def answer(self, *blocks: dict[str, Any]) -> None:
        message_id = f"msg_{self.native[:8]}_{self.count}"
        for block in blocks:  # one line per block, one API message
            self._line("assistant", message={"id": message_id, "type": "message", "role": "assistant",
                                             "model": "claude-sonnet-4-5", "content": [block]})  # fmt: skip

    def tool_result(self, tool_id: str, output: str) -> None:
        self._line("user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": output}]})  # fmt: skip

    def compact(self, summary: str) -> None:
        boundary = self._line("system", subtype="compact_boundary", content="Conversation compacted")
        boundary["logicalParentUuid"], boundary["parentUuid"] = boundary["parentUuid"], None
        self._line("user", isCompactSummary=True, message={"role": "user", "content": (
            "This session is being continued from a previous conversation that ran out of context. "
            "The conversation is summarized below:\n" + summary)})  # fmt: skip

    def title(self, text: str) -> None:
        """A rename (`/rename`): the newest one is the title."""
        self.records.append({"type": "custom-title", "customTitle": text, "sessionId": self.native})

    def summary(self, text: str) -> None:
        """A summary line (the title when there is no rename)."""
        self.records.append({"type": "summary", "summary": text, "leafUuid": self.parent})

    def save(self, root: Path) -> None:
        _write(root / "projects" / _escaped(self.cwd) / f"{self.native}.jsonl", self.records)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _claude_home(root: Path, cwd: str, now_ms: int) -> None:
    ci = _Claude("claude-ci", cwd, now_ms - 3 * HOUR_MS)
    ci.prompt("CI takes 14 minutes on every push. Where does the time go?")
    ci.answer({"type": "thinking", "thinking": "Look at the workflow file first.", "signature": "sig"},
              _text("Let me look at the workflow."),
              {"type": "tool_use", "id": "toolu_ci_1", "name": "Read",
               "input": {"file_path": f"{cwd}/.github/workflows/ci.yml"}})  # fmt: skip
    ci.tool_result("toolu_ci_1", "jobs:\n  test:\n    steps: [checkout, setup-python, pip install, pytest]\n")
    ci.answer(
        _text(
            "Three things dominate: `pip install` without a cache (4 min), the full test suite "
            "in one process (8 min) and a Docker build nobody uses on pull requests (2 min)."
        )
    )
    ci.prompt("Fix the first two.")
    ci.answer(
        _text(
            "Done: `actions/cache` keyed on the lock file, and `pytest -n auto` with the slow "
            "integration tests marked and run nightly. A push now takes 4 min 10 s."
        )
    )
    ci.title("Speed up CI (14 → 4 min)")
    ci.save(root)

    webhook = _Claude("claude-webhook", ELSEWHERE, now_ms - 6 * DAY_MS)
    webhook.prompt("Refund webhooks are accepted without checking the signature. Plan a fix.")
    webhook.answer(
        _text(
            "Verify the HMAC header against the raw body before parsing JSON, with a "
            "constant-time compare and a 5-minute timestamp window."
        )
    )
    webhook.compact(
        "The user asked to secure the refund webhook. Agreed: HMAC over the raw body, "
        "constant-time compare, reject timestamps older than 5 minutes, rotate the secret "
        "through the vault. Done: verification middleware and its tests."
    )
    webhook.prompt("Now roll it out without breaking the partner that still sends unsigned calls.")
    webhook.answer(
        _text(
            "Log-only mode for a week with a per-partner allowlist, then enforce; the "
            "dashboard counts unsigned calls per partner so we know who to chase."
        )
    )
    webhook.summary("Refund webhook signature check")
    webhook.save(root)


# -- Codex CLI ------------------------------------------------------------------------------------


def _codex_home(root: Path, cwd: str, now_ms: int) -> None:
    native = history_id("codex-pagination")
    start = now_ms - 26 * HOUR_MS
    moment = start

    def line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        nonlocal moment
        moment += 15_000
        return {"timestamp": _iso(moment), "type": kind, "payload": payload}

    def said(role: str, text: str) -> list[dict[str, Any]]:
        item_type = "input_text" if role == "user" else "output_text"
        event = "user_message" if role == "user" else "agent_message"
        plain = {"kind": "plain"} if role == "user" else {}
        content = [{"type": item_type, "text": text}]
        return [
            line("response_item", {"type": "message", "role": role, "content": content}),
            line("event_msg", {"type": event, "message": text, **plain}),
        ]

    records = [
        line(
            "session_meta",
            {
                "id": native,
                "timestamp": _iso(start),
                "cwd": cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.63.0",
                "source": "cli",
                "model_provider": "openai",
            },
        ),
        line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": (
                            f"<environment_context>\n  <cwd>{cwd}</cwd>\n"
                            "  <sandbox_mode>workspace-write</sandbox_mode>\n"
                            "</environment_context>"
                        ),
                    }
                ],
            },
        ),
        line("turn_context", {"cwd": cwd, "approval_policy": "on-request", "model": "gpt-5-codex"}),
        *said("user", "The /payments list endpoint times out past 50k rows. Add pagination."),
        line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAB..."}),
        line(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "call_id": "call_1",
                "arguments": json.dumps({"command": ["rg", "def list_payments"]}),
            },
        ),
        line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": "api/payments.py:88:def list_payments(request):",
            },
        ),
        *said(
            "assistant",
            "Switched `list_payments` to keyset pagination on (created_at, id) with a "
            "`cursor` parameter and a default page of 100; offset pagination would still "
            "scan the skipped rows.",
        ),
        *said("user", "Keep the old `page` parameter working for one release."),
        *said(
            "assistant",
            "`page` still works and answers with a `Deprecation` header pointing to "
            "`cursor`; a test covers both.",
        ),
        line("event_msg", {"type": "token_count", "info": None}),
    ]
    day = datetime.fromtimestamp(start / 1000, tz=UTC)
    stamp = day.strftime("%Y-%m-%dT%H-%M-%S")
    _write(root / "sessions" / day.strftime("%Y/%m/%d") / f"rollout-{stamp}-{native}.jsonl", records)
    renamed = {"id": native, "thread_name": "Payments API pagination", "updated_at": _iso(moment)}
    _write(root / "session_index.jsonl", [renamed])


# -- Gemini CLI -----------------------------------------------------------------------------------


def _gemini_home(root: Path, now_ms: int) -> None:
    native = history_id("gemini-roadmap")
    start = now_ms - 9 * DAY_MS
    project = root / "tmp" / "notes"
    project.mkdir(parents=True, exist_ok=True)
    (project / ".project_root").write_text(NOTES + "\n", encoding="utf-8")

    def message(index: int, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
        message_id = str(uuid.uuid5(HISTORY_NAMESPACE, f"{native}-{index}"))
        moment = _iso(start + index * MINUTE_MS)
        return {"id": message_id, "timestamp": moment, "type": kind, "content": content, **extra}

    records = [
        {"sessionId": native, "projectHash": "notes", "startTime": _iso(start), "lastUpdated": _iso(start)},
        message(1, "user", "Summarise the Q3 roadmap doc in five bullets."),
        message(
            2,
            "gemini",
            [
                {"text": "Thinking about the doc structure.", "thought": True},
                {
                    "text": "- Self-serve refunds\n- Faster checkout\n- EU data residency\n"
                    "- Partner API v2\n- Retire the legacy dashboard"
                },
            ],
            model="gemini-2.5-pro",
            tokens={"input": 5210, "output": 61},
        ),
        message(3, "user", "Which of these depend on the billing team?"),
        message(
            4,
            "gemini",
            "Self-serve refunds and EU data residency: both change how invoices are stored.",
            model="gemini-2.5-pro",
        ),
        {"$set": {"summary": "Q3 roadmap summary", "lastUpdated": _iso(start + 4 * MINUTE_MS)}},
    ]
    stamp = datetime.fromtimestamp(start / 1000, tz=UTC).strftime("%Y-%m-%dT%H-%M")
    _write(project / "chats" / f"session-{stamp}-{native[:8]}.jsonl", records)


# -- the newer agents: one older session each, in other folders ----------------------------------

WIKI: Final = "/home/ana/team-wiki"
INFRA: Final = "/srv/infra"


def _antigravity_home(root: Path, now_ms: int) -> None:
    native = history_id("antigravity-wiki")
    start = now_ms - 16 * DAY_MS
    meta = json.dumps({"cwd": WIKI})
    records = [
        {"source": "SYSTEM", "created_at": _iso(start), "content": "You are a coding agent."},
        {
            "source": "USER_EXPLICIT",
            "created_at": _iso(start + MINUTE_MS),
            "content": f"<USER_REQUEST>Fix the broken links in the onboarding page</USER_REQUEST>"
            f"<ADDITIONAL_METADATA>{meta}</ADDITIONAL_METADATA>",
        },
        {"source": "TOOL_CALL", "created_at": _iso(start + 2 * MINUTE_MS), "content": "grep -r 'http://old'"},
        {
            "source": "MODEL",
            "created_at": _iso(start + 3 * MINUTE_MS),
            "content": "Six links pointed at the old wiki host; all now use the new one.",
        },
    ]
    _write(root / "brain" / native / ".system_generated" / "logs" / "transcript.jsonl", records)


def _copilot_home(root: Path, now_ms: int) -> None:
    native = history_id("copilot-terraform")
    start = now_ms - 18 * DAY_MS
    folder = root / "session-state" / native

    def event(minutes: int, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        return {"type": kind, "timestamp": _iso(start + minutes * MINUTE_MS), "data": data}

    events = [
        event(0, "session.start", {"sessionId": native, "context": {"cwd": INFRA}}),
        event(1, "user.message", {"content": "Why does terraform plan want to recreate the bucket?"}),
        event(2, "assistant.message", {"content": "", "toolRequests": [{"name": "shell"}]}),
        event(
            3, "assistant.message", {"content": "The bucket name changed case; pin it with a moved block."}
        ),
    ]
    _write(folder / "events.jsonl", events)
    (folder / "workspace.yaml").write_text(
        f"cwd: {INFRA}\nsummary: Terraform bucket recreate\n", encoding="utf-8"
    )


def _qwen_home(root: Path, now_ms: int) -> None:
    native = history_id("qwen-lint")
    start = now_ms - 20 * DAY_MS

    def record(index: int, kind: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "uuid": f"{native}-{index}", "parentUuid": f"{native}-{index - 1}" if index > 1 else None,
            "sessionId": native, "timestamp": _iso(start + index * MINUTE_MS), "type": kind, "cwd": INFRA,
            "message": {"role": "user" if kind == "user" else "model", "parts": parts},
        }  # fmt: skip

    _write(
        root / "projects" / _escaped(INFRA) / "chats" / f"{native}.jsonl",
        [
            record(1, "user", [{"text": "Make the shell scripts pass shellcheck"}]),
            record(
                2,
                "assistant",
                [{"text": "Check each script.", "thought": True}, {"text": "Quoted 14 variables."}],
            ),
        ],
    )


def _opencode_home(root: Path, now_ms: int) -> None:
    import sqlite3  # only the demo writes a database, and only into its own folder
    from contextlib import closing

    native = "ses_" + history_id("opencode-docs").replace("-", "")[:24]
    start = now_ms - 22 * DAY_MS
    root.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(root / "opencode.db")) as db:
        db.executescript(
            "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, directory TEXT,"
            " title TEXT, time_created INTEGER, time_updated INTEGER);"
            "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT);"
            "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT);"
        )
        db.execute(
            "INSERT INTO session VALUES (?, 'p', NULL, ?, 'Docs site search', ?, ?)",
            (native, WIKI, start, start + 3 * MINUTE_MS),
        )
        db.execute(
            "INSERT INTO message VALUES ('m1', ?, ?, ?)",
            (native, start + MINUTE_MS, json.dumps({"role": "user"})),
        )
        db.execute(
            "INSERT INTO part VALUES ('p1', 'm1', ?, ?)",
            (native, json.dumps({"type": "text", "text": "Add search to the docs site"})),
        )
        db.execute(
            "INSERT INTO message VALUES ('m2', ?, ?, ?)",
            (native, start + 2 * MINUTE_MS, json.dumps({"role": "assistant", "modelID": "gpt-5"})),
        )
        db.execute(
            "INSERT INTO part VALUES ('p2', 'm2', ?, ?)",
            (native, json.dumps({"type": "reasoning", "text": "Thinking about indexes"})),
        )
        db.execute(
            "INSERT INTO part VALUES ('p3', 'm2', ?, ?)",
            (native, json.dumps({"type": "text", "text": "Added a client-side index built at deploy time."})),
        )
        db.commit()


def _cursor_home(root: Path, now_ms: int) -> None:
    import sqlite3  # only the demo writes a database, and only into its own folder
    from contextlib import closing

    native = history_id("cursor-dark-mode")
    start = now_ms - 24 * DAY_MS
    folder = root / "globalStorage"
    folder.mkdir(parents=True, exist_ok=True)
    composer = {"composerId": native, "name": "Dark mode toggle", "createdAt": start}
    composer["lastUpdatedAt"] = start + 4 * MINUTE_MS
    bubbles = [
        ("b1", {"type": 1, "text": "Add a dark mode toggle to the settings page"}),
        ("b2", {"type": 2, "text": "", "thinking": {"text": "Thinking about CSS variables"}}),
        ("b3", {"type": 2, "text": "", "toolFormerData": {"name": "read_file", "result": "grep -r theme"}}),
        (
            "b4",
            {"type": 2, "text": "The toggle sets a `data-theme` attribute; the colors are CSS variables."},
        ),
    ]
    with closing(sqlite3.connect(folder / "state.vscdb")) as db:
        db.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        db.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"composerData:{native}", json.dumps(composer)))
        for bubble_id, bubble in bubbles:
            db.execute(
                "INSERT INTO cursorDiskKV VALUES (?, ?)",
                (f"bubbleId:{native}:{bubble_id}", json.dumps(bubble)),
            )
        db.commit()


def _cursor_agent_home(root: Path, cwd: str, now_ms: int) -> None:
    """One chat of Cursor's agent, in the project folder Cursor names after `cwd` (`home-ana-src-app`):
    its transcript holds no times, so the file's mtime is set to when it was last written."""
    import os  # only to date the transcript like an older chat

    from sessionref.sources.cursor_agent import folder_key

    native = history_id("cursor-agent-flags")
    path = root / "projects" / folder_key(cwd) / "agent-transcripts" / native / f"{native}.jsonl"
    records: list[dict[str, Any]] = [
        {
            "role": "user",
            "message": {"content": [_text("<user_query>\nRemove the unused feature flags\n</user_query>")]},
        },
        {
            "role": "assistant",
            "message": {
                "content": [
                    {"type": "thinking", "thinking": "Thinking about which flags are read"},
                    {"type": "tool_use", "id": "t1", "name": "Grep", "input": {"pattern": "grep -r FLAG_"}},
                ]
            },
        },
        {"role": "assistant", "message": {"content": [_text("Removed four flags nothing reads any more.")]}},
        {"type": "turn_ended", "status": "success"},
    ]
    _write(path, records)
    written = (now_ms - 27 * DAY_MS) / 1000
    os.utime(path, (written, written))


def _crush_home(root: Path, project: Path, now_ms: int) -> None:
    """Crush's data folder, naming one project whose own `.crush/crush.db` holds a session (and a
    sub-agent's, which Crush hides)."""
    import sqlite3  # only the demo writes a database, and only into its own folder
    from contextlib import closing

    native = history_id("crush-upload")
    start = (now_ms - 26 * DAY_MS) // 1000  # Crush keeps Unix seconds
    (project / ".crush").mkdir(parents=True, exist_ok=True)
    root.mkdir(parents=True, exist_ok=True)
    (root / "projects.json").write_text(
        json.dumps({"projects": [{"path": str(project), "data_dir": ".crush"}]}), encoding="utf-8"
    )

    def parts(*items: tuple[str, dict[str, Any]]) -> str:
        return json.dumps([{"type": kind, "data": data} for kind, data in items])

    messages = [
        ("m1", native, "user", parts(("text", {"text": "Retry the upload when the link drops"}))),
        (
            "m2",
            native,
            "assistant",
            parts(
                ("reasoning", {"thinking": "Thinking about backoff"}),
                ("tool_call", {"id": "call_1", "name": "view", "input": '{"path": "upload.go"}'}),
            ),
        ),
        (
            "m3",
            native,
            "tool",
            parts(("tool_result", {"tool_call_id": "call_1", "content": "grep -r Retry"})),
        ),
        ("m4", native, "assistant", parts(("text", {"text": "Uploads now retry three times with backoff."}))),
        ("s1", "m2$$call_1", "user", parts(("text", {"text": "Sub-agent task text"}))),
    ]
    with closing(sqlite3.connect(project / ".crush" / "crush.db")) as db:
        db.executescript(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,"
            " updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL);"
            "CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,"
            " parts TEXT NOT NULL DEFAULT '[]', model TEXT, created_at INTEGER NOT NULL);"
        )
        db.execute(
            "INSERT INTO sessions VALUES (?, NULL, 'Untitled Session', ?, ?)", (native, start + 240, start)
        )
        db.execute(
            "INSERT INTO sessions VALUES ('m2$$call_1', ?, 'Explore upload.go', ?, ?)",
            (native, start + 120, start),
        )
        for number, (message_id, session, role, content) in enumerate(messages, start=1):
            db.execute(
                "INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?)",
                (message_id, session, role, content, "claude-sonnet-4", start + 60 * number),
            )
        db.commit()


def seed_demo_histories(folder: Path, cwd: str, *, now_ms: int) -> dict[SourceKind, Path]:
    """Write a home of each agent the demo shows under `folder`; returns each root.

    Two sessions of Claude Code (one in `cwd`, one compacted elsewhere), one of Codex CLI in `cwd`
    (renamed in its `session_index.jsonl`), one of Gemini CLI in another project, and one older
    session each of Antigravity CLI, GitHub Copilot CLI, Qwen Code, OpenCode, Cursor (no folder), Cursor's
    agent (in `cwd`, when that is the process's folder: its folder is found by matching) and Crush (its
    project, `crush-project`, is under `folder`: Crush keeps its database in the project).
    """
    roots: dict[SourceKind, Path] = {
        "claude-code": folder / "claude",
        "codex": folder / "codex",
        "gemini": folder / "gemini-home" / ".gemini",
        "antigravity": folder / "gemini-home" / ".gemini" / "antigravity-cli",
        "copilot": folder / "copilot",
        "qwen-code": folder / "qwen",
        "opencode": folder / "opencode",
        "cursor": folder / "cursor",
        "cursor-agent": folder / "cursor-home" / ".cursor",
        "crush": folder / "crush",
    }
    _claude_home(roots["claude-code"], cwd, now_ms)
    _codex_home(roots["codex"], cwd, now_ms)
    _gemini_home(roots["gemini"], now_ms)
    _antigravity_home(roots["antigravity"], now_ms)
    _copilot_home(roots["copilot"], now_ms)
    _qwen_home(roots["qwen-code"], now_ms)
    _opencode_home(roots["opencode"], now_ms)
    _cursor_home(roots["cursor"], now_ms)
    _cursor_agent_home(roots["cursor-agent"], cwd, now_ms)
    # The project's path is the session's folder; a linked one would not be read.
    _crush_home(roots["crush"], folder.resolve() / "crush-project", now_ms)
    return roots
