"""Settings: where the store lives, which model to talk to, how snapshots are placed and budgeted.

Sources, lowest to highest precedence: built-in defaults, ``<store_root>/config.toml``, environment
variables. The store root itself comes from the ``store_root`` argument, else ``SESSIONREF_HOME``,
else the platform's user data directory. Every bad value raises :class:`SettingsError` with a stable
code and a message naming the key and where it came from; a pydantic traceback never escapes.
Bounds: ``config.toml`` is at most 1 MiB and nests at most 32 deep (:mod:`sessionref.host.bounded_toml`),
integers are at most 2**53 - 1, and a value quoted in a message is cut to 80 characters (head…tail).
Each value is parsed by :mod:`sessionref.host.setting_values`.

``config.toml`` (every key optional)::

    [model]
    api_key = "sk-..."                 # OPENAI_API_KEY; setting it switches from the demo model
    base_url = "https://api.openai.com/v1"   # OPENAI_BASE_URL
    model = "gpt-4o-mini"              # SESSIONREF_MODEL
    context_window = 128000            # SESSIONREF_CONTEXT_WINDOW (tokens)
    timeout = 60                       # SESSIONREF_MODEL_TIMEOUT (seconds of silence between reads)
    deadline = 600                     # SESSIONREF_MODEL_DEADLINE (seconds for a whole model call)
    demo_pace = 0.04                   # SESSIONREF_DEMO_PACE (seconds between demo words)

    [delivery]
    placement = "before"               # SESSIONREF_PLACEMENT: "before" | "after"

    [store]
    write_foreign_sessions = false     # SESSIONREF_WRITE_FOREIGN_SESSIONS: withdrawn (issue 20), still
                                       # accepted but ignored: another program's sessions are only read

    [sources]                          # other agents' histories (see `source_settings`)
    claude_code = true                 # SESSIONREF_SOURCES="claude-code,codex" | "all" | "none"
    codex = true
    gemini = true
    claude_code_root = "~/.claude"     # default: $CLAUDE_CONFIG_DIR, else ~/.claude

    [catalog]                          # a shared session catalog (see `catalog_settings`)
    url = "postgresql://ann@db/sessions"   # SESSIONREF_CATALOG_URL; unset: no catalog
    machine = "ann-laptop"             # SESSIONREF_CATALOG_MACHINE; default: the host name
    publish = ["store"]                # what `catalog publish` sends; default: nothing

    [references]
    maxReferences = 3
    candidateLimit = 50
    maxReferenceBytes = 65536          # omit for the automatic, model-relative budget
    referenceContextFraction = 0.2
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import platformdirs
from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError

from sessionref.contract.errors import CodedError, SessionReferenceError
from sessionref.contract.excerpts import bounded_excerpt
from sessionref.contract.options import Placement
from sessionref.host.bounded_toml import MAX_TOML_BYTES, TomlRejected, parse_bounded_toml
from sessionref.host.catalog_settings import CatalogSettings, catalog_layer
from sessionref.host.errors import HostCode
from sessionref.host.setting_values import (
    SHOWN_PATH_CHARS,
    BadValue,
    parse_base_url,
    parse_boolean,
    parse_model_id,
    parse_placement,
    parse_positive_int,
    parse_seconds,
    parse_secret,
    shown_value,
)
from sessionref.host.source_settings import SourcesSettings, sources_layer
from sessionref.models.base import DEFAULT_BASE_URL, DEFAULT_DEADLINE, DEFAULT_DEMO_PACE, MAX_DEMO_PACE
from sessionref.service.config import SessionReferenceConfig

SETTINGS_INVALID: Final = HostCode.SETTINGS_INVALID
SETTINGS_FILE_INVALID: Final = HostCode.SETTINGS_FILE_INVALID

logger = logging.getLogger(__name__)

CONFIG_FILE_NAME: Final = "config.toml"
DEFAULT_MODEL: Final = "gpt-4o-mini"
DEFAULT_TIMEOUT: Final = 60.0


class SettingsError(CodedError):
    """Invalid settings: ``code`` is SETTINGS_INVALID (a value or key) or SETTINGS_FILE_INVALID (the file)."""


class ModelSettings(BaseModel):
    """Which chat model to use; an API key selects the OpenAI-compatible model, else the demo model."""

    model_config = ConfigDict(frozen=True)

    api_key: SecretStr | None = None
    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    context_window: int | None = None
    timeout: float = DEFAULT_TIMEOUT
    deadline: float = DEFAULT_DEADLINE
    demo_pace: float = DEFAULT_DEMO_PACE


class StoreSettings(BaseModel):
    """The `[store]` section. `write_foreign_sessions` is withdrawn: parsed so old configs still load,
    then ignored (hosts never open a store with `write_foreign`; docs/reliability.md says why)."""

    model_config = ConfigDict(frozen=True)

    write_foreign_sessions: bool = False


class Settings(BaseModel):
    """Everything a host needs to open the store, build the model and configure references."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    store_root: Path
    config_file: Path | None = None
    model: ModelSettings = ModelSettings()
    store: StoreSettings = StoreSettings()
    sources: SourcesSettings = SourcesSettings()
    catalog: CatalogSettings = CatalogSettings()
    placement: Placement = "before"
    references: SessionReferenceConfig = SessionReferenceConfig()


_MODEL_KEYS: Final[dict[str, Callable[[object], object]]] = {
    "api_key": parse_secret,
    "base_url": parse_base_url,
    "model": parse_model_id,
    "context_window": parse_positive_int,
    "timeout": lambda value: parse_seconds(value, allow_zero=False),
    "deadline": lambda value: parse_seconds(value, allow_zero=False),
    "demo_pace": lambda value: parse_seconds(value, allow_zero=True, at_most=MAX_DEMO_PACE),
}
_ENV_KEYS: Final = {
    "OPENAI_API_KEY": "api_key",
    "OPENAI_BASE_URL": "base_url",
    "SESSIONREF_MODEL": "model",
    "SESSIONREF_CONTEXT_WINDOW": "context_window",
    "SESSIONREF_MODEL_TIMEOUT": "timeout",
    "SESSIONREF_MODEL_DEADLINE": "deadline",
    "SESSIONREF_DEMO_PACE": "demo_pace",
}
_REFERENCE_KEYS: Final = {
    "maxReferences": "max_references",
    "candidateLimit": "candidate_limit",
    "maxReferenceBytes": "max_reference_bytes",
    "referenceContextFraction": "reference_context_fraction",
}
_STORE_KEYS: Final[dict[str, Callable[[object], object]]] = {"write_foreign_sessions": parse_boolean}
_STORE_ENV_KEYS: Final = {"SESSIONREF_WRITE_FOREIGN_SESSIONS": "write_foreign_sessions"}
_SECTIONS: Final = ("model", "delivery", "references", "store", "sources", "catalog")


def _parse(parser: Callable[[object], object], value: object, where: str) -> Any:
    try:
        return parser(value)
    except BadValue as error:
        raise SettingsError(SETTINGS_INVALID, f"{where} {error}") from None


# --- sources ------------------------------------------------------------------------------------------


def default_store_root(env: Mapping[str, str] = os.environ) -> Path:
    """``SESSIONREF_HOME`` when set (non-empty), else ``<user data dir>/sessionref/sessions``.

    Same answer as ``sessionref.store.default_store_root`` but for the given ``env`` mapping.
    SETTINGS_INVALID when the variable starts with ``~user`` for a user this system does not know.
    """
    home = env.get("SESSIONREF_HOME", "").strip()
    if home:
        return _expanded(Path(home), "SESSIONREF_HOME")
    return platformdirs.user_data_path("sessionref") / "sessions"


def _expanded(path: Path, where: str) -> Path:
    """``path`` with a leading ``~`` or ``~user`` expanded; SETTINGS_INVALID when that home is unknown."""
    try:
        return path.expanduser()
    except RuntimeError:  # pathlib's answer for "~nosuchuser"
        shown = bounded_excerpt(str(path), SHOWN_PATH_CHARS)
        raise SettingsError(SETTINGS_INVALID, f"{where}: no home directory for {shown}") from None


_READ_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


def _read_regular_file(path: Path, limit: int) -> bytes:
    """At most `limit` bytes of the regular file `path`; `OSError` for anything else (a FIFO, a folder)."""
    fd = os.open(path, _READ_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        chunks: list[bytes] = []
        remaining = limit
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_config_file(path: Path) -> dict[str, Any] | None:
    """The TOML table in ``path`` (None when there is no such file); SETTINGS_FILE_INVALID if unreadable.

    Bounded (``sessionref.host.bounded_toml``): at most 1 MiB, nesting at most 32 deep. Opened
    non-blocking and read only when it is a regular file: a FIFO or a device named like the
    config is refused at once instead of hanging every command (docs/reliability.md).
    """
    try:
        raw = _read_regular_file(path, MAX_TOML_BYTES + 1)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:  # ValueError: a path holding a NUL character
        reason = getattr(error, "strerror", None) or error
        shown = bounded_excerpt(str(path), SHOWN_PATH_CHARS)  # may be any length: it came from outside
        raise SettingsError(SETTINGS_FILE_INVALID, f"cannot read {shown}: {reason}") from None
    try:
        return parse_bounded_toml(raw)
    except TomlRejected as error:
        raise SettingsError(SETTINGS_FILE_INVALID, f"{path} {error}") from None


def _section(table: Mapping[str, Any], name: str, path: Path) -> Mapping[str, Any]:
    section = table.get(name, {})
    if not isinstance(section, Mapping):
        raise SettingsError(SETTINGS_INVALID, f"{path}: [{name}] must be a table")
    return section


def _parsed_section(
    table: Mapping[str, Any], name: str, parsers: Mapping[str, Callable[[object], object]], path: Path
) -> dict[str, Any]:
    """The keys of section `name`, each through its parser; a key without one is SETTINGS_INVALID."""
    values: dict[str, Any] = {}
    for key, value in _section(table, name, path).items():
        parser = parsers.get(key)
        if parser is None:
            raise SettingsError(SETTINGS_INVALID, f"{path}: unknown key [{name}] {shown_value(key)}")
        values[key] = _parse(parser, value, f"{path}: [{name}] {key}")
    return values


def _file_layer(
    table: Mapping[str, Any], path: Path
) -> tuple[dict[str, Any], Placement | None, dict[str, Any]]:
    """(model values, placement, reference values) from a config table; unknown keys are errors."""
    for name in table:
        if name not in _SECTIONS:
            known = ", ".join(f"[{section}]" for section in _SECTIONS)
            shown = shown_value(name)
            raise SettingsError(SETTINGS_INVALID, f"{path}: unknown section or key {shown} (known: {known})")
    model = _parsed_section(table, "model", _MODEL_KEYS, path)
    placement: Placement | None = None
    for key, value in _section(table, "delivery", path).items():
        if key != "placement":
            raise SettingsError(SETTINGS_INVALID, f"{path}: unknown key [delivery] {shown_value(key)}")
        placement = _parse(parse_placement, value, f"{path}: [delivery] placement")
    references: dict[str, Any] = {}
    accepted = set(_REFERENCE_KEYS) | set(_REFERENCE_KEYS.values())
    for key, value in _section(table, "references", path).items():
        if key not in accepted:
            raise SettingsError(SETTINGS_INVALID, f"{path}: unknown key [references] {shown_value(key)}")
        references[_REFERENCE_KEYS.get(key, key)] = value
    return model, placement, references


def _store_layer(table: Mapping[str, Any], path: Path, env: Mapping[str, str]) -> StoreSettings:
    """[store] values from the config table, then environment variables (empty ones count as unset)."""
    values = _parsed_section(table, "store", _STORE_KEYS, path)
    for variable, key in _STORE_ENV_KEYS.items():
        value = env.get(variable)
        if value is not None and value.strip():
            values[key] = _parse(_STORE_KEYS[key], value, variable)
    if values.get("write_foreign_sessions"):
        logger.warning(
            "[store] write_foreign_sessions is withdrawn and ignored: another program's sessions "
            "are only read (an append cannot be made safe against a writer that ignores our lock)"
        )
    return StoreSettings(**values)


def _env_layer(env: Mapping[str, str]) -> tuple[dict[str, Any], Placement | None]:
    """(model values, placement) from environment variables; empty variables count as unset."""
    model: dict[str, Any] = {}
    for variable, key in _ENV_KEYS.items():
        value = env.get(variable)
        if value is not None and value.strip():
            model[key] = _parse(_MODEL_KEYS[key], value, variable)
    placement_value = env.get("SESSIONREF_PLACEMENT")
    placement: Placement | None = None
    if placement_value is not None and placement_value.strip():
        placement = _parse(parse_placement, placement_value, "SESSIONREF_PLACEMENT")
    return model, placement


def _reference_config(values: Mapping[str, Any], path: Path | None) -> SessionReferenceConfig:
    try:
        return SessionReferenceConfig.from_value(dict(values))
    except (SessionReferenceError, ValidationError) as error:
        detail = getattr(error, "message", None) or str(error)
        where = f"{path}: [references]" if path is not None else "[references]"
        raise SettingsError(SETTINGS_INVALID, f"{where} {detail}") from None


def load_settings(env: Mapping[str, str] = os.environ, *, store_root: Path | None = None) -> Settings:
    """Settings from defaults, ``<store_root>/config.toml`` and ``env`` (env wins); SettingsError if bad."""
    root = _expanded(Path(store_root), "store path") if store_root is not None else default_store_root(env)
    config_path = root / CONFIG_FILE_NAME
    table = read_config_file(config_path)
    found = config_path if table is not None else None
    file_model, file_placement, reference_values = _file_layer(table or {}, config_path)
    env_model, env_placement = _env_layer(env)
    store = _store_layer(table or {}, config_path, env)
    sources = sources_layer(
        _section(table or {}, "sources", config_path),
        config_path,
        env,
        lambda message: SettingsError(SETTINGS_INVALID, message),
    )
    catalog = catalog_layer(
        _section(table or {}, "catalog", config_path),
        config_path,
        env,
        lambda message: SettingsError(SETTINGS_INVALID, message),
    )
    placement: Placement = env_placement or file_placement or "before"
    try:
        model = ModelSettings(**{**file_model, **env_model})
        return Settings(
            store_root=root,
            config_file=found,
            model=model,
            store=store,
            sources=sources,
            catalog=catalog,
            placement=placement,
            references=_reference_config(reference_values, found),
        )
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise SettingsError(SETTINGS_INVALID, f"invalid setting {where}: {first.get('msg')}") from None
