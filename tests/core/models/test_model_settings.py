"""The model's deadline setting: default, environment and config.toml, validation, and the built model."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessionref.host.model_choice import build_model
from sessionref.host.settings import SETTINGS_INVALID, SettingsError, load_settings
from sessionref.models import DEFAULT_DEADLINE, OpenAIChatModel


def real_model(env: dict[str, str], root: Path) -> OpenAIChatModel:
    model = build_model(load_settings({"OPENAI_API_KEY": "sk-x", **env}, store_root=root))
    assert isinstance(model, OpenAIChatModel)
    return model


def test_the_default_deadline_reaches_the_model(tmp_path: Path) -> None:
    assert DEFAULT_DEADLINE == 600
    assert real_model({}, tmp_path).deadline == DEFAULT_DEADLINE


def test_the_deadline_comes_from_the_file_and_the_environment_wins(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[model]\ndeadline = 90\ntimeout = 15\n", encoding="utf-8")
    from_file = real_model({}, tmp_path)
    assert (from_file.deadline, from_file.timeout) == (90.0, 15.0)
    assert real_model({"SESSIONREF_MODEL_DEADLINE": "45.5"}, tmp_path).deadline == 45.5


@pytest.mark.parametrize("value", ["0", "-3", "soon", "inf", "nan"])
def test_a_bad_deadline_names_the_variable(tmp_path: Path, value: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings({"SESSIONREF_MODEL_DEADLINE": value}, store_root=tmp_path)
    assert caught.value.code == SETTINGS_INVALID
    assert "SESSIONREF_MODEL_DEADLINE" in caught.value.message


def test_a_bad_deadline_in_the_file_names_the_key(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[model]\ndeadline = "later"\n', encoding="utf-8")
    with pytest.raises(SettingsError) as caught:
        load_settings({}, store_root=tmp_path)
    assert "[model] deadline" in caught.value.message
