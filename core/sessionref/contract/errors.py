"""The one error type the reference contract raises, and its stable codes.

Every failure a user can cause (a malformed mention, a budget that cannot fit,
a failed read) surfaces as a `SessionReferenceError` whose `code` is one of the
seven `ErrorCode` values. Codes and messages are part of the contract: hosts
match on the code, and conformance vectors compare the message byte for byte.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """The stable codes of `SessionReferenceError` (contract §7)."""

    INVALID_CONFIG = "SESSION_REFERENCE_INVALID_CONFIG"
    INVALID_REFERENCE = "SESSION_REFERENCE_INVALID_REFERENCE"
    SELF_REFERENCE = "SESSION_REFERENCE_SELF_REFERENCE"
    TOO_MANY = "SESSION_REFERENCE_TOO_MANY"
    READ_FAILED = "SESSION_REFERENCE_READ_FAILED"
    BUDGET_EXCEEDED = "SESSION_REFERENCE_BUDGET_EXCEEDED"
    CANCELLED = "SESSION_REFERENCE_CANCELLED"


SESSION_REFERENCE_INVALID_CONFIG = ErrorCode.INVALID_CONFIG
SESSION_REFERENCE_INVALID_REFERENCE = ErrorCode.INVALID_REFERENCE
SESSION_REFERENCE_SELF_REFERENCE = ErrorCode.SELF_REFERENCE
SESSION_REFERENCE_TOO_MANY = ErrorCode.TOO_MANY
SESSION_REFERENCE_READ_FAILED = ErrorCode.READ_FAILED
SESSION_REFERENCE_BUDGET_EXCEEDED = ErrorCode.BUDGET_EXCEEDED
SESSION_REFERENCE_CANCELLED = ErrorCode.CANCELLED


class CodedError(Exception):
    """Base of every error sessionref shows to a person: a stable `code` and a readable `message`.

    Hosts catch this one type to print `code: message` instead of a traceback.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def error_parts(error: BaseException) -> tuple[str, str]:
    """`(code, message)` for a `CodedError`; `(IO_ERROR | INTERNAL_ERROR, str(error))` for anything else."""
    if isinstance(error, CodedError):
        return str(error.code), error.message
    return ("IO_ERROR" if isinstance(error, OSError) else "INTERNAL_ERROR"), str(error)


class SessionReferenceError(CodedError):
    """A contract failure with a stable `code` and an exact, user-presentable `message`.

    `cause`, when given, is the underlying error; it is also set as `__cause__`
    so tracebacks (in logs, never in front of a user) keep the chain.
    """

    name = "SessionReferenceError"

    def __init__(self, code: ErrorCode | str, message: str, *, cause: BaseException | None = None) -> None:
        Exception.__init__(self, message)  # str() is the upstream message alone
        self.code: ErrorCode = ErrorCode(code)
        self.message: str = message
        self.cause: BaseException | None = cause
        if cause is not None:
            self.__cause__ = cause

    def __repr__(self) -> str:
        return f"SessionReferenceError({self.code.value!r}, {self.message!r})"

    def to_json(self) -> dict[str, Any]:
        """The wire shape `{name, code, message, cause?: {name, message}}` used by vectors and logs."""
        shape: dict[str, Any] = {"name": self.name, "code": self.code.value, "message": self.message}
        if self.cause is not None:
            shape["cause"] = {"name": js_error_name(self.cause), "message": str(self.cause)}
        return shape


class ContractTypeError(TypeError):
    """A `TypeError` raised on purpose by the contract code (e.g. a non-string decoded id)."""

    name = "TypeError"


class _JsonInputError(CodedError, ValueError):
    """Base of the coded `ValueError`s for JSON input; `str()` is the message alone, as in JavaScript."""

    code_value = "JSON_INVALID"

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        self.code = self.code_value
        self.message = message


class ContractSyntaxError(_JsonInputError):
    """Text that should have been JSON was not (the JavaScript `SyntaxError` of `JSON.parse`).

    Also a `CodedError` with code `JSON_INVALID`, so a host that meets it directly prints it cleanly.
    """

    name = "SyntaxError"
    code_value = "JSON_INVALID"


class ContractRangeError(_JsonInputError):
    """Input beyond a documented limit, refused before it is processed (JavaScript's `RangeError`).

    Raised with code `JSON_TOO_DEEP` for JSON nested deeper than
    `sessionref.contract.js_json.MAX_JSON_DEPTH`; the contract wraps it as the `cause` of
    its own coded error.
    """

    name = "RangeError"
    code_value = "JSON_TOO_DEEP"


def js_error_name(error: BaseException) -> str:
    """The JavaScript-style error name of `error`: its `name` attribute, else `TypeError`/`Error`."""
    name = getattr(error, "name", None)
    if isinstance(name, str):
        return name
    if isinstance(error, TypeError):
        return "TypeError"
    return "Error"
