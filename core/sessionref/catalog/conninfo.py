"""Connection strings without their passwords: what logs, errors and `catalog status` show.

A connection string is either a URI (`postgresql://user:secret@host/db?sslpassword=…`) or
PostgreSQL's keyword/value form (`host=… password='a b'`); both may carry passwords. `redact`
replaces every password in either form with `***`; `scrub` does the same to any text (such as
a server's error message) for the passwords of one connection string.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import unquote

MASK: Final = "***"
_PASSWORD_KEYS: Final = ("password", "sslpassword")
_URI = re.compile(r"^(?P<scheme>postgres(?:ql)?://)(?P<userinfo>[^@/?#]*@)?(?P<rest>.*)$", re.DOTALL)
_QUERY_PASSWORD = re.compile(r"(?P<key>[?&](?:ssl)?password=)(?P<value>[^&#]*)", re.IGNORECASE)
_KEYWORD_PASSWORD = re.compile(
    r"(?P<key>\b(?:ssl)?password\s*=\s*)(?P<value>'(?:[^'\\]|\\.)*'|[^\s']\S*|)", re.IGNORECASE
)


def redact(conninfo: str) -> str:
    """`conninfo` with every password (user info, `password=`, `sslpassword=`) replaced by `***`."""
    text = conninfo.strip()
    match = _URI.match(text)
    if match is None:
        return _KEYWORD_PASSWORD.sub(lambda found: found.group("key") + MASK, text)
    userinfo = match.group("userinfo") or ""
    if ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + ":" + MASK + "@"
    rest = _QUERY_PASSWORD.sub(lambda found: found.group("key") + MASK, match.group("rest"))
    return match.group("scheme") + userinfo + rest


def passwords(conninfo: str) -> list[str]:
    """Every password written in `conninfo` (raw and percent-decoded forms), longest first."""
    text = conninfo.strip()
    found: list[str] = []
    match = _URI.match(text)
    if match is not None:
        userinfo = (match.group("userinfo") or "")[:-1]
        if ":" in userinfo:
            found.append(userinfo.split(":", 1)[1])
        found.extend(value.group("value") for value in _QUERY_PASSWORD.finditer(match.group("rest")))
    else:
        for value in _KEYWORD_PASSWORD.finditer(text):
            raw = value.group("value")
            found.append(raw[1:-1].replace("\\'", "'").replace("\\\\", "\\") if raw.startswith("'") else raw)
    with_decoded = {variant for secret in found for variant in (secret, unquote(secret)) if variant}
    return sorted(with_decoded, key=len, reverse=True)


def scrub(text: str, conninfo: str) -> str:
    """`text` with the connection string and each of its passwords replaced by their redacted forms."""
    cleaned = text.replace(conninfo.strip(), redact(conninfo)) if conninfo.strip() else text
    for secret in passwords(conninfo):
        cleaned = cleaned.replace(secret, MASK)
    return cleaned
