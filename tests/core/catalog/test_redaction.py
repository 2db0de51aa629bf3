"""Every secret shape docs/catalog.md lists is taken out before a message is published."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sessionref.catalog.redaction import SECRET_PATTERNS, redact_secrets

PRIVATE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA\n-----END OPENSSH PRIVATE KEY-----"
)
EXAMPLES: dict[str, tuple[str, str]] = {
    # name: (text holding the secret, the secret itself)
    "private-key": (f"my key:\n{PRIVATE_KEY}\nthanks", PRIVATE_KEY),
    "aws-access-key-id": ("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE now", "AKIAIOSFODNN7EXAMPLE"),
    "aws-secret-access-key": (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    "github-token": ("token ghp_" + "a1B2" * 9 + " in the url", "ghp_" + "a1B2" * 9),
    "gitlab-token": ("use glpat-" + "x" * 20 + " here", "glpat-" + "x" * 20),
    "anthropic-api-key": ("ANTHROPIC_API_KEY=sk-ant-api03-" + "Z" * 30, "sk-ant-api03-" + "Z" * 30),
    "openai-api-key": ("the key is sk-proj-" + "Q" * 40 + ".", "sk-proj-" + "Q" * 40),
    "google-api-key": ("key=AIza" + "S" * 35, "AIza" + "S" * 35),
    "slack-token": ("xoxb-1234567890-abcdefghij posted", "xoxb-1234567890-abcdefghij"),
    "stripe-key": ("stripe sk_live_" + "4" * 24, "sk_live_" + "4" * 24),
    "jwt": (
        "cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    "bearer-token": ("Authorization: Bearer abcdefghijklmnop0123456789", "abcdefghijklmnop0123456789"),
    "url-password": ("postgresql://ann:hunter2pass@db/sessions", "hunter2pass"),
    "assigned-secret": ('config: password="correct horse battery"', "correct horse battery"),
}


def test_every_documented_pattern_has_an_example() -> None:
    assert set(EXAMPLES) == {secret.name for secret in SECRET_PATTERNS}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_secret_is_replaced_and_the_text_around_it_stays(name: str) -> None:
    text, secret = EXAMPLES[name]
    redacted = redact_secrets(text)
    assert secret not in redacted
    assert "[REDACTED:" in redacted
    before = text.split(secret)[0]
    assert redacted.startswith(before[: max(0, len(before) - 20)])


def test_ordinary_text_is_left_alone() -> None:
    text = "The password policy says sixteen characters; run `ls -la` and ask for the secret of good tests."
    assert redact_secrets(text) == text


def test_an_already_redacted_value_is_not_redacted_twice() -> None:
    assert redact_secrets("api_key = sk-" + "A" * 30) == "api_key = [REDACTED:openai-api-key]"


def test_docs_list_every_pattern_by_name() -> None:
    docs = (Path(__file__).parents[3] / "docs" / "catalog.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"`([a-z0-9-]+)`", docs))
    assert {secret.name for secret in SECRET_PATTERNS} <= listed
