"""The core package never depends on a UI toolkit (decision D8)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

CORE_PACKAGE = Path(__file__).resolve().parents[2] / "core" / "sessionref"
UI_MODULES = ("textual", "prompt_toolkit", "rich")


def imported_modules(path: Path) -> set[str]:
    """Every absolute module name `path` imports, at any depth of its syntax tree."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) in {"import_module", "__import__"}
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)
    return names


def is_ui_module(name: str) -> bool:
    return name.split(".")[0] in UI_MODULES


def test_the_scanner_sees_imports_of_every_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\nfrom rich.text import Text\ndef f():\n    import textual.app\n"
        "importlib.import_module('prompt_toolkit')\nfrom . import sibling\n",
        encoding="utf-8",
    )
    assert {name for name in imported_modules(sample) if is_ui_module(name)} == {
        "rich.text",
        "textual.app",
        "prompt_toolkit",
    }


CORE_FILES = sorted(CORE_PACKAGE.rglob("*.py"))


def test_core_has_modules_to_check() -> None:
    assert any(path.name == "uri.py" for path in CORE_FILES)


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda path: str(path.relative_to(CORE_PACKAGE)))
def test_no_core_module_imports_a_ui_toolkit(path: Path) -> None:
    offending = sorted(name for name in imported_modules(path) if is_ui_module(name))
    assert not offending, f"{path} imports {offending}"


IMPORT_EVERYTHING = """
import importlib, json, pkgutil, sys
# What the core's own dependencies load by themselves is not the core's doing (httpx loads rich for
# its optional command line when click is installed): only what importing sessionref adds counts.
for dependency in ("httpx", "pydantic", "zstandard", "platformdirs"):
    importlib.import_module(dependency)
baseline = set(sys.modules)
import sessionref
failed = []
for info in pkgutil.walk_packages(sessionref.__path__, "sessionref."):
    try:
        importlib.import_module(info.name)
    except Exception as error:  # another module's import problem is its own test's business
        failed.append(f"{info.name}: {error!r}")
loaded = sorted(
    name
    for name in set(sys.modules) - baseline
    if name.split(".")[0] in ("textual", "prompt_toolkit", "rich")
)
print(json.dumps({"ui": loaded, "failed": failed}))
"""


def test_importing_core_loads_no_ui_toolkit() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERYTHING], capture_output=True, text=True, check=True, timeout=120
    )
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report["ui"] == [], f"importing sessionref loaded {report['ui']}"
