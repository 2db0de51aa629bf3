"""The private Textual names `sessionref_tui.textual_compat` relies on still exist with the same shape.

When one of these fails after a Textual upgrade, the compat module (and only it) needs a new way in.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import sessionref_tui
from sessionref_tui.textual_compat import PRIVATE_NAMES

CASES = [(owner, name, params) for owner, names in PRIVATE_NAMES.items() for name, params in names.items()]


@pytest.mark.parametrize(("owner", "name", "params"), CASES, ids=[f"{o.__name__}.{n}" for o, n, _ in CASES])
def test_each_private_name_is_still_a_method_with_the_parameters_used(
    owner: type, name: str, params: tuple[str, ...]
) -> None:
    method = owner.__dict__.get(name)
    assert callable(method), (
        f"Textual's {owner.__name__}.{name} is gone: rework sessionref_tui/textual_compat.py"
    )
    found = tuple(inspect.signature(method).parameters)
    assert found == params, (
        f"Textual's {owner.__name__}.{name} now takes {found}, textual_compat expects {params}"
    )


def test_no_other_module_uses_the_private_names() -> None:
    package = Path(sessionref_tui.__file__).parent
    names = {name for names in PRIVATE_NAMES.values() for name in names}
    users = {
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path.name != "textual_compat.py" and any(f".{name}(" in path.read_text() for name in names)
    }
    assert users == set(), "private Textual API belongs in textual_compat.py only"
