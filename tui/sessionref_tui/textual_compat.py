"""The only place sessionref touches Textual's private API: two hooks Textual has no public form of.

Everything else goes through Textual's public API. Each private name used here is listed in
`PRIVATE_NAMES` and checked by `tests/tui/test_textual_compat.py`, which fails loudly when an
upgrade of Textual renames or reshapes one (the exact versions the snapshots were drawn with are in
`constraints/snapshots.txt`; the package accepts the compatible range of `pyproject.toml`).

- `filter_frames`: the `@` picker is rehearsed unseen (`sessionref_tui.app`): the frames drawn meanwhile
  must be laid out (so the picker's rows are measured) but not written to the terminal. `App.batch_update`
  is public but suspends the layout too; `App._display` is where a laid-out frame is written.
- `SteadyScrollbarOptionList`: `ScrollView._size_updated` decides whether a resize re-renders the
  scrollbar; the sidebar's list compares its own virtual size so that unrelated layouts (the picker
  opening) do not re-render it (see the class docstring).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import RenderableType
from textual.app import App
from textual.geometry import Size
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.widgets import OptionList

DISPLAY_METHOD = "_display"
"""`App._display(screen, renderable)`: writes one composed frame to the terminal."""

SIZE_UPDATED_METHOD = "_size_updated"
"""`ScrollView._size_updated(size, virtual_size, container_size, layout)`: applies a new size, returns
whether anything changed."""

PRIVATE_NAMES: dict[type[Any], dict[str, tuple[str, ...]]] = {
    App: {DISPLAY_METHOD: ("self", "screen", "renderable")},
    ScrollView: {SIZE_UPDATED_METHOD: ("self", "size", "virtual_size", "container_size", "layout")},
}
"""Each private method used here, by class, with the parameter names this module relies on."""

FrameWriter = Callable[[Screen[Any], RenderableType | None], None]
"""Writes a frame of `screen` to the terminal (`renderable` None: nothing to write)."""

FrameFilter = Callable[[Screen[Any], RenderableType | None], bool]
"""Says whether a frame of `screen` goes to the terminal."""

_FILTERS_ATTRIBUTE = "_sessionref_frame_filters"
"""Where an app keeps its frame filters, in order (`filter_frames`)."""


def filter_frames(app: App[Any], write: FrameFilter) -> None:
    """Make `app` write to the terminal only the frames for which `write(screen, renderable)` is True.

    The frames are still composed and laid out; only their output is held back. Filters run in the
    order they were installed, and a later one sees only the frames the earlier ones let through.
    Install before the app runs."""
    filters: list[FrameFilter] | None = app.__dict__.get(_FILTERS_ATTRIBUTE)
    if filters is None:
        filters = []
        setattr(app, _FILTERS_ATTRIBUTE, filters)
        writer: FrameWriter = getattr(app, DISPLAY_METHOD)
        chain = filters

        def filtered(screen: Screen[Any], renderable: RenderableType | None) -> None:
            if all(keep(screen, renderable) for keep in chain):
                writer(screen, renderable)

        setattr(app, DISPLAY_METHOD, filtered)
    filters.append(write)


class SteadyScrollbarOptionList(OptionList):
    """An `OptionList` whose scrollbar is re-rendered only when the list itself resized or changed.

    Textual's `ScrollView._size_updated` compares the size the compositor arranged (the visible box)
    with the list's own virtual size (every line); for a list longer than its box they always differ,
    so every screen layout, e.g. the `@` picker opening, re-rendered the scrollbar. Comparing the
    list's own virtual size keeps the real triggers: the list resized or its options changed
    (`set_options` updates the scrollbar itself).
    """

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        return super()._size_updated(size, self.virtual_size, container_size, layout)
