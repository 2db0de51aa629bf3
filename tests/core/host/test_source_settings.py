"""`[sources]` settings, SESSIONREF_SOURCES and `--sources`: which agents' histories are read, and why."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessionref.host.settings import SETTINGS_INVALID, SettingsError, load_settings
from sessionref.host.source_settings import SourceListError, parse_source_list
from sessionref.host.sources import enabled_roots, resolve_sources
from sessionref.sources import SOURCE_KINDS


def write_config(root: Path, text: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.toml").write_text(text, encoding="utf-8")


def homes(tmp_path: Path, *present: str) -> dict[str, str]:
    """The tools' root variables pointing into `tmp_path`, with the folders of `present` created."""
    env = {
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "CODEX_HOME": str(tmp_path / "codex"),
        "GEMINI_CLI_HOME": str(tmp_path / "gemini-home"),
    }
    folders = {"claude-code": tmp_path / "claude", "codex": tmp_path / "codex",
               "gemini": tmp_path / "gemini-home" / ".gemini"}  # fmt: skip
    for kind in present:
        folders[kind].mkdir(parents=True)
    return env


def test_by_default_every_source_whose_folder_exists_is_read(tmp_path: Path) -> None:
    env = homes(tmp_path, "claude-code", "gemini")
    statuses = resolve_sources(load_settings(env, store_root=tmp_path / "store"), env, home=tmp_path)
    assert [(s.kind, s.on, s.why) for s in statuses[:3]] == [
        ("claude-code", True, "found"),
        ("codex", False, "no folder there"),
        ("gemini", True, "found"),
    ]
    assert {(s.on, s.why) for s in statuses[3:]} == {(False, "no folder there")}  # the other agents
    assert statuses[2].root == tmp_path / "gemini-home" / ".gemini"
    assert [root.kind for root in enabled_roots(statuses)] == ["claude-code", "gemini"]


def test_without_the_tools_variables_the_roots_are_in_the_home(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    statuses = resolve_sources(load_settings({}, store_root=tmp_path / "store"), {}, home=tmp_path)
    expected = [tmp_path / ".claude", tmp_path / ".codex", tmp_path / ".gemini"]
    assert [status.root for status in statuses[:3]] == expected
    assert [status.on for status in statuses] == [False, True, False] + [False] * (len(statuses) - 3)


def test_config_switches_and_roots_then_the_environment_then_the_command_line(tmp_path: Path) -> None:
    env = homes(tmp_path, "claude-code", "codex", "gemini")
    elsewhere = tmp_path / "work-claude"
    elsewhere.mkdir()
    write_config(tmp_path / "store", f'[sources]\ncodex = false\nclaude_code_root = "{elsewhere}"\n')
    settings = load_settings(env, store_root=tmp_path / "store")
    statuses = resolve_sources(settings, env, home=tmp_path)
    assert statuses[0].root == elsewhere and statuses[0].on
    assert not statuses[1].on and statuses[1].why == "switched off by [sources] codex in config.toml"
    with_env = load_settings({**env, "SESSIONREF_SOURCES": "codex"}, store_root=tmp_path / "store")
    assert [s.on for s in resolve_sources(with_env, env, home=tmp_path)][:3] == [False, True, False]
    assert resolve_sources(with_env, env, home=tmp_path)[0].why == "switched off by SESSIONREF_SOURCES"
    chosen = resolve_sources(with_env, env, selection=("gemini",), home=tmp_path)
    assert [s.on for s in chosen][:3] == [False, False, True] and not any(s.on for s in chosen[3:])
    assert chosen[2].why == "switched on by --sources"


def test_a_source_asked_for_whose_folder_is_missing_says_so(tmp_path: Path) -> None:
    env = homes(tmp_path)
    settings = load_settings(env, store_root=tmp_path)
    statuses = resolve_sources(settings, env, selection=("codex",), home=tmp_path)
    assert statuses[1].why == "no folder there (asked for by --sources)"
    assert not statuses[1].on


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("all", SOURCE_KINDS),
        ("none", ()),
        ("", ()),
        ("claude-code,codex", ("claude-code", "codex")),
        (" Gemini , claude_code,gemini", ("gemini", "claude-code")),
    ],
)
def test_source_lists(text: str, expected: tuple[str, ...]) -> None:
    assert parse_source_list(text) == expected


def test_an_unknown_source_in_a_list_is_refused_with_the_known_ones() -> None:
    with pytest.raises(SourceListError) as raised:
        parse_source_list("claude-code,nosuchagent")
    assert "nosuchagent" in str(raised.value) and "codex" in str(raised.value)


@pytest.mark.parametrize(
    ("config", "env", "fragment"),
    [
        ("[sources]\ncodex = 1\n", {}, "[sources] codex must be true or false"),
        ("[sources]\nzed_agent = true\n", {}, "unknown key [sources] 'zed_agent'"),
        ('[sources]\ncodex_root = "relative/path"\n', {}, "must be an absolute path"),
        ("[sources]\ngemini_root = 3\n", {}, "must be a folder path"),
        ("sources = 1\n", {}, "[sources] must be a table"),
        ("", {"SESSIONREF_SOURCES": "claude-code,nope"}, "SESSIONREF_SOURCES: unknown source 'nope'"),
    ],
)
def test_bad_source_settings_are_coded(
    tmp_path: Path, config: str, env: dict[str, str], fragment: str
) -> None:
    write_config(tmp_path, config)
    with pytest.raises(SettingsError) as raised:
        load_settings(env, store_root=tmp_path)
    assert raised.value.code == SETTINGS_INVALID
    assert fragment in raised.value.message


def test_a_root_with_a_tilde_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    write_config(tmp_path / "store", '[sources]\ngemini_root = "~/profiles/g"\n')
    settings = load_settings({}, store_root=tmp_path / "store")
    assert settings.sources.roots["gemini"] == tmp_path / "profiles" / "g"
