"""The prompt_toolkit line mode (`sessionref repl`)."""

from sessionref_tui.repl.app import LineMode, run_repl, run_repl_async

__all__ = ["LineMode", "run_repl", "run_repl_async"]
