"""`sessionref mcp`: every session sessionref can see, for any agent that speaks MCP (docs/mcp.md).

The layer above `sessionref.host`. Only `server` imports the `mcp` SDK (an optional extra), and
only when the command runs; everything else here is plain Python the server calls:

* `errors`: the stable codes of its failures;
* `limits`: every clamp and byte cap an agent's request meets;
* `cursors`: pagination cursors bound to the listing they came from;
* `live_sessions`: which sessions are hidden from listings as the caller's own live one;
* `framing`: the untrusted frame around what other sessions said;
* `readonly_sessions`: `ReadOnlySessions`, what the tools, resources and prompts read (lazily
  opened store and conversation index, the CLI's own ranking, snapshot and id resolution);
* `server`: the MCP server over stdio.
"""
