"""`sessionref prepare TEXT --session ID`: what a message would send, without sending or writing."""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Mapping, Sequence
from typing import Any

from sessionref.service.session_ids import resolve_session_id

from sessionref_tui.cli.output import EXIT_OK, inert_block, safe_json
from sessionref_tui.cli.store_access import open_cli_store


def _block_texts(content: Any) -> str:
    """The text blocks of a message's content, joined by line breaks (other blocks are left out)."""
    if not isinstance(content, Sequence) or isinstance(content, str):
        return ""
    return "\n".join(
        block["text"]
        for block in content
        if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str)
    )


def format_prepared(content: Sequence[Any], context: Mapping[str, Any] | None, placement: str) -> str:
    """The text view of a prepared message: the readable text; then the context message's text as
    text (inert, line breaks kept) and its source (the references) as one line of compact JSON."""
    parts = [inert_block(_block_texts(content)), ""]
    if context is None:
        parts.append("(no context message: the text mentions no session)")
        return "\n".join(parts)
    parts.append(f"--- context message (placement: {placement}) ---")
    parts.append(inert_block(_block_texts(context.get("content"))))
    parts.append("--- context source ---")
    parts.append(safe_json(context.get("source"), compact=True))
    return "\n".join(parts)


def cmd_prepare(args: argparse.Namespace) -> int:
    """`prepare`: parse mentions in TEXT as if sent from --session and print what would be sent."""
    from sessionref.host.model_choice import build_model
    from sessionref.host.settings import load_settings
    from sessionref.host.workspace import Workspace

    store = open_cli_store(args)
    try:
        session_id = asyncio.run(resolve_session_id(store, args.session))
        settings = load_settings(os.environ, store_root=store.root)

        async def run() -> Any:
            workspace = Workspace(store, build_model(settings), cwd=None, settings=settings)
            try:
                return await workspace.references.prepare_text(workspace.agent(session_id), args.text)
            finally:
                await workspace.close(close_store=False)

        prepared = asyncio.run(run())
    finally:
        store.close()
    content = list(prepared.content)
    context = prepared.additional_context
    if args.json:
        print(safe_json({"content": content, "additionalContext": context}))
    else:
        print(format_prepared(content, context, settings.placement))
    return EXIT_OK
