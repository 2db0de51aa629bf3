"""The host layer's stable error codes (every code of every layer: docs/errors.md)."""

from __future__ import annotations

from enum import StrEnum


class HostCode(StrEnum):
    """Codes the wiring layer defines (`SettingsError`)."""

    SETTINGS_INVALID = "SETTINGS_INVALID"
    """A setting's value or key is not valid (an environment variable, a flag, a key of the file)."""
    SETTINGS_FILE_INVALID = "SETTINGS_FILE_INVALID"
    """The settings file itself cannot be used (not TOML, too large, unreadable)."""
