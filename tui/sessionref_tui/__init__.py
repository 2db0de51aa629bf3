"""The Textual chat app, the prompt_toolkit line mode and the `sessionref` command."""
