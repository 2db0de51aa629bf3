"""The names the issue fixes for the public API are importable from `sessionref` itself."""

import subprocess
import sys

import sessionref

CONTRACT_NAMES = [
    "encode_session_reference_uri",
    "decode_session_reference_uri",
    "format_session_reference_mention",
    "parse_session_reference_text",
    "stringify_tag_safe_json",
    "truncate_with_notice",
    "retain_referenced_session",
    "SessionReferenceError",
    "SessionReferences",
    "SessionQuery",
    "AbortSignal",
]
RUNTIME_NAMES = ["open_store", "SessionStore", "Agent", "Workspace", "deliver_with_references", "DemoModel"]


def test_every_public_name_resolves() -> None:
    for name in [*CONTRACT_NAMES, *RUNTIME_NAMES, *sessionref.__all__]:
        assert getattr(sessionref, name) is not None, name


def test_unknown_names_raise_attribute_error() -> None:
    try:
        sessionref.no_such_name  # noqa: B018
    except AttributeError as error:
        assert "no_such_name" in str(error)
    else:
        raise AssertionError("expected AttributeError")


def test_contract_import_does_not_load_store_or_http() -> None:
    code = "import sys, sessionref; print('httpx' in sys.modules, 'sqlite3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_public_round_trip() -> None:
    uri = sessionref.encode_session_reference_uri("\ud800abc")
    assert sessionref.decode_session_reference_uri(uri) == "\ud800abc"
    parsed = sessionref.parse_session_reference_text(
        "see " + sessionref.format_session_reference_mention(sessionref.SessionReference("abc", "Label"))
    )
    assert parsed.text == "see @Label"
    assert [(r.session_id, r.label) for r in parsed.references] == [("abc", "Label")]


def test_the_core_package_ships_its_py_typed_marker() -> None:
    """PEP 561: without the marker, type checkers ignore the annotations of an installed sessionref."""
    import importlib.resources

    assert importlib.resources.files("sessionref").joinpath("py.typed").is_file()
