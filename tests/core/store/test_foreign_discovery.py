"""Claude Code, Codex CLI and Gemini CLI sessions in the store's discovery index (issue 11).

Listed and ranked with the store's own sessions, caught up incrementally (new, grown, rewritten,
removed files, split Codex files, renames), hidden when a source is switched off, gone when its
root disappears; nothing in a source folder is ever written.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from foreign_fixtures import (
    BLOG,
    CART,
    CI,
    FIXTURE_SESSIONS,
    SPLIT,
    TRIAGE,
    claude_answer,
    fixture_roots,
    line,
    open_with,
    sources_of,
    write_claude_session,
)
from histories import tree_state
from sessionref.store import StoreError, open_store
from sessionref.store.index import INDEX_FILE_NAME
from test_index import header, write_log


async def ids(store: object) -> list[str]:
    return [record.id for record in await store.list_sessions()]  # type: ignore[attr-defined]


async def test_sessions_of_every_source_are_listed_beside_the_stores_own(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    write_log(tmp_path / "store", "--w--/own", header("own", cwd="/home/ana/shop"), [])
    with closing(open_with(tmp_path, roots)) as store:
        listed = await ids(store)
        assert len(listed) == FIXTURE_SESSIONS + 1
        assert {CART, BLOG, SPLIT, TRIAGE, CI, "own"} <= set(listed)
        assert store.title(TRIAGE) == "Endpoint triage"  # the last rename in session_index.jsonl
        assert store.title(CART) == "Cart discount bug"
        assert store.record(SPLIT).cwd == "/home/ana/db"
        assert store.source_of(CART) is not None and store.source_of(CART).kind == "claude-code"  # type: ignore[union-attr]
        assert store.source_of("own") is None


async def test_ranking_puts_the_same_folder_first_whatever_the_source(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    with closing(open_with(tmp_path, roots)) as store:
        found = await store.search_candidates(exclude_id="", target_cwd="/home/ana/shop", needle="", limit=50)
        cwds = [record.cwd for record, _ in found]
        same = [cwd for cwd in cwds if cwd == "/home/ana/shop"]
        assert cwds[: len(same)] == same and len(same) >= 4  # Claude and Gemini sessions of that folder
        activity = [record.last_activity for record, _ in found[: len(same)]]
        assert activity == sorted(activity, reverse=True)
        labels = [
            label
            for _, label in await store.search_candidates(
                exclude_id="", target_cwd=None, needle="release", limit=5
            )
        ]
        assert labels == ["Write release notes for v2 from the changelog."]


async def test_first_open_reports_progress_over_every_history_file(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    reports: list[tuple[int, int]] = []
    store = open_with(tmp_path, roots, progress=lambda done, total: reports.append((done, total)))
    store.close()
    assert reports and reports[-1][0] == reports[-1][1]
    total = reports[-1][1]
    assert total >= FIXTURE_SESSIONS  # one scan per file (Codex's split session has two)
    reports.clear()
    again = open_with(tmp_path, roots, progress=lambda done, total: reports.append((done, total)))
    again.close()
    assert reports == []  # nothing new: a stat per file, no scan


async def test_a_new_file_a_grown_one_and_a_removed_one_are_caught_up(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    with closing(open_with(tmp_path, roots, catch_up=False)) as store:
        claude = roots["claude-code"]
        added = write_claude_session(
            claude, "-home-ana-new", "0d0d0d0d-0000-4000-8000-000000000001", "Brand new question",
            "2026-05-01T10:00:00.000Z", "/home/ana/new",
        )  # fmt: skip
        blog = next((claude / "projects" / "-home-ana-blog").glob("*.jsonl"))
        records = [json.loads(raw) for raw in blog.read_text().splitlines() if raw.startswith("{")]
        leaf = [record for record in records if record.get("type") in ("user", "assistant")][-1]
        with blog.open("a", encoding="utf-8") as stream:
            stream.write(line(claude_answer(
                blog.stem, "grown-1", leaf["uuid"], "Added later.", "2026-06-01T00:00:00.000Z",
                "/home/ana/blog")))  # fmt: skip
        (roots["gemini"] / "tmp" / "shop-app" / "chats" / "session-2026-03-08T09-15-5e4d3c2b.jsonl").unlink()
        store.refresh()
        listed = await ids(store)
        assert "claude-code:0d0d0d0d-0000-4000-8000-000000000001" in listed
        assert store.title("claude-code:0d0d0d0d-0000-4000-8000-000000000001") == "Brand new question"
        assert "gemini:5e4d3c2b-aaaa-4bbb-8ccc-dddddddddddd" not in listed
        assert store.record(BLOG).last_activity == 1780272000000  # 2026-06-01: the grown line
        assert listed[0] == BLOG
        found = await store.search_candidates(exclude_id="", target_cwd=None, needle="brand new", limit=5)
        assert [record.id for record, _ in found] == ["claude-code:0d0d0d0d-0000-4000-8000-000000000001"]
        surface = await store.read_surface(BLOG)
        assert surface["events"][-1]["data"]["message"]["content"][0]["text"] == "Added later."
        added.unlink()
        store.refresh()
        assert "claude-code:0d0d0d0d-0000-4000-8000-000000000001" not in await ids(store)


async def test_a_rewritten_file_is_scanned_again_from_its_start(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    claude = roots["claude-code"]
    path = write_claude_session(
        claude, "-p", "0e0e0e0e-0000-4000-8000-000000000001", "First version of the question",
        "2026-05-01T10:00:00.000Z", "/p",
    )  # fmt: skip
    store = open_with(tmp_path, roots, "claude-code")
    store.close()
    write_claude_session(
        claude, "-p", "0e0e0e0e-0000-4000-8000-000000000001", "Rewritten question, longer than before",
        "2026-05-02T10:00:00.000Z", "/p",
    )  # fmt: skip
    os.utime(path, ns=(1, 1))
    with closing(open_with(tmp_path, roots, "claude-code")) as reopened:
        assert reopened.title("claude-code:0e0e0e0e-0000-4000-8000-000000000001") == (
            "Rewritten question, longer than before"
        )


async def test_codex_split_files_and_renames_are_one_session_caught_up(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    with closing(open_with(tmp_path, roots, "codex")) as store:
        assert len(store.read_log_report(SPLIT).events) > 0
        before = store.record(SPLIT).last_activity
        day = roots["codex"] / "sessions" / "2026" / "03" / "09"
        day.mkdir(parents=True)
        native = SPLIT.split(":", 1)[1]
        (day / f"rollout-2026-03-09T08-00-00-{native}.jsonl").write_text(
            line({"timestamp": "2026-03-09T08:00:00.000Z", "type": "session_meta",
                  "payload": {"id": native, "timestamp": "2026-03-09T08:00:00.000Z", "cwd": "/home/ana/db"}})
            + line({"timestamp": "2026-03-09T08:00:05.000Z", "type": "event_msg",
                    "payload": {"type": "user_message", "message": "A third file continues it."}}),
            encoding="utf-8",
        )  # fmt: skip
        with (roots["codex"] / "session_index.jsonl").open("a", encoding="utf-8") as stream:
            stream.write(line({"id": native, "thread_name": "Users table migration", "updated_at": "x"}))
        store.refresh()
        assert [record.id for record in await store.list_sessions()].count(SPLIT) == 1
        assert store.title(SPLIT) == "Users table migration"
        assert store.record(SPLIT).last_activity > before
        texts = [
            block["text"]
            for event in (await store.read_surface(SPLIT))["events"]
            for block in event["data"].get("content", [])
        ]
        assert texts[-1] == "A third file continues it."


async def test_a_source_switched_off_hides_its_sessions_and_on_again_needs_no_rescan(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    open_with(tmp_path, roots).close()
    with closing(open_store(tmp_path / "store", sources=sources_of(roots, "codex"))) as without:
        assert all(session_id.startswith("codex:") for session_id in await ids(without))
        with pytest.raises(StoreError) as raised:
            without.record(CART)
        assert raised.value.code == "STORE_SESSION_NOT_FOUND"
    reports: list[tuple[int, int]] = []
    with closing(
        open_with(tmp_path, roots, progress=lambda done, total: reports.append((done, total)))
    ) as again:
        assert len(await ids(again)) == FIXTURE_SESSIONS
        assert reports == []  # the rows of the switched-off sources were kept


async def test_a_root_that_disappears_takes_its_sessions_with_it(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    with closing(open_with(tmp_path, roots)) as store:
        shutil.rmtree(roots["gemini"])
        store.refresh()
        assert not [session_id for session_id in await ids(store) if session_id.startswith("gemini:")]
        assert len(await ids(store)) == FIXTURE_SESSIONS - 4
    index = sqlite3.connect(tmp_path / "store" / INDEX_FILE_NAME)
    assert index.execute("SELECT count(*) FROM foreign_sessions WHERE kind = 'gemini'").fetchone()[0] == 0
    index.close()


async def test_nothing_in_a_source_folder_is_ever_written(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    before = {kind: tree_state(root) for kind, root in roots.items()}
    with closing(open_with(tmp_path, roots)) as store:
        for record in await store.list_sessions():
            await store.read_surface_report(record.id)
            store.read_log_report(record.id)
        store.refresh()
        with pytest.raises(StoreError):
            store.append(CART, [{"type": "user/message", "data": {}}])
    assert {kind: tree_state(root) for kind, root in roots.items()} == before


async def test_a_symlink_out_of_a_source_root_is_not_followed(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    outside = write_claude_session(
        tmp_path / "elsewhere", "-x", "0f0f0f0f-0000-4000-8000-000000000001", "Secret outside the root",
        "2026-05-01T10:00:00.000Z", "/x",
    )  # fmt: skip
    project = roots["claude-code"] / "projects" / "-linked"
    project.mkdir()
    (project / outside.name).symlink_to(outside)
    (roots["claude-code"] / "projects" / "-linked-folder").symlink_to(outside.parent)
    with closing(open_with(tmp_path, roots, "claude-code")) as store:
        assert "claude-code:0f0f0f0f-0000-4000-8000-000000000001" not in await ids(store)


async def test_index_rows_outside_the_root_or_of_the_wrong_shape_are_ignored(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    write_log(tmp_path / "store", "--w--/own", header("own"), [])  # so that an open serves the index
    open_with(tmp_path, roots, "claude-code").close()
    index = sqlite3.connect(tmp_path / "store" / INDEX_FILE_NAME)
    with index:
        index.execute("UPDATE foreign_sessions SET paths = ? WHERE session_id = ?",
                      (json.dumps(["/etc/passwd"]), CART))  # fmt: skip
        index.execute("UPDATE foreign_sessions SET paths = ? WHERE session_id = ?",
                      (json.dumps([str(roots["claude-code"]) + "/../escape.jsonl"]), BLOG))  # fmt: skip
    index.close()
    with closing(open_with(tmp_path, roots, "claude-code", catch_up=False)) as store:
        listed = await ids(store)
        assert CART not in listed and BLOG not in listed  # dropped on load, before any catch-up
        store.refresh()
        assert {CART, BLOG} <= set(await ids(store))  # and found again by walking the root
        assert store.read_log_report(CART).header["id"] == CART


async def test_a_log_may_not_take_an_id_that_names_another_agents_session(tmp_path: Path) -> None:
    write_log(tmp_path, "--w--/x", header(CART), [])
    with closing(open_store(tmp_path)) as store:
        assert await ids(store) == []
        with pytest.raises(StoreError) as raised:
            store.create_session(cwd=None, session_id="codex:abc")
        assert raised.value.code == "STORE_INVALID_ID"


async def test_one_claude_session_under_two_projects_is_listed_once_newest_read(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    native = "0a0a0a0a-0000-4000-8000-000000000001"
    write_claude_session(roots["claude-code"], "-a", native, "Older copy", "2026-05-01T10:00:00.000Z", "/a")
    write_claude_session(roots["claude-code"], "-b", native, "Newer copy", "2026-05-02T10:00:00.000Z", "/b")
    with closing(open_with(tmp_path, roots, "claude-code")) as store:
        assert (await ids(store)).count(f"claude-code:{native}") == 1
        assert store.title(f"claude-code:{native}") == "Newer copy"
        assert store.record(f"claude-code:{native}").cwd == "/b"


def test_conversation_sources_name_each_foreign_session_with_a_version(tmp_path: Path) -> None:
    roots = fixture_roots(tmp_path)
    with closing(open_with(tmp_path, roots)) as store:
        sources = {source.session_id: source for source in store.conversation_sources()}
        assert sources[CART].kind == "claude-code" and sources[SPLIT].kind == "codex"
        assert sources[CI].kind == "gemini"
        assert sources[CART].path.endswith("5f1c2a9e-3b7d-4c1e-9a2f-0d8e6b4c1a01.jsonl")
        assert sources[SPLIT].version.count(";") == 1  # two files, each `size:mtime`
        version = sources[CART].version
        with Path(sources[CART].path).open("a", encoding="utf-8") as stream:
            stream.write("\n")
        store.refresh()
        assert {s.session_id: s for s in store.conversation_sources()}[CART].version != version


async def test_a_gemini_session_in_a_hashed_project_folder_ranks_with_its_folder(tmp_path: Path) -> None:
    """Without `.project_root`, the folder named by the SHA-256 of a folder the store knows is that folder."""
    gemini_root = tmp_path / "homes" / "gemini"
    digest = hashlib.sha256(b"/home/ana/api").hexdigest()
    chats = gemini_root / "tmp" / digest / "chats"
    chats.mkdir(parents=True)
    (chats / "session-2026-03-09T10-00-77aa.jsonl").write_text(
        line({"sessionId": "77aa", "projectHash": digest, "startTime": "2026-03-09T10:00:00.000Z"})
        + line(
            {"id": "m1", "timestamp": "2026-03-09T10:00:01.000Z", "type": "user", "content": "api paging"}
        ),
        encoding="utf-8",
    )
    write_log(tmp_path / "store", "--w--/own", header("own", cwd="/home/ana/api"), [])
    with closing(open_with(tmp_path, {"gemini": gemini_root}, "gemini")) as store:
        assert store.record("gemini:77aa").cwd == "/home/ana/api"
        found = await store.search_candidates(exclude_id="", target_cwd="/home/ana/api", needle="", limit=5)
        assert {record.id for record, _ in found[:2]} == {"own", "gemini:77aa"}
