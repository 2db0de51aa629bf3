"""`sessionref chat | demo | repl`: the interactive apps. `chat` and `repl` create a missing store."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from pathlib import Path
from typing import Final

from sessionref.service.session_ids import resolve_session_id

from sessionref_tui.cli.store_access import created_store_root, open_cli_store

REPL_LOG_NAME: Final = "repl.log"
"""Where the line mode's diagnostics go (in the store root), so no traceback lands in the terminal."""


def cmd_chat(args: argparse.Namespace) -> int:
    """`chat`: the Textual app on the store (created first when missing)."""
    from sessionref_tui.launch import run_chat

    return run_chat(created_store_root(args), cwd=args.cwd, sources=args.sources)


def cmd_demo(args: argparse.Namespace) -> int:
    """`demo`: the Textual app on a throwaway seeded store (`--store` is refused by the parser)."""
    from sessionref_tui.launch import run_demo

    return run_demo(pace=args.pace)


def _route_diagnostics(root: Path) -> logging.Handler:
    """Send library log records to `<root>/repl.log` (or drop them when the store is read-only).

    The file is opened the way the store opens its own files (`open_in_root`): never through a
    symbolic link, only a regular file. Returns the handler added to the root logger, for the
    caller to remove (and close) when the line mode ends.
    """
    from sessionref.contract.errors import CodedError
    from sessionref.store.paths import open_in_root

    handler: logging.Handler = logging.NullHandler()
    if os.access(root, os.W_OK):
        try:
            fd = open_in_root(os.fspath(root), REPL_LOG_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except (OSError, CodedError):
            pass
        else:
            handler = logging.StreamHandler(os.fdopen(fd, "a", encoding="utf-8"))
            handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)
    return handler


def cmd_repl(args: argparse.Namespace) -> int:
    """`repl`: the line mode on the store (created first when missing), optionally continuing --session."""
    from sessionref.host.catalog_settings import open_configured_catalog
    from sessionref.host.model_choice import build_model
    from sessionref.host.settings import load_settings
    from sessionref.host.workspace import Workspace
    from sessionref.textsearch.store_index import StoreConversationIndex

    from sessionref_tui.repl.app import LineMode

    store = open_cli_store(args, create=True)
    diagnostics = _route_diagnostics(store.root)
    try:
        settings = load_settings(os.environ, store_root=store.root)
        cwd = os.path.abspath(args.cwd) if args.cwd else os.getcwd()
        session_id = None
        if args.session is not None:  # unknown or ambiguous: a clear error before the prompt opens
            session_id = asyncio.run(resolve_session_id(store, args.session))

        async def run() -> int:
            conversations = StoreConversationIndex(store)
            catalog = open_configured_catalog(settings.catalog)
            workspace = Workspace(
                store,
                build_model(settings),
                cwd=cwd,
                settings=settings,
                conversations=conversations,
                catalog=catalog,
            )
            try:
                return await LineMode(workspace, session_id=session_id).run()
            finally:
                await workspace.close(close_store=False)

        return asyncio.run(run())
    finally:
        store.close()
        logging.getLogger().removeHandler(diagnostics)
        diagnostics.close()
        if isinstance(diagnostics, logging.StreamHandler):
            diagnostics.stream.close()
