"""Settings: defaults, config.toml, environment precedence, and clear errors for bad values."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessionref.host.model_choice import build_model
from sessionref.host.settings import (
    SETTINGS_FILE_INVALID,
    SETTINGS_INVALID,
    SettingsError,
    default_store_root,
    load_settings,
)
from sessionref.models import DemoModel, OpenAIChatModel


def write_config(root: Path, text: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_env_or_file_build_the_demo_model(tmp_path: Path) -> None:
    settings = load_settings({}, store_root=tmp_path)
    assert settings.store_root == tmp_path
    assert settings.config_file is None
    assert settings.placement == "before"
    assert settings.model.api_key is None
    assert settings.model.base_url == "https://api.openai.com/v1"
    assert settings.model.model == "gpt-4o-mini"
    assert settings.references.max_references == 3
    assert settings.references.max_reference_bytes is None
    model = build_model(settings)
    assert isinstance(model, DemoModel)
    assert model.pace == pytest.approx(0.04)


def test_store_root_from_argument_then_sessionref_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert load_settings({"SESSIONREF_HOME": str(home)}).store_root == home
    explicit = tmp_path / "explicit"
    assert load_settings({"SESSIONREF_HOME": str(home)}, store_root=explicit).store_root == explicit
    fallback = load_settings({"SESSIONREF_HOME": "  "}).store_root
    assert fallback == default_store_root({})


def test_the_default_store_root_is_in_the_user_data_folder(tmp_path: Path) -> None:
    assert default_store_root({}).parts[-2:] == ("sessionref", "sessions")
    assert default_store_root({"SESSIONREF_HOME": str(tmp_path / "home")}) == tmp_path / "home"


def test_one_env_var_switches_to_the_real_model(tmp_path: Path) -> None:
    settings = load_settings({"OPENAI_API_KEY": "sk-abc"}, store_root=tmp_path)
    model = build_model(settings)
    assert isinstance(model, OpenAIChatModel)
    assert (model.model, model.base_url, model.context_window) == (
        "gpt-4o-mini",
        "https://api.openai.com/v1",
        128_000,
    )
    assert "sk-abc" not in repr(settings)


def test_env_values_reach_the_model(tmp_path: Path) -> None:
    env = {
        "OPENAI_API_KEY": "sk-abc",
        "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1/",
        "SESSIONREF_MODEL": "llama3:8b",
        "SESSIONREF_CONTEXT_WINDOW": "8192",
        "SESSIONREF_MODEL_TIMEOUT": "5",
        "SESSIONREF_PLACEMENT": "After",
    }
    settings = load_settings(env, store_root=tmp_path)
    model = build_model(settings)
    assert isinstance(model, OpenAIChatModel)
    assert model.endpoint == "http://127.0.0.1:8080/v1/chat/completions"
    assert (model.model, model.context_window, model.timeout) == ("llama3:8b", 8192, 5.0)
    assert settings.placement == "after"


def test_config_file_is_read_and_env_wins(tmp_path: Path) -> None:
    path = write_config(
        tmp_path,
        """
[model]
model = "gpt-4.1-mini"
base_url = "https://llm.example.test/v1"
context_window = 64_000
demo_pace = 0

[delivery]
placement = "after"

[references]
maxReferences = 2
candidateLimit = 20
maxReferenceBytes = 4096
reference_context_fraction = 0.5
""",
    )
    from_file = load_settings({}, store_root=tmp_path)
    assert from_file.config_file == path
    assert (from_file.model.model, from_file.model.context_window) == ("gpt-4.1-mini", 64_000)
    assert from_file.placement == "after"
    refs = from_file.references
    assert (refs.max_references, refs.candidate_limit, refs.max_reference_bytes) == (2, 20, 4096)
    assert refs.reference_context_fraction == 0.5
    demo = build_model(from_file)
    assert isinstance(demo, DemoModel) and demo.pace == 0

    env = {"SESSIONREF_MODEL": "gpt-4o", "SESSIONREF_PLACEMENT": "before", "SESSIONREF_CONTEXT_WINDOW": ""}
    overridden = load_settings(env, store_root=tmp_path)
    assert overridden.model.model == "gpt-4o"
    assert overridden.placement == "before"
    assert overridden.model.context_window == 64_000, "an empty env var counts as unset"
    assert overridden.model.base_url == "https://llm.example.test/v1"


def test_api_key_from_the_file_selects_the_real_model(tmp_path: Path) -> None:
    write_config(tmp_path, '[model]\napi_key = "sk-file"\n')
    assert isinstance(build_model(load_settings({}, store_root=tmp_path)), OpenAIChatModel)
    assert isinstance(
        build_model(load_settings({"OPENAI_API_KEY": ""}, store_root=tmp_path)), OpenAIChatModel
    )


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"SESSIONREF_CONTEXT_WINDOW": "lots"}, "SESSIONREF_CONTEXT_WINDOW"),
        ({"SESSIONREF_CONTEXT_WINDOW": "0"}, "SESSIONREF_CONTEXT_WINDOW"),
        ({"SESSIONREF_CONTEXT_WINDOW": "-5"}, "SESSIONREF_CONTEXT_WINDOW"),
        ({"SESSIONREF_PLACEMENT": "middle"}, "SESSIONREF_PLACEMENT"),
        ({"OPENAI_BASE_URL": "api.openai.com/v1"}, "OPENAI_BASE_URL"),
        ({"OPENAI_BASE_URL": "ftp://host/v1"}, "OPENAI_BASE_URL"),
        ({"SESSIONREF_MODEL": "gpt 4"}, "SESSIONREF_MODEL"),
        ({"SESSIONREF_DEMO_PACE": "fast"}, "SESSIONREF_DEMO_PACE"),
        ({"SESSIONREF_DEMO_PACE": "-1"}, "SESSIONREF_DEMO_PACE"),
        ({"SESSIONREF_DEMO_PACE": "nan"}, "SESSIONREF_DEMO_PACE"),
        ({"SESSIONREF_MODEL_TIMEOUT": "0"}, "SESSIONREF_MODEL_TIMEOUT"),
        ({"OPENAI_API_KEY": "sk-\x1b[31m"}, "OPENAI_API_KEY"),
        # Every terminal-unsafe character is refused, not only C0/C1 (contract.terminal_text).
        ({"OPENAI_API_KEY": "sk-\u202eabc"}, "OPENAI_API_KEY"),
        ({"SESSIONREF_MODEL": "gpt\u2066-4"}, "SESSIONREF_MODEL"),
        ({"OPENAI_BASE_URL": "https://host/\u2028v1"}, "OPENAI_BASE_URL"),
    ],
)
def test_invalid_env_values_name_the_variable(tmp_path: Path, env: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(env, store_root=tmp_path)
    assert caught.value.code == SETTINGS_INVALID
    assert caught.value.message.startswith(named)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[model]\ncontext_window = true\n", "[model] context_window"),
        ("[model]\ncontext_window = 1.5\n", "[model] context_window"),
        ("[model]\nmodle = 'x'\n", "'modle'"),
        ("[delivery]\nplacement = 3\n", "[delivery] placement"),
        ("[delivery]\norder = 'after'\n", "'order'"),
        ("[references]\nmaxReferences = 4\n", "maxReferences"),
        ("[references]\nmaxReferences = 0\n", "maxReferences"),
        ("[references]\nreferenceContextFraction = 2.0\n", "referenceContextFraction"),
        ("[references]\nmaxRefs = 2\n", "'maxRefs'"),
        ("[refs]\nmaxReferences = 2\n", "'refs'"),
        ("model = 'gpt-4o'\n", "[model] must be a table"),
        ("references = 3\n", "[references] must be a table"),
    ],
)
def test_invalid_file_values_name_the_key_and_the_file(tmp_path: Path, text: str, named: str) -> None:
    path = write_config(tmp_path, text)
    with pytest.raises(SettingsError) as caught:
        load_settings({}, store_root=tmp_path)
    assert caught.value.code == SETTINGS_INVALID
    assert str(path) in caught.value.message
    assert named in caught.value.message


def test_a_file_that_is_not_toml_is_a_file_error(tmp_path: Path) -> None:
    write_config(tmp_path, "[model\nmodel = \n")
    with pytest.raises(SettingsError) as caught:
        load_settings({}, store_root=tmp_path)
    assert caught.value.code == SETTINGS_FILE_INVALID
    assert "not valid TOML" in caught.value.message


def test_a_file_that_is_not_utf8_or_not_readable_is_a_file_error(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.toml").write_bytes(b"[model]\nmodel = '\xff'\n")
    with pytest.raises(SettingsError) as caught:
        load_settings({}, store_root=tmp_path / "bad")
    assert caught.value.code == SETTINGS_FILE_INVALID
    (tmp_path / "dir" / "config.toml").mkdir(parents=True)
    with pytest.raises(SettingsError) as caught:
        load_settings({}, store_root=tmp_path / "dir")
    assert caught.value.code == SETTINGS_FILE_INVALID
    assert "cannot read" in caught.value.message


def settings_error(tmp_path: Path, env: dict[str, str], config: str | None = None) -> SettingsError:
    if config is not None:
        write_config(tmp_path, config)
    with pytest.raises(SettingsError) as caught:
        load_settings(env, store_root=tmp_path)
    return caught.value


MESSAGE_BOUND = 400  # every message below quotes at most SHOWN_VALUE_CHARS of the value


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        pytest.param(
            "SESSIONREF_CONTEXT_WINDOW",
            "9" * 5000,
            "positive integer up to 9007199254740991",
            id="5000-digits",
        ),
        ("SESSIONREF_CONTEXT_WINDOW", "9007199254740992", "positive integer up to 9007199254740991"),
        ("SESSIONREF_CONTEXT_WINDOW", "²", "positive integer"),  # str.isdigit() says yes, int() says no
        ("SESSIONREF_CONTEXT_WINDOW", "١٢٣", "positive integer"),
        ("OPENAI_BASE_URL", "http://[::1", "http(s) URL"),  # urlsplit raises ValueError
        pytest.param("OPENAI_BASE_URL", "ftp://" + "h" * 10_000_000, "http(s) URL", id="10MB-url"),
        pytest.param("SESSIONREF_MODEL_TIMEOUT", "x" * 10_000_000, "number of seconds", id="10MB-timeout"),
        ("SESSIONREF_MODEL", "model\udcff", "UTF-8 text"),  # os.environ's stand-in for a byte not in UTF-8
        pytest.param("SESSIONREF_PLACEMENT", "b" * 1_000_000, "before", id="1MB-placement"),
    ],
)
def test_bad_env_values_are_coded_with_a_bounded_excerpt(
    tmp_path: Path, variable: str, value: str, says: str
) -> None:
    error = settings_error(tmp_path, {"OPENAI_API_KEY": "sk-x", variable: value})
    assert error.code == SETTINGS_INVALID
    assert error.message.startswith(variable)
    assert says in error.message
    assert len(error.message) < MESSAGE_BOUND


def test_a_valid_context_window_at_the_bound_is_kept(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": "sk-x", "SESSIONREF_CONTEXT_WINDOW": "9_007_199_254_740_991"}
    assert load_settings(env, store_root=tmp_path).model.context_window == 2**53 - 1


@pytest.mark.parametrize(
    ("config", "says"),
    [
        pytest.param(
            "[model]\ncontext_window = " + "9" * 4000,
            "positive integer up to 9007199254740991",
            id="4000-digits",
        ),
        pytest.param(
            "[model]\ntimeout = " + "9" * 4000, "finite number of seconds", id="timeout-4000-digits"
        ),
        pytest.param(
            "[references]\nreferenceContextFraction = " + "9" * 400,
            "between zero and one",
            id="fraction-huge",
        ),
        pytest.param("[model]\n" + "k" * 1_000_000 + " = 1\n", "unknown key [model]", id="1MB-key"),
        pytest.param("[store]\n" + "k" * 1_000_000 + " = 1\n", "unknown key [store]", id="1MB-store-key"),
        pytest.param("[" + "s" * 1_000_000 + "]\n", "unknown section or key", id="1MB-section"),
    ],
)
def test_bad_file_values_are_coded_with_a_bounded_excerpt(tmp_path: Path, config: str, says: str) -> None:
    error = settings_error(tmp_path, {}, config)
    assert error.code == SETTINGS_INVALID
    assert says in error.message
    assert len(error.message) < MESSAGE_BOUND + len(str(tmp_path))


@pytest.mark.parametrize(
    ("config", "says"),
    [
        pytest.param(
            "[model]\ncontext_window = " + "9" * 5000,
            "integer literal is too long (line 2)",
            id="5000-digits",
        ),
        pytest.param("a = " + "[" * 1000 + "]" * 1000, "deeper than 32 levels", id="arrays-1000-deep"),
        pytest.param(
            "[references]\nmaxReferences = " + "{a = " * 1000 + "1" + "}" * 1000,
            "deeper than 32 levels",
            id="tables-1000-deep",
        ),
        pytest.param("a = " + "[" * 100_000, "deeper than 32 levels", id="unclosed-100000-deep"),
        pytest.param("#" * (2 * 1024 * 1024), "larger than 1048576 bytes", id="2MB-file"),
    ],
)
def test_unparseable_files_are_file_errors(tmp_path: Path, config: str, says: str) -> None:
    error = settings_error(tmp_path, {}, config)
    assert error.code == SETTINGS_FILE_INVALID
    assert says in error.message
    assert len(error.message) < MESSAGE_BOUND + len(str(tmp_path))


def test_brackets_inside_strings_and_comments_do_not_count_as_nesting(tmp_path: Path) -> None:
    write_config(tmp_path, '[model]\nmodel = "' + "[" * 500 + ' x"  # ' + "{" * 500 + "\n")
    error = settings_error(tmp_path, {})
    assert error.code == SETTINGS_INVALID  # the file parsed; the model id is what is wrong
    assert "model id" in error.message


def test_an_unreadable_store_path_is_a_file_error_with_a_bounded_path(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings({"SESSIONREF_HOME": str(tmp_path / "nul\0here")})
    assert caught.value.code == SETTINGS_FILE_INVALID
    with pytest.raises(SettingsError) as caught:
        load_settings({}, store_root=tmp_path / ("d" * 5_000_000))
    assert caught.value.code == SETTINGS_FILE_INVALID
    assert len(caught.value.message) < 1_000


def test_a_home_directory_that_cannot_be_found_is_a_settings_error(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings({"SESSIONREF_HOME": "~no-such-user-here/store"})
    assert caught.value.code == SETTINGS_INVALID
    assert caught.value.message == "SESSIONREF_HOME: no home directory for ~no-such-user-here/store"
    with pytest.raises(SettingsError) as caught:
        load_settings({}, store_root=Path("~no-such-user-here"))
    assert caught.value.code == SETTINGS_INVALID


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_config_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    import os

    path = tmp_path / "config.toml"
    if kind == "fifo":
        os.mkfifo(path)  # opened blocking, this would wait for a writer forever (issue 20)
    else:
        path.mkdir()
    with pytest.raises(SettingsError) as refused:
        load_settings({}, store_root=tmp_path)
    assert refused.value.code == "SETTINGS_FILE_INVALID"


@pytest.mark.parametrize("pace", ["1e308", "11", "86401"])
def test_a_demo_pace_beyond_the_bound_is_refused(tmp_path: Path, pace: str) -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings({"SESSIONREF_DEMO_PACE": pace}, store_root=tmp_path)
    assert refused.value.code == "SETTINGS_INVALID" and "at most" in refused.value.message


def test_a_timeout_beyond_a_day_is_refused(tmp_path: Path) -> None:
    write_config(tmp_path, "[model]\ntimeout = 1e308\n")
    with pytest.raises(SettingsError) as refused:
        load_settings({}, store_root=tmp_path)
    assert "at most" in refused.value.message
