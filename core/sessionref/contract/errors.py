"""Coded errors, the one error type the reference contract raises, and how hosts show any error.

Every failure a user can cause (a malformed mention, a budget that cannot fit,
a failed read) surfaces as a `SessionReferenceError` whose `code` is one of the
seven `ErrorCode` values (docs/contract.md §7). Codes and messages are part of
the contract: hosts match on the code, and conformance vectors compare the
message byte for byte.

Every layer's errors a person may see are `CodedError`s, and every host (the
CLI, the app, the line mode) shows any error through `describe_error`: a coded
error as its code and message, an `OSError` as `IO_ERROR`, and anything else as
`INTERNAL_ERROR` — a bug — whose traceback an `InternalErrorLog` keeps.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Protocol

from sessionref.contract.excerpts import MESSAGE_CHARS, bounded_excerpt


class ContractCode(StrEnum):
    """The contract layer's codes besides `ErrorCode`'s seven (docs/errors.md lists every code)."""

    INTERNAL_ERROR = "INTERNAL_ERROR"
    """An unexpected exception reached a host: a bug, with its traceback in a log."""
    IO_ERROR = "IO_ERROR"
    """An operating-system error (a disk, a permission, a missing file) no layer coded."""
    JSON_INVALID = "JSON_INVALID"
    """Text that should have been JSON was not."""
    JSON_TOO_DEEP = "JSON_TOO_DEEP"
    """JSON nested deeper than `sessionref.contract.js_json.MAX_JSON_DEPTH`."""


INTERNAL_ERROR: Final = ContractCode.INTERNAL_ERROR
"""The code of an unexpected exception that reached a host: a bug, with its traceback in a log."""

IO_ERROR: Final = ContractCode.IO_ERROR
"""The code of an operating-system error (a disk, a permission, a missing file) no layer coded."""

CODE_CHARS: Final = 100
"""At most this many characters of a code are shown (a code comes from data only by mistake)."""

INTERNAL_DETAIL_CHARS: Final = 500
"""Characters of an unexpected exception's own text quoted in its `INTERNAL_ERROR` message."""


class ErrorCode(StrEnum):
    """The stable codes of `SessionReferenceError` (docs/contract.md §7; all codes: docs/errors.md)."""

    INVALID_CONFIG = "SESSION_REFERENCE_INVALID_CONFIG"
    INVALID_REFERENCE = "SESSION_REFERENCE_INVALID_REFERENCE"
    SELF_REFERENCE = "SESSION_REFERENCE_SELF_REFERENCE"
    TOO_MANY = "SESSION_REFERENCE_TOO_MANY"
    READ_FAILED = "SESSION_REFERENCE_READ_FAILED"
    BUDGET_EXCEEDED = "SESSION_REFERENCE_BUDGET_EXCEEDED"
    CANCELLED = "SESSION_REFERENCE_CANCELLED"


class CodedError(Exception):
    """Base of every error sessionref shows to a person: a stable `code` and a readable `message`.

    Hosts catch this one type to print `code: message` instead of a traceback.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class InternalErrorLog(Protocol):
    """Where a host keeps the traceback of an unexpected error (the store's log file, in the product)."""

    def record(self, error: BaseException) -> str:
        """Keep `error`'s traceback; return a short clause saying where it is, or why it could not be kept.

        Must not raise: a failure to keep the traceback is described in the returned clause.
        """
        ...


def describe_error(error: BaseException, log: InternalErrorLog | None = None) -> tuple[str, str]:
    """`(code, message)` to show a person for `error`: how every host shows every error.

    A `CodedError` gives its code and message; an `OSError` gives `IO_ERROR` and its text;
    anything else is a bug: `INTERNAL_ERROR`, `unexpected <type>: <text>`, followed by what
    `log.record(error)` says about its traceback (where it was written). The code is cut to
    `CODE_CHARS` characters and the message to `MESSAGE_CHARS` (head and tail kept). Both are
    still data: make them inert (`sessionref.contract.terminal_text`) before a terminal shows them.
    """
    if isinstance(error, CodedError):
        code, message = str(error.code), error.message
    elif isinstance(error, OSError):
        code, message = IO_ERROR, str(error)
    else:
        code = INTERNAL_ERROR
        detail = bounded_excerpt(f"unexpected {type(error).__name__}: {error}", INTERNAL_DETAIL_CHARS)
        where = "its traceback was not kept" if log is None else log.record(error)
        message = f"{detail} — a bug in sessionref; {where}"
    return bounded_excerpt(code, CODE_CHARS), bounded_excerpt(message, MESSAGE_CHARS)


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

    code_value: str = ContractCode.JSON_INVALID

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        self.code = self.code_value
        self.message = message


class ContractSyntaxError(_JsonInputError):
    """Text that should have been JSON was not (the JavaScript `SyntaxError` of `JSON.parse`).

    Also a `CodedError` with code `JSON_INVALID`, so a host that meets it directly prints it cleanly.
    """

    name = "SyntaxError"
    code_value = ContractCode.JSON_INVALID


class ContractRangeError(_JsonInputError):
    """Input beyond a documented limit, refused before it is processed (JavaScript's `RangeError`).

    Raised with code `JSON_TOO_DEEP` for JSON nested deeper than
    `sessionref.contract.js_json.MAX_JSON_DEPTH`; the contract wraps it as the `cause` of
    its own coded error.
    """

    name = "RangeError"
    code_value = ContractCode.JSON_TOO_DEEP


def js_error_name(error: BaseException) -> str:
    """The JavaScript-style error name of `error`: its `name` attribute, else `TypeError`/`Error`."""
    name = getattr(error, "name", None)
    if isinstance(name, str):
        return name
    if isinstance(error, TypeError):
        return "TypeError"
    return "Error"
