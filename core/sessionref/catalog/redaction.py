"""Recognisable secrets taken out of text before it leaves the machine (docs/catalog.md, "Redaction").

Every published message goes through `redact_secrets`. Each `SecretPattern` names one kind of
secret and replaces it with `[REDACTED:<name>]`; for an assignment (`password=…`, `api_key: …`) or
a URL with a password only the secret part is replaced, so the text stays readable. The list is
the one `docs/catalog.md` documents, in the order applied; a test holds one example of each. It
recognises secrets by their shape: a secret without a recognisable shape is published as written,
which is why publishing is opt-in.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class SecretPattern:
    """One kind of secret: its `name` (shown in the replacement) and the pattern that finds it.

    With a `keep` group, the text matched by that group stays and only the rest is replaced.
    """

    name: str
    pattern: re.Pattern[str]
    keep: str | None = None


def _p(expression: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(expression, flags)


SECRET_PATTERNS: Final[tuple[SecretPattern, ...]] = (
    SecretPattern(
        "private-key",
        _p(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    SecretPattern("aws-access-key-id", _p(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    SecretPattern(
        "aws-secret-access-key",
        _p(r"(?P<keep>\baws_secret_access_key[\"']?\s*[=:]\s*[\"']?)[A-Za-z0-9/+=]{40}", re.IGNORECASE),
        keep="keep",
    ),
    SecretPattern(
        "github-token", _p(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b")
    ),
    SecretPattern("gitlab-token", _p(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    SecretPattern("anthropic-api-key", _p(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    SecretPattern("openai-api-key", _p(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    SecretPattern("google-api-key", _p(r"\bAIza[0-9A-Za-z_-]{35}")),
    SecretPattern("slack-token", _p(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    SecretPattern("stripe-key", _p(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    SecretPattern("jwt", _p(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    SecretPattern(
        "bearer-token", _p(r"(?P<keep>\bbearer\s+)[A-Za-z0-9._~+/-]{16,}=*", re.IGNORECASE), keep="keep"
    ),
    SecretPattern(
        "url-password",
        _p(r"(?P<keep>\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+(?=@)", re.IGNORECASE),
        keep="keep",
    ),
    SecretPattern(
        "assigned-secret",
        _p(
            r"(?P<keep>\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token"
            r"|client[_-]?secret|private[_-]?key)[\"']?\s*[=:]\s*)(?!\[REDACTED:)"
            r"(?:\"[^\"\n]+\"|'[^'\n]+'|[^\s\"',;]+)",
            re.IGNORECASE,
        ),
        keep="keep",
    ),
)
"""What `redact_secrets` takes out, in the order applied (specific shapes before generic ones)."""


def _keeping(group: str, replacement: str) -> Callable[[re.Match[str]], str]:
    return lambda found: found.group(group) + replacement


def redact_secrets(text: str) -> str:
    """`text` with every secret `SECRET_PATTERNS` recognises replaced by `[REDACTED:<name>]`."""
    for secret in SECRET_PATTERNS:
        if secret.keep is None:
            text = secret.pattern.sub(f"[REDACTED:{secret.name}]", text)
        else:
            text = secret.pattern.sub(_keeping(secret.keep, f"[REDACTED:{secret.name}]"), text)
    return text
