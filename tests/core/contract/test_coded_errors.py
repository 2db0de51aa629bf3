"""Every error a person may see is a CodedError, so hosts print `code: message`, never a traceback."""

import pytest
from sessionref.agent import AgentError
from sessionref.contract.errors import CodedError, ErrorCode, SessionReferenceError, error_parts
from sessionref.host.settings import SettingsError
from sessionref.models import ModelError
from sessionref.store import StoreError


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
    assert error_parts(error) == (error.code, error.message)


def test_session_reference_error_keeps_the_upstream_str() -> None:
    error = SessionReferenceError(ErrorCode.TOO_MANY, "a message may reference at most 3 sessions")
    assert isinstance(error, CodedError)
    assert str(error) == "a message may reference at most 3 sessions"
    assert error_parts(error) == ("SESSION_REFERENCE_TOO_MANY", "a message may reference at most 3 sessions")


def test_foreign_errors_get_a_generic_code() -> None:
    assert error_parts(FileNotFoundError(2, "missing"))[0] == "IO_ERROR"
    assert error_parts(RuntimeError("boom")) == ("INTERNAL_ERROR", "boom")
