"""The error catalogue: every code in one enum per layer, each listed once in docs/errors.md,
and no `CodedError` raised with a code spelled as a string literal."""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from enum import StrEnum
from pathlib import Path

from sessionref.agent.errors import AgentCode
from sessionref.catalog.errors import CatalogCode
from sessionref.contract.errors import ContractCode, ErrorCode
from sessionref.host.errors import HostCode
from sessionref.mcp.errors import McpCode
from sessionref.models.base import ModelCode
from sessionref.service.errors import ServiceCode
from sessionref.sources.foreign import ForeignSourceErrorCode
from sessionref.store.errors import StoreCode
from sessionref.textsearch.errors import TextSearchCode
from sessionref_tui.errors import CliCode, ReplCode
from sessionref_tui.submit_errors import PLAIN_WORDS, READ_ONLY_CODES

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (ROOT / "core", ROOT / "tui")
CATALOGUE_DOC = ROOT / "docs" / "errors.md"
CODE_PATTERN = re.compile(r"^[A-Z][A-Z0-9_]+$")
DOC_ROW = re.compile(r"^\| `([^`]+)` \| ([a-z_]+) \|")

CATALOGUE: tuple[type[StrEnum], ...] = (
    ErrorCode,
    ContractCode,
    ServiceCode,
    ForeignSourceErrorCode,
    StoreCode,
    AgentCode,
    ModelCode,
    TextSearchCode,
    HostCode,
    CatalogCode,
    McpCode,
    CliCode,
    ReplCode,
)
"""Every enum of error codes; `test_every_code_enum_is_in_the_catalogue` keeps it complete."""


def layer_of(catalogue_enum: type[StrEnum]) -> str:
    """The layer an enum belongs to: `sessionref.<layer>…`, or `tui` for `sessionref_tui`."""
    parts = catalogue_enum.__module__.split(".")
    return "tui" if parts[0] == "sessionref_tui" else parts[1]


def all_codes() -> list[tuple[str, str]]:
    """`(code, layer)` for every member of every catalogue enum."""
    return [(member.value, layer_of(enum)) for enum in CATALOGUE for member in enum]


def package_sources() -> dict[str, str]:
    """The text of every Python file under core/ and tui/, by path relative to the repository."""
    return {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
        for package in PACKAGES
        for path in sorted(package.rglob("*.py"))
    }


def module_name(path: str) -> str:
    """`core/sessionref/store/errors.py` -> `sessionref.store.errors`."""
    return path.split("/", 1)[1].removesuffix(".py").replace("/", ".")


def base_names(node: ast.ClassDef) -> list[str]:
    """The last dotted part of each base class `node` names."""
    names = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
    return names


def classes(sources: Mapping[str, str]) -> Iterator[tuple[str, ast.ClassDef]]:
    """`(path, class)` for every class statement in `sources`."""
    for path, text in sources.items():
        for node in ast.walk(ast.parse(text, filename=path)):
            if isinstance(node, ast.ClassDef):
                yield path, node


def takes_code_first(node: ast.ClassDef) -> bool | None:
    """Whether the class's own `__init__` takes `code` as its first argument; None without one."""
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            names = [argument.arg for argument in item.args.args[1:]]
            return bool(names) and names[0] == "code"
    return None


def coded_error_classes(sources: Mapping[str, str]) -> dict[str, bool]:
    """Every `CodedError` subclass in `sources` by name: whether its constructor takes a code first."""
    defined = {node.name: node for _path, node in classes(sources)}
    coded: dict[str, bool] = {"CodedError": True}
    changed = True
    while changed:
        changed = False
        for name, node in defined.items():
            if name in coded:
                continue
            parent = next((base for base in base_names(node) if base in coded), None)
            if parent is not None:
                own = takes_code_first(node)
                coded[name] = coded[parent] if own is None else own
                changed = True
    return coded


def called_name(func: ast.expr) -> str:
    """The name a call's callee ends in (`StoreError` for `errors.StoreError(...)`), else ""."""
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def is_text_literal(node: ast.expr | None) -> bool:
    """Whether `node` spells a string in the source (a constant or an f-string)."""
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def literal_codes(sources: Mapping[str, str]) -> list[str]:
    """`path:line` of every `CodedError` built with a literal code, or with a literal code attribute."""
    coded = coded_error_classes(sources)
    found = []
    for path, text in sources.items():
        for node in ast.walk(ast.parse(text, filename=path)):
            if isinstance(node, ast.Call):
                if not coded.get(called_name(node.func), False):
                    continue
                code = next((keyword.value for keyword in node.keywords if keyword.arg == "code"), None)
                if code is None and node.args:
                    code = node.args[0]
                if is_text_literal(code):
                    found.append(f"{path}:{node.lineno}")
            elif isinstance(node, ast.ClassDef) and node.name in coded:
                for item in node.body:
                    targets = item.targets if isinstance(item, ast.Assign) else []
                    if isinstance(item, ast.AnnAssign):
                        targets = [item.target]
                    value = item.value if isinstance(item, ast.Assign | ast.AnnAssign) else None
                    named = {target.id for target in targets if isinstance(target, ast.Name)}
                    if named & {"code", "code_value"} and is_text_literal(value):
                        found.append(f"{path}:{item.lineno}")
    return found


def documented_codes() -> list[tuple[str, str]]:
    """`(code, layer)` for every table row of docs/errors.md."""
    rows = []
    for line in CATALOGUE_DOC.read_text(encoding="utf-8").splitlines():
        match = DOC_ROW.match(line)
        if match:
            rows.append((match.group(1), match.group(2)))
    return rows


def test_every_code_enum_is_in_the_catalogue() -> None:
    declared = {
        (module_name(path), node.name)
        for path, node in classes(package_sources())
        if node.name.endswith("Code") and {"StrEnum", "Enum"} & set(base_names(node))
    }
    assert declared == {(enum.__module__, enum.__name__) for enum in CATALOGUE}


def test_codes_are_unique_across_layers() -> None:
    repeated = [code for code, count in Counter(code for code, _layer in all_codes()).items() if count > 1]
    assert repeated == []


def test_codes_are_upper_snake_case() -> None:
    assert [code for code, _layer in all_codes() if not CODE_PATTERN.match(code)] == []


def test_a_code_is_its_string_in_text_and_json() -> None:
    for enum in CATALOGUE:
        for member in enum:
            assert str(member) == f"{member}" == member.value
            assert json.dumps({"code": member}) == json.dumps({"code": member.value})


def test_docs_list_every_code_once_under_its_layer() -> None:
    rows = documented_codes()
    assert [code for code, count in Counter(code for code, _layer in rows).items() if count > 1] == []
    assert sorted(rows) == sorted(all_codes())


def test_no_coded_error_is_built_with_a_literal_code() -> None:
    assert literal_codes(package_sources()) == []


def test_the_literal_code_check_finds_literals_and_passes_members() -> None:
    source = """
class CodedError(Exception):
    def __init__(self, code, message): ...
class LayerError(CodedError): ...
class MessageOnlyError(CodedError):
    code_value = Code.JSON
    def __init__(self, message): ...
class LiteralAttributeError(CodedError):
    code_value = "LITERAL_ATTRIBUTE"
raise LayerError("LITERAL_POSITIONAL", "m")
raise errors.LayerError(code=f"LITERAL_{kind}", message="m")
raise LayerError(Code.MEMBER, "m")
raise MessageOnlyError("a message, not a code")
raise ValueError("NOT_CODED")
"""
    assert literal_codes({"sample.py": source}) == ["sample.py:9", "sample.py:10", "sample.py:11"]


def test_the_codes_the_app_explains_are_catalogued() -> None:
    catalogued = {code for code, _layer in all_codes()}
    assert set(PLAIN_WORDS) | READ_ONLY_CODES <= catalogued


def code_constants_outside_enums(sources: Mapping[str, str]) -> list[str]:
    """`path: NAME` for every module-level `NAME = "NAME"` (a code spelled as a plain string constant,
    outside the layer's enum) whose value is one of the catalogue's codes or looks like one."""
    catalogued = {code for code, _layer in all_codes()}
    found = []
    for path, text in sources.items():
        for node in ast.parse(text, filename=path).body:
            target = value = None
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign):
                target, value = node.target, node.value
            if not (isinstance(target, ast.Name) and isinstance(value, ast.Constant)):
                continue
            if not isinstance(value.value, str) or not CODE_PATTERN.match(value.value):
                continue
            if value.value in catalogued or (target.id == value.value and path.endswith("errors.py")):
                found.append(f"{path}: {target.id}")
    return found


def test_no_code_is_a_plain_string_constant_outside_its_enum() -> None:
    # submit_errors keeps plain strings on purpose (the app loads it before its first frame);
    # test_the_codes_the_app_explains_are_catalogued holds those to the catalogue instead.
    found = [
        entry
        for entry in code_constants_outside_enums(package_sources())
        if not entry.startswith("tui/sessionref_tui/submit_errors.py")
    ]
    assert found == []


def test_the_constant_check_finds_a_code_spelled_as_a_string() -> None:
    sources = {
        "core/sessionref/x/errors.py": 'X_BROKEN: Final = "X_BROKEN"\nX_OK: Final = XCode.OK\n',
        "core/sessionref/y/thing.py": 'ALIAS = "STORE_CLOSED"\nTITLE = "Hello"\n',
    }
    assert code_constants_outside_enums(sources) == [
        "core/sessionref/x/errors.py: X_BROKEN",
        "core/sessionref/y/thing.py: ALIAS",
    ]
