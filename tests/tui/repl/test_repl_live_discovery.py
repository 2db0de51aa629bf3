"""The line mode sees a session another process creates on the same store while it runs, with no restart."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from prompt_toolkit.input import create_pipe_input
from repl_harness import HERE, open_harness
from sessionref.store import StoreError

SECOND_REPL = r"""
import sys
from sessionref.store import open_store
store = open_store(sys.argv[1])
record = store.create_session(cwd=sys.argv[2], session_id="other-repl-session")
store.rename(record.id, "Deploy from the other pane")
store.close()
print("created", flush=True)
"""


def _title(store: object, session_id: str) -> str | None:
    try:
        return store.title(session_id)  # type: ignore[attr-defined, no-any-return]
    except StoreError:
        return None


async def test_a_session_created_by_another_process_is_listed_while_the_line_mode_runs(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    with create_pipe_input() as pipe:
        harness = await open_harness(root, pipe)
        harness.mode._sessions_changed = harness.poke  # type: ignore[method-assign]  # a change wakes `until`
        harness.start()
        try:
            live = harness.workspace.watch_changes(harness.poke)  # the line mode's, already running
            assert await asyncio.to_thread(live.ready.wait, 60)
            environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
            created = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-c", SECOND_REPL, str(root), HERE],
                capture_output=True,
                text=True,
                env=environment,
                check=True,
            )
            assert created.stdout.strip() == "created"
            await harness.until(
                lambda: _title(harness.store, "other-repl-session") == "Deploy from the other pane"
            )
            harness.type("/sessions deploy\r")
            await harness.until(lambda: harness.printed("Deploy from the other pane"))
        finally:
            await harness.stop()
            await harness.workspace.close()
