"""Public names a package loads on first use (PEP 562), so importing one layer never pays for another.

A package lists where each of its public names lives and sets
``__getattr__, __dir__ = lazy_exports(__name__, _PUBLIC, globals())``; it keeps a literal
``__all__`` and a ``TYPE_CHECKING`` import of the same names for type checkers.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, public: Mapping[str, tuple[str, ...]], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of `package`, whose names are listed by module in `public`.

    A name is imported from its module on first access and kept in `namespace` (the package's
    globals), so later accesses are plain lookups; an unknown name raises ``AttributeError``.
    """
    home = {name: module for module, names in public.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *home])

    return __getattr__, __dir__
