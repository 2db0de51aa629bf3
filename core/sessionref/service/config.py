"""Configuration of the reference service (docs/contract.md §7).

`SessionReferenceConfig` is the pydantic edge model. Validation follows the upstream
order and messages exactly; every rejection is a `SessionReferenceError` with code
`SESSION_REFERENCE_INVALID_CONFIG`, never a pydantic `ValidationError`.
Both the snake_case field names and the upstream camelCase keys are accepted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sessionref.contract.errors import ErrorCode, SessionReferenceError
from sessionref.contract.options import (
    DEFAULT_CANDIDATE_LIMIT,
    DEFAULT_REFERENCE_CONTEXT_FRACTION,
    MAX_REFERENCES,
    MAX_SAFE_INTEGER,
)

INVALID_CONFIG = ErrorCode.INVALID_CONFIG

# (python name, upstream key) in the order upstream validates them.
_INTEGER_FIELDS = (
    ("max_references", "maxReferences"),
    ("candidate_limit", "candidateLimit"),
    ("max_reference_bytes", "maxReferenceBytes"),
)
_FRACTION_FIELD = ("reference_context_fraction", "referenceContextFraction")


def as_positive_safe_integer(value: object) -> int | None:
    """The value as an int if it is a JS positive safe integer (`3.0` counts), else None.

    Booleans and strings are never integers here, matching `Number.isSafeInteger`.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    else:
        return None
    return number if 1 <= number <= MAX_SAFE_INTEGER else None


def _as_fraction(value: object) -> float | None:
    """The value as a float in [0, 1], or None (NaN, infinities, bools, strings rejected)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and not 0 <= value <= 1:
        return None  # also keeps integers beyond the float range away from float()
    number = float(value)
    if not math.isfinite(number) or number < 0 or number > 1:
        return None
    return number


def _lookup(raw: Mapping[str, Any], python_name: str, upstream_key: str) -> object:
    """The configured value under either spelling; None when absent (null means default)."""
    if upstream_key in raw and raw[upstream_key] is not None:
        return raw[upstream_key]
    return raw.get(python_name)


def _invalid(message: str) -> SessionReferenceError:
    return SessionReferenceError(INVALID_CONFIG, f"session-reference: {message}")


def _normalise(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Validate in upstream order and return values keyed by python field name."""
    values: dict[str, Any] = {}
    for python_name, upstream_key in _INTEGER_FIELDS:
        value = _lookup(raw, python_name, upstream_key)
        if value is None:
            continue
        number = as_positive_safe_integer(value)
        if number is None:
            raise _invalid(f"{upstream_key} must be a positive safe integer")
        values[python_name] = number
    if values.get("max_references", MAX_REFERENCES) > MAX_REFERENCES:
        raise _invalid(f"maxReferences must not exceed {MAX_REFERENCES}")
    python_name, upstream_key = _FRACTION_FIELD
    fraction = _lookup(raw, python_name, upstream_key)
    if fraction is not None:
        checked = _as_fraction(fraction)
        if checked is None:
            raise _invalid("referenceContextFraction must be between zero and one")
        values[python_name] = checked
    return values


class SessionReferenceConfig(BaseModel):
    """Validated service configuration; immutable once built.

    `max_reference_bytes=None` selects the automatic, model-relative budget
    (`max(65536, floor(context_window * 4 * reference_context_fraction))`).
    Unknown keys are ignored, as upstream's direct construction does.
    """

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")

    max_references: int = Field(default=MAX_REFERENCES, alias="maxReferences")
    candidate_limit: int = Field(default=DEFAULT_CANDIDATE_LIMIT, alias="candidateLimit")
    max_reference_bytes: int | None = Field(default=None, alias="maxReferenceBytes")
    reference_context_fraction: float = Field(
        default=DEFAULT_REFERENCE_CONTEXT_FRACTION, alias="referenceContextFraction"
    )

    @model_validator(mode="before")
    @classmethod
    def _validate_upstream_rules(cls, data: Any) -> Any:
        if data is None:
            return {}
        if not isinstance(data, Mapping):
            raise SessionReferenceError(INVALID_CONFIG, "session-reference: config must be an object")
        return _normalise(data)

    @classmethod
    def from_value(cls, value: SessionReferenceConfig | Mapping[str, Any] | None) -> SessionReferenceConfig:
        """Build a config from a model, a mapping (either key spelling) or None (defaults).

        Raises `SessionReferenceError(SESSION_REFERENCE_INVALID_CONFIG)` for any bad value.
        """
        if isinstance(value, SessionReferenceConfig):
            return value
        if value is not None and not isinstance(value, Mapping):
            raise SessionReferenceError(INVALID_CONFIG, "session-reference: config must be an object")
        return cls.model_validate(dict(value or {}))
