"""`sessionref chat` paints before it loads the store, the workspace, the model client and the
other agents' history readers.

The CLI, `launch` and the app import those layers where they are used (the opening thread, after the
first frame); importing them at module level again would put them back on the cold start.
"""

from __future__ import annotations

import subprocess
import sys

AFTER_THE_FIRST_FRAME = (
    "sessionref.store",
    "sessionref.host",
    "sessionref.agent",
    "sessionref.models",
    "sessionref.textsearch",
    "sessionref.service.references",
    "sessionref.service.config",
    "sessionref.sources.claude_code",
    "sessionref.sources.codex",
    "sessionref.sources.gemini",
    "importlib.metadata",
    "pydantic",
    "httpx",
    "sqlite3",
    "rich.markdown",
    "markdown_it",
)

PROBE = """
import sys
import sessionref_tui.cli
import sessionref_tui.launch
heavy = sys.argv[1:]
print("\\n".join(sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))))
"""


def test_importing_the_launcher_loads_none_of_what_the_opening_thread_loads() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *AFTER_THE_FIRST_FRAME], check=True, capture_output=True, text=True
    )
    assert done.stdout.split() == []
