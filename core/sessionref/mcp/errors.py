"""The stable error codes of the MCP server (`sessionref mcp`), and its error type.

Every failure an agent sees is an MCP error result whose message starts with one code: these,
or the code of the layer that failed (`STORE_SESSION_NOT_FOUND`, `SESSION_ID_AMBIGUOUS`,
`SESSION_REFERENCE_INVALID_REFERENCE`, …).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from sessionref.contract.errors import CodedError


class McpCode(StrEnum):
    """The MCP server's stable error codes (docs/errors.md)."""

    SDK_MISSING = "MCP_SDK_MISSING"
    """The `mcp` SDK (the optional extra `sessionref[mcp]`) is not installed."""
    INVALID_ARGUMENTS = "MCP_INVALID_ARGUMENTS"
    """A tool's arguments do not match its input schema (wrong type, unknown name, missing field)."""
    QUERY_TOO_LONG = "MCP_QUERY_TOO_LONG"
    """A query or session text is longer than `limits.MAX_QUERY_CHARS`."""
    INVALID_CURSOR = "MCP_INVALID_CURSOR"
    """A cursor that this server did not hand out for this listing (another listing's, edited, stale)."""
    UNKNOWN_NAME = "MCP_UNKNOWN_NAME"
    """No tool, prompt or resource of that name or URI."""
    SEARCH_UNAVAILABLE = "MCP_SEARCH_UNAVAILABLE"
    """The conversation index is still being built, or cannot be used: nothing could be searched."""
    CANCELLED = "MCP_CANCELLED"
    """The request was cancelled by the client while it ran."""


# The names the server's modules import; each is the catalogue member above.
MCP_SDK_MISSING: Final = McpCode.SDK_MISSING
MCP_INVALID_ARGUMENTS: Final = McpCode.INVALID_ARGUMENTS
MCP_QUERY_TOO_LONG: Final = McpCode.QUERY_TOO_LONG
MCP_INVALID_CURSOR: Final = McpCode.INVALID_CURSOR
MCP_UNKNOWN_NAME: Final = McpCode.UNKNOWN_NAME
MCP_SEARCH_UNAVAILABLE: Final = McpCode.SEARCH_UNAVAILABLE
MCP_CANCELLED: Final = McpCode.CANCELLED


class McpError(CodedError):
    """A failure of the MCP server itself, with one of the codes above."""
