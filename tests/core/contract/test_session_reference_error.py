"""SessionReferenceError: stable codes, exact messages, and the cause chain."""

from __future__ import annotations

import pytest
from sessionref.contract import errors
from sessionref.contract.errors import ErrorCode, SessionReferenceError, js_error_name


def test_the_seven_codes_are_the_upstream_strings() -> None:
    assert sorted(code.value for code in ErrorCode) == [
        "SESSION_REFERENCE_BUDGET_EXCEEDED",
        "SESSION_REFERENCE_CANCELLED",
        "SESSION_REFERENCE_INVALID_CONFIG",
        "SESSION_REFERENCE_INVALID_REFERENCE",
        "SESSION_REFERENCE_READ_FAILED",
        "SESSION_REFERENCE_SELF_REFERENCE",
        "SESSION_REFERENCE_TOO_MANY",
    ]


def test_error_carries_code_message_and_cause() -> None:
    cause = OSError("disk on fire")
    error = SessionReferenceError("SESSION_REFERENCE_READ_FAILED", "failed to read", cause=cause)
    assert error.code is ErrorCode.READ_FAILED
    assert error.code == "SESSION_REFERENCE_READ_FAILED"
    assert error.message == str(error) == "failed to read"
    assert error.cause is cause
    assert error.__cause__ is cause
    assert error.name == "SessionReferenceError"
    assert error.to_json() == {
        "name": "SessionReferenceError",
        "code": "SESSION_REFERENCE_READ_FAILED",
        "message": "failed to read",
        "cause": {"name": "Error", "message": "disk on fire"},
    }


def test_error_without_cause_has_no_cause_key() -> None:
    error = SessionReferenceError(ErrorCode.TOO_MANY, "too many")
    assert error.cause is None
    assert error.__cause__ is None
    assert "cause" not in error.to_json()


def test_an_unknown_code_is_refused() -> None:
    with pytest.raises(ValueError):
        SessionReferenceError("SESSION_REFERENCE_WHATEVER", "nope")


def test_js_error_names() -> None:
    assert js_error_name(TypeError("x")) == "TypeError"
    assert js_error_name(errors.ContractSyntaxError("x")) == "SyntaxError"
    assert js_error_name(errors.ContractTypeError("x")) == "TypeError"
    assert js_error_name(RuntimeError("x")) == "Error"
