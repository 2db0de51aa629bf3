"""The one-line notice under the composer's draft: an error, progress, or the mention-limit warning."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from sessionref_tui.display import inert
from sessionref_tui.mentions import MAX_DISTINCT_MENTIONS


def notice_text(*, error: str | None, busy: bool, busy_label: str, mentioned: int) -> tuple[str, Text] | None:
    """What the notice shows, most important first, as `(kind, text)`; None when nothing is to say.

    An error wins over progress, progress over the warning that more than
    `MAX_DISTINCT_MENTIONS` sessions are mentioned. The error text is shown inert.
    """
    if error is not None:
        return "-error", Text(inert(error))
    if busy:
        return "-busy", Text(f"⋯ {inert(busy_label)}" if busy_label else "⋯ working")
    if mentioned > MAX_DISTINCT_MENTIONS:
        extra = mentioned - MAX_DISTINCT_MENTIONS
        return "-warning", Text(
            f"⚠ {mentioned} sessions mentioned: a message may reference at most "
            f"{MAX_DISTINCT_MENTIONS}. Remove {extra} before sending."
        )
    return None


class ComposerNotice(Static):
    """Shows `notice_text`; hidden when there is nothing to say."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)

    def show(self, *, error: str | None, busy: bool, busy_label: str, mentioned: int) -> None:
        """Show the most important notice for this state, or hide."""
        notice = notice_text(error=error, busy=busy, busy_label=busy_label, mentioned=mentioned)
        self.remove_class("-error", "-warning", "-busy")
        self.set_class(notice is not None, "-shown")
        if notice is None:
            self.update("")
            return
        kind, text = notice
        self.add_class(kind)
        self.update(text)
