"""Widgets of the sessionref Textual app."""
