"""The arguments of each tool, checked at the edge (pydantic): their JSON schemas and their errors.

Types are strict (a number given as a string is a wrong type, not a number) and unknown argument
names are refused, so an agent learns at once what it got wrong: `MCP_INVALID_ARGUMENTS` names
the fields, never echoes their values. Numbers are not bounded here: `limits` clamps them.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sessionref.mcp.errors import MCP_INVALID_ARGUMENTS, McpError

SESSION_HELP = (
    "the session: its id, a unique start of its id, its dsh-session: URI, or a whole "
    "@[label](dsh-session:…) mention token"
)
EXCLUDE_HELP = (
    "sessions to leave out (ids, id prefixes or URIs), such as your own session; the caller's "
    "live session is left out anyway when it can be told"
)


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ListSessionsArguments(_Arguments):
    """`list_sessions`."""

    query: str = Field("", description="text to find in the title, id or folder (empty: every session)")
    limit: int | None = Field(None, description="sessions per page (default 20, at most 100)")
    cursor: str | None = Field(None, description="next_cursor of the previous page of this same listing")
    exclude: list[str] = Field(default_factory=list, description=EXCLUDE_HELP)


class SearchConversationsArguments(_Arguments):
    """`search_conversations`."""

    query: str = Field(description="a question or words about what was said (not the title)")
    limit: int | None = Field(None, description="sessions to return (default 10, at most 30)")
    exclude: list[str] = Field(default_factory=list, description=EXCLUDE_HELP)


class GetSnapshotArguments(_Arguments):
    """`get_snapshot`."""

    session: str = Field(description=SESSION_HELP)
    max_bytes: int | None = Field(
        None, description="byte budget of the snapshot's JSON (default: the configured one; 1024 to 262144)"
    )


class GetMessagesArguments(_Arguments):
    """`get_messages`."""

    session: str = Field(description=SESSION_HELP)
    around_seq: int | None = Field(
        None, description="the seq to read around (default: the end of the conversation)"
    )
    before: int | None = Field(None, description="messages before around_seq (default 10, at most 50)")
    after: int | None = Field(
        None,
        description="messages after the one at around_seq, which is always included (default 10, at most 50)",
    )


Arguments = TypeVar("Arguments", bound=_Arguments)


def parse_arguments(model: type[Arguments], tool: str, raw: dict[str, Any] | None) -> Arguments:
    """`raw` checked against `model`; `MCP_INVALID_ARGUMENTS` naming each wrong field."""
    try:
        return model.model_validate(raw or {})
    except ValidationError as error:
        problems = sorted(
            {
                f"{'.'.join(str(part) for part in item['loc']) or 'arguments'} ({item['msg']})"
                for item in error.errors(include_input=False, include_url=False)
            }
        )
        raise McpError(
            MCP_INVALID_ARGUMENTS, f"invalid arguments for {tool}: " + "; ".join(problems)
        ) from None


def input_schema(model: type[_Arguments]) -> dict[str, Any]:
    """The JSON schema an MCP host shows for `model`: no titles, and an optional argument typed as
    its value (`{"type": "integer"}`, not "integer or null"): leaving it out is how it is omitted,
    and hosts that turn typed-in text into arguments (the MCP Inspector) read the type from it."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    schema.pop("description", None)
    for field in schema.get("properties", {}).values():
        field.pop("title", None)
        choices = field.get("anyOf")
        if isinstance(choices, list) and field.get("default", ...) is None:
            typed = [choice for choice in choices if choice != {"type": "null"}]
            if len(typed) == 1:
                del field["anyOf"], field["default"]
                field.update(typed[0])
    return schema
