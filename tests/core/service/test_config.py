"""`SessionReferenceConfig`: upstream validation order, messages and key spellings (docs/contract.md §7)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from fakes import FakeSessions
from sessionref.contract.errors import ErrorCode, SessionReferenceError
from sessionref.contract.options import DEFAULT_CANDIDATE_LIMIT, DEFAULT_MAX_REFERENCE_BYTES, MAX_REFERENCES
from sessionref.service.config import SessionReferenceConfig
from sessionref.service.references import SessionReferences

INT = "session-reference: {} must be a positive safe integer"
FRACTION = "session-reference: referenceContextFraction must be between zero and one"
TOO_BIG = "session-reference: maxReferences must not exceed 3"


def test_defaults_match_upstream() -> None:
    config = SessionReferenceConfig.from_value(None)
    assert (MAX_REFERENCES, DEFAULT_CANDIDATE_LIMIT, DEFAULT_MAX_REFERENCE_BYTES) == (3, 50, 65536)
    assert config.max_references == 3
    assert config.candidate_limit == 50
    assert config.max_reference_bytes is None
    assert config.reference_context_fraction == 0.2


def test_camel_case_and_snake_case_keys_are_both_accepted() -> None:
    camel = SessionReferenceConfig.from_value({"maxReferences": 2, "maxReferenceBytes": 360})
    snake = SessionReferenceConfig.from_value({"max_references": 2, "max_reference_bytes": 360})
    assert camel == snake
    assert camel.max_references == 2 and camel.max_reference_bytes == 360


def test_integral_floats_are_integers_and_null_means_default() -> None:
    config = SessionReferenceConfig.from_value({"maxReferences": 3.0, "candidateLimit": None})
    assert config.max_references == 3 and isinstance(config.max_references, int)
    assert config.candidate_limit == DEFAULT_CANDIDATE_LIMIT


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"maxReferences": 0}, INT.format("maxReferences")),
        ({"maxReferences": 4}, TOO_BIG),
        ({"maxReferences": 2.5}, INT.format("maxReferences")),
        ({"maxReferences": True}, INT.format("maxReferences")),
        ({"maxReferences": "2"}, INT.format("maxReferences")),
        ({"candidateLimit": -1}, INT.format("candidateLimit")),
        ({"maxReferenceBytes": 2**53}, INT.format("maxReferenceBytes")),
        ({"maxReferenceBytes": math.inf}, INT.format("maxReferenceBytes")),
        # Every integer check runs before the upper bound on maxReferences.
        ({"maxReferences": 4, "candidateLimit": 0}, INT.format("candidateLimit")),
        ({"maxReferences": 0, "maxReferenceBytes": 0}, INT.format("maxReferences")),
        ({"referenceContextFraction": -0.1}, FRACTION),
        ({"referenceContextFraction": 1.1}, FRACTION),
        ({"referenceContextFraction": math.nan}, FRACTION),
        ({"referenceContextFraction": math.inf}, FRACTION),
        ({"maxReferences": 4, "referenceContextFraction": 2}, TOO_BIG),
    ],
)
def test_invalid_values_raise_the_upstream_message(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(SessionReferenceError) as raised:
        SessionReferenceConfig.from_value(raw)
    assert raised.value.code == ErrorCode.INVALID_CONFIG
    assert raised.value.message == message


def test_direct_construction_raises_the_contract_error_not_a_validation_error() -> None:
    with pytest.raises(SessionReferenceError) as raised:
        SessionReferenceConfig(maxReferences=9)
    assert raised.value.code == ErrorCode.INVALID_CONFIG


def test_the_service_rejects_invalid_configuration_when_built() -> None:
    for raw in ({"maxReferences": 0}, {"maxReferences": 4}):
        with pytest.raises(SessionReferenceError) as raised:
            SessionReferences(FakeSessions(), raw)
        assert raised.value.code == ErrorCode.INVALID_CONFIG
    assert SessionReferences(FakeSessions()).config.max_references == 3


def test_a_non_mapping_config_is_an_invalid_config() -> None:
    with pytest.raises(SessionReferenceError) as raised:
        SessionReferenceConfig.from_value([1, 2])  # type: ignore[arg-type]
    assert raised.value.code == ErrorCode.INVALID_CONFIG


def test_fraction_bounds_are_inclusive() -> None:
    assert SessionReferenceConfig.from_value({"referenceContextFraction": 0}).reference_context_fraction == 0
    assert SessionReferenceConfig.from_value({"referenceContextFraction": 1}).reference_context_fraction == 1
