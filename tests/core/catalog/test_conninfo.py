"""Connection strings never show their passwords: URIs, keyword/value strings, and texts quoting them."""

from __future__ import annotations

import pytest
from sessionref.catalog.conninfo import redact, scrub


@pytest.mark.parametrize(
    ("conninfo", "shown"),
    [
        ("postgresql://ann:s3cret@db.example:5432/sessions", "postgresql://ann:***@db.example:5432/sessions"),
        ("postgres://ann@db/sessions", "postgres://ann@db/sessions"),
        (
            "postgresql://ann:p%40ss@db/s?sslmode=require&password=other",
            "postgresql://ann:***@db/s?sslmode=require&password=***",
        ),
        (
            "postgresql:///sessions?host=/tmp/sock&sslpassword=k3y",
            "postgresql:///sessions?host=/tmp/sock&sslpassword=***",
        ),
        ("host=db user=ann password=s3cret dbname=s", "host=db user=ann password=*** dbname=s"),
        ("host=db password = 'two words' dbname=s", "host=db password = *** dbname=s"),
        ("host=db PASSWORD='it\\'s' dbname=s", "host=db PASSWORD=*** dbname=s"),
        ("host=/tmp/sock dbname=s user=ann", "host=/tmp/sock dbname=s user=ann"),
    ],
)
def test_redact_hides_every_password_form(conninfo: str, shown: str) -> None:
    assert redact(conninfo) == shown


def test_scrub_removes_passwords_from_any_text_quoting_them() -> None:
    url = "postgresql://ann:p%40ss@db/s"
    message = "connection to postgresql://ann:p%40ss@db/s failed; tried password p@ss and p%40ss"
    cleaned = scrub(message, url)
    assert "p@ss" not in cleaned and "p%40ss" not in cleaned
    assert "postgresql://ann:***@db/s" in cleaned


def test_scrub_of_keyword_form_with_quoted_password() -> None:
    conninfo = "host=db password='two words'"
    assert scrub("FATAL: two words rejected", conninfo) == "FATAL: *** rejected"
