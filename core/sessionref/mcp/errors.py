"""The stable error codes of the MCP server (`sessionref mcp`), and its error type.

Every failure an agent sees is an MCP error result whose message starts with one code: these,
or the code of the layer that failed (`STORE_SESSION_NOT_FOUND`, `SESSION_ID_AMBIGUOUS`,
`SESSION_REFERENCE_INVALID_REFERENCE`, …).
"""

from __future__ import annotations

from typing import Final

from sessionref.contract.errors import CodedError

# The `mcp` SDK (the optional extra `sessionref[mcp]`) is not installed.
MCP_SDK_MISSING: Final = "MCP_SDK_MISSING"
# A tool's arguments do not match its input schema (wrong type, unknown name, missing field).
MCP_INVALID_ARGUMENTS: Final = "MCP_INVALID_ARGUMENTS"
# A query or session text is longer than `limits.MAX_QUERY_CHARS`.
MCP_QUERY_TOO_LONG: Final = "MCP_QUERY_TOO_LONG"
# A cursor that this server did not hand out for this listing (another listing's, edited, stale).
MCP_INVALID_CURSOR: Final = "MCP_INVALID_CURSOR"
# No tool, prompt or resource of that name or URI.
MCP_UNKNOWN_NAME: Final = "MCP_UNKNOWN_NAME"
# The conversation index is still being built, or cannot be used: nothing could be searched.
MCP_SEARCH_UNAVAILABLE: Final = "MCP_SEARCH_UNAVAILABLE"
# The request was cancelled by the client while it ran.
MCP_CANCELLED: Final = "MCP_CANCELLED"


class McpError(CodedError):
    """A failure of the MCP server itself, with one of the codes above."""
