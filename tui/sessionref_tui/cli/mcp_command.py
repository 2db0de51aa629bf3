"""`sessionref mcp`: serve every session sessionref can see to another agent over MCP (stdio).

stdout carries JSON-RPC and nothing else: the store's progress, notes and log records go to
stderr (hosts capture it). The store is the one `sessionref chat` uses (created when missing,
as `chat` does: its index files are all that is ever written), with the same sources. Without
the optional `mcp` SDK it says how to install it (`MCP_SDK_MISSING`, exit 2).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from importlib.util import find_spec

from sessionref.contract.errors import describe_error
from sessionref.mcp.errors import MCP_SDK_MISSING

from sessionref_tui.cli.output import EXIT_OK, EXIT_USAGE, report_error
from sessionref_tui.cli.parser import package_version
from sessionref_tui.cli.store_access import command_roots, command_settings, created_store_root

MISSING_SDK_MESSAGE = (
    "the MCP server needs the optional MCP SDK: pip install 'sessionref[mcp]' (or pipx inject sessionref mcp)"
)


def cmd_mcp(args: argparse.Namespace) -> int:
    """`mcp`: run the MCP server on stdio until the client closes it."""
    if find_spec("mcp") is None:
        report_error(MCP_SDK_MISSING, MISSING_SDK_MESSAGE, as_json=False)
        return EXIT_USAGE
    from sessionref.mcp.readonly_sessions import ReadOnlySessions
    from sessionref.mcp.server import serve

    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="sessionref mcp: %(levelname)s %(message)s"
    )
    root = created_store_root(args)
    settings = command_settings(root)
    cwd = os.path.abspath(args.cwd) if args.cwd else os.getcwd()
    sessions = ReadOnlySessions(root, settings, sources=command_roots(args, settings), cwd=cwd)
    try:
        asyncio.run(serve(sessions, package_version()))
    except Exception as error:  # the traceback goes to stderr, never into the store
        logging.getLogger(__name__).error("the MCP server stopped", exc_info=error)
        code, message = describe_error(error, None)
        return report_error(code, message, as_json=False)
    return EXIT_OK
