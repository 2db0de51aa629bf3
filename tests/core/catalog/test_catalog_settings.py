"""`[catalog]` in config.toml and the environment; a bad url is refused without being quoted."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessionref.host.catalog_settings import PUBLISHABLE, open_configured_catalog
from sessionref.host.settings import SettingsError, load_settings


def _settings(tmp_path: Path, toml: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    (tmp_path / "config.toml").write_text(toml, encoding="utf-8")
    return load_settings(env or {}, store_root=tmp_path)


def test_no_catalog_by_default_and_nothing_published(tmp_path: Path) -> None:
    settings = load_settings({}, store_root=tmp_path)
    assert not settings.catalog.configured
    assert settings.catalog.publish == ()
    assert open_configured_catalog(settings.catalog) is None


def test_the_file_sets_url_machine_and_what_is_published(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path,
        '[catalog]\nurl = "postgresql://ann:pw@db/sessions"\n'
        'machine = "ann-laptop"\npublish = ["store", "codex"]\n',
    )
    assert settings.catalog.url is not None
    assert settings.catalog.url.get_secret_value() == "postgresql://ann:pw@db/sessions"
    assert "pw" not in repr(settings.catalog)
    assert (settings.catalog.machine_name, settings.catalog.publish) == ("ann-laptop", ("store", "codex"))


def test_the_environment_wins_and_all_means_every_source(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path,
        '[catalog]\nurl = "postgresql://file/db"\npublish = "all"\n',
        {"SESSIONREF_CATALOG_URL": "host=/tmp dbname=s", "SESSIONREF_CATALOG_MACHINE": "box"},
    )
    assert (
        settings.catalog.url is not None and settings.catalog.url.get_secret_value() == "host=/tmp dbname=s"
    )
    assert settings.catalog.machine_name == "box"
    assert settings.catalog.publish == PUBLISHABLE


def test_the_default_machine_is_the_host_name(tmp_path: Path) -> None:
    import socket

    assert load_settings({}, store_root=tmp_path).catalog.machine_name == socket.gethostname()


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ('[catalog]\nurl = "mysql://ann:hunter2@db"\n', "must be a postgresql:// URI"),
        ('[catalog]\npublish = ["store", "dropbox"]\n', "unknown source 'dropbox'"),
        ('[catalog]\nmachine = ""\n', "must be a name"),
        ("[catalog]\nport = 5432\n", "unknown key [catalog] 'port'"),
    ],
)
def test_bad_values_are_coded_errors_that_never_quote_a_password(
    tmp_path: Path, toml: str, expected: str
) -> None:
    with pytest.raises(SettingsError) as raised:
        _settings(tmp_path, toml)
    assert raised.value.code == "SETTINGS_INVALID"
    assert expected in raised.value.message
    assert "hunter2" not in raised.value.message
