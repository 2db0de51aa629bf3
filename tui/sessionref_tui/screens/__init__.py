"""Screens of the sessionref Textual app."""
