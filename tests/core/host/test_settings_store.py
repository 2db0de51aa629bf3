"""The `[store]` settings: the withdrawn `write_foreign_sessions` still parses (old configs load), warned."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessionref.host.settings import SettingsError, load_settings


def test_the_opt_in_setting_from_config_toml_and_the_environment(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert load_settings({}, store_root=tmp_path).store.write_foreign_sessions is False
    (tmp_path / "config.toml").write_text("[store]\nwrite_foreign_sessions = true\n")
    assert load_settings({}, store_root=tmp_path).store.write_foreign_sessions is True
    assert "withdrawn and ignored" in caplog.text
    env = {"SESSIONREF_WRITE_FOREIGN_SESSIONS": "no"}
    assert load_settings(env, store_root=tmp_path).store.write_foreign_sessions is False
    for config, env, needle in [
        ('[store]\nwrite_foreign_sessions = "maybe"\n', {}, "write_foreign_sessions"),
        ("[store]\nwrite_foreign = true\n", {}, "'write_foreign'"),
        ("[store]\n", {"SESSIONREF_WRITE_FOREIGN_SESSIONS": "perhaps"}, "SESSIONREF_WRITE_FOREIGN_SESSIONS"),
        ("store = 1\n", {}, "[store] must be a table"),
    ]:
        (tmp_path / "config.toml").write_text(config)
        with pytest.raises(SettingsError) as caught:
            load_settings(env, store_root=tmp_path)
        assert caught.value.code == "SETTINGS_INVALID"
        assert needle in caught.value.message
