"""The `[catalog]` settings: where the shared session catalog is, this machine's name, what it publishes.

``config.toml`` (every key optional; without ``url`` there is no catalog and nothing changes)::

    [catalog]
    url = "postgresql://ann@db.example/sessions"   # SESSIONREF_CATALOG_URL
    machine = "ann-laptop"        # SESSIONREF_CATALOG_MACHINE; default: this host's name
    publish = ["store"]   # what `catalog publish` sends by default (store, source kinds): none unless listed

The url is a PostgreSQL connection string (a ``postgresql://`` URI or ``key=value`` pairs); it is
kept as a secret and never quoted in an error (it may hold a password; docs/catalog.md).
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel, ConfigDict, SecretStr

from sessionref.contract.errors import CodedError
from sessionref.contract.excerpts import bounded_excerpt
from sessionref.sources import SOURCE_KINDS

if TYPE_CHECKING:
    from sessionref.host.catalog_link import CatalogLink

__all__ = [
    "CATALOG_URL_ENV",
    "PUBLISHABLE",
    "CatalogSettings",
    "catalog_layer",
    "open_configured_catalog",
    "parse_publish_list",
]

CATALOG_URL_ENV: Final = "SESSIONREF_CATALOG_URL"
CATALOG_MACHINE_ENV: Final = "SESSIONREF_CATALOG_MACHINE"
PUBLISHABLE: Final = ("store", *SOURCE_KINDS)
"""What may be published: the store's own sessions and each other agent's history."""
MACHINE_CHARS: Final = 200
SHOWN_CHARS: Final = 80


def default_machine() -> str:
    """This host's name (the default `[catalog] machine`)."""
    return socket.gethostname() or "localhost"


class CatalogSettings(BaseModel):
    """Where the catalog is (None: no catalog), this machine's name, and the sources it publishes."""

    model_config = ConfigDict(frozen=True)

    url: SecretStr | None = None
    machine: str = ""
    publish: tuple[str, ...] = ()

    @property
    def configured(self) -> bool:
        """Whether a catalog is configured (a url is set)."""
        return self.url is not None

    @property
    def machine_name(self) -> str:
        """`machine`, else this host's name."""
        return self.machine or default_machine()


def _url(value: object, where: str, error: Callable[[str], CodedError]) -> SecretStr | None:
    if not isinstance(value, str):
        raise error(f"{where} must be a PostgreSQL connection string")
    text = value.strip()
    if not text:
        return None
    if "\x00" in text or not (text.startswith(("postgresql://", "postgres://")) or "=" in text):
        # Never quote the value: it may hold a password.
        raise error(f"{where} must be a postgresql:// URI or key=value connection string")
    return SecretStr(text)


def _machine(value: object, where: str, error: Callable[[str], CodedError]) -> str:
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > MACHINE_CHARS:
        raise error(f"{where} must be a name of 1 to {MACHINE_CHARS} characters")
    text = value.strip()
    if any(ord(character) < 32 for character in text):
        raise error(f"{where} must not contain control characters")
    return text


def parse_publish_list(value: object) -> tuple[str, ...]:
    """The sources a publish list names (a list, or a comma-separated string; `all`, `none`)."""
    words: list[object]
    if isinstance(value, str):
        words = [word.strip() for word in value.split(",") if word.strip()]
    elif isinstance(value, list):
        words = list(value)
    else:
        raise ValueError("must be a list of source names")
    names = [word.lower().replace("_", "-") if isinstance(word, str) else word for word in words]
    if names == ["all"]:
        return PUBLISHABLE
    if names in ([], ["none"]):
        return ()
    chosen: list[str] = []
    for name in names:
        if not isinstance(name, str) or name not in PUBLISHABLE:
            shown = bounded_excerpt(repr(name), SHOWN_CHARS)
            raise ValueError(f"unknown source {shown} (known: {', '.join(PUBLISHABLE)}, or all / none)")
        if name not in chosen:
            chosen.append(name)
    return tuple(chosen)


def catalog_layer(
    table: Mapping[str, Any], path: Path, env: Mapping[str, str], error: Callable[[str], CodedError]
) -> CatalogSettings:
    """`[catalog]` from a config table (already known to be a table), then the environment."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        where = f"{path}: [catalog] {key}"
        if key == "url":
            values["url"] = _url(value, where, error)
        elif key == "machine":
            values["machine"] = _machine(value, where, error)
        elif key == "publish":
            try:
                values["publish"] = parse_publish_list(value)
            except ValueError as problem:
                raise error(f"{where} {problem}") from None
        else:
            shown = bounded_excerpt(repr(key), SHOWN_CHARS)
            raise error(f"{path}: unknown key [catalog] {shown} (known: url, machine, publish)")
    url = env.get(CATALOG_URL_ENV)
    if url is not None and url.strip():
        values["url"] = _url(url, CATALOG_URL_ENV, error)
    machine = env.get(CATALOG_MACHINE_ENV)
    if machine is not None and machine.strip():
        values["machine"] = _machine(machine, CATALOG_MACHINE_ENV, error)
    return CatalogSettings(**values)


def open_configured_catalog(
    settings: CatalogSettings, *, deadline: float | None = None
) -> CatalogLink | None:
    """The catalog link for `settings` (None, importing nothing of the catalog, when none is configured)."""
    if settings.url is None:
        return None
    from sessionref.host.catalog_link import KEYSTROKE_DEADLINE_SECONDS, open_catalog_link

    return open_catalog_link(settings, deadline=KEYSTROKE_DEADLINE_SECONDS if deadline is None else deadline)
