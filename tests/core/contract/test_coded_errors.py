"""Every error a person may see is a CodedError, and every host shows any error through `describe_error`."""

from __future__ import annotations

import pytest
from sessionref.agent import AgentError
from sessionref.contract.errors import (
    CODE_CHARS,
    INTERNAL_ERROR,
    IO_ERROR,
    CodedError,
    ErrorCode,
    SessionReferenceError,
    describe_error,
)
from sessionref.contract.excerpts import MESSAGE_CHARS
from sessionref.host.settings import SettingsError
from sessionref.models import ModelError
from sessionref.store import StoreError


class RecordingLog:
    """An `InternalErrorLog` that remembers what it was given."""

    def __init__(self) -> None:
        self.recorded: list[BaseException] = []

    def record(self, error: BaseException) -> str:
        self.recorded.append(error)
        return "the traceback is in /store/.sessionref-logs/internal-errors.log"


@pytest.mark.parametrize(
    "error",
    [
        AgentError("AGENT_READ_ONLY", "read only"),
        ModelError("MODEL_AUTH", "bad key"),
        StoreError("STORE_INVALID_LOG", "bad line"),
        SettingsError("SETTINGS_INVALID", "bad value"),
    ],
)
def test_runtime_errors_share_the_coded_base(error: CodedError) -> None:
    assert isinstance(error, CodedError)
    log = RecordingLog()
    assert describe_error(error, log) == (error.code, error.message)
    assert log.recorded == []  # a coded error is not a bug: no traceback is kept


def test_session_reference_error_keeps_the_upstream_str() -> None:
    error = SessionReferenceError(ErrorCode.TOO_MANY, "a message may reference at most 3 sessions")
    assert isinstance(error, CodedError)
    assert str(error) == "a message may reference at most 3 sessions"
    assert describe_error(error) == (
        "SESSION_REFERENCE_TOO_MANY",
        "a message may reference at most 3 sessions",
    )


def test_an_os_error_is_an_io_error_without_a_traceback() -> None:
    log = RecordingLog()
    assert describe_error(FileNotFoundError(2, "missing", "/x"), log) == (
        IO_ERROR,
        "[Errno 2] missing: '/x'",
    )
    assert log.recorded == []


def test_anything_else_is_an_internal_error_whose_traceback_goes_to_the_log() -> None:
    log = RecordingLog()
    error = ZeroDivisionError("division by zero")
    code, message = describe_error(error, log)
    assert code == INTERNAL_ERROR
    assert message == (
        "unexpected ZeroDivisionError: division by zero — a bug in sessionref; "
        "the traceback is in /store/.sessionref-logs/internal-errors.log"
    )
    assert log.recorded == [error]


def test_without_a_log_the_message_says_the_traceback_was_not_kept() -> None:
    code, message = describe_error(RuntimeError("boom"))
    assert (code, message) == (
        INTERNAL_ERROR,
        "unexpected RuntimeError: boom — a bug in sessionref; its traceback was not kept",
    )


def test_messages_and_codes_are_bounded_and_the_log_pointer_survives() -> None:
    code, message = describe_error(CodedError("X" * 5000, "m" * 1_000_000))
    assert len(code) <= CODE_CHARS + 40 and len(message) <= MESSAGE_CHARS + 40
    _, internal = describe_error(ValueError("v" * 1_000_000), RecordingLog())
    assert len(internal) <= MESSAGE_CHARS + 40
    assert internal.endswith("the traceback is in /store/.sessionref-logs/internal-errors.log")
