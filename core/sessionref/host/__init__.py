"""The wiring a host (the app, the line mode, the CLI) uses: the workspace, settings and model choice.

This is the only layer that knows every other one; UI widgets never import it directly.
"""
