"""Without a catalog configured nothing of it is imported: not the catalog layer, not psycopg."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from sessionref_tui.cli import main
status = main(["sessions", "--store", sys.argv[1], "--json"])
from sessionref.host.settings import load_settings
from sessionref.host.catalog_settings import open_configured_catalog
from sessionref.host.workspace import Workspace
settings = load_settings({}, store_root=__import__("pathlib").Path(sys.argv[1]))
assert open_configured_catalog(settings.catalog) is None
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "psycopg" or m.startswith("sessionref.catalog"))
print("LOADED", status, *loaded)
"""


def test_no_catalog_configured_imports_nothing_of_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": ":".join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(store)], check=True, capture_output=True, text=True, env=env
    )
    line = next(row for row in done.stdout.splitlines() if row.startswith("LOADED"))
    assert line.split() == ["LOADED", "0"]


def test_configuring_a_catalog_does_not_import_the_driver_until_it_connects(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from pydantic import SecretStr\n"
        "from sessionref.host.catalog_settings import CatalogSettings, open_configured_catalog\n"
        "link = open_configured_catalog(CatalogSettings(url=SecretStr('host=/nowhere dbname=x')))\n"
        "print('LOADED', link is not None, 'psycopg' in sys.modules)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": ":".join(sys.path)}
    done = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True, env=env)
    assert done.stdout.split() == ["LOADED", "True", "False"]
