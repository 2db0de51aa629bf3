"""The line mode's toolbar: hint lines are inert and fit on one terminal row each."""

from __future__ import annotations

from rich.cells import cell_len
from sessionref_tui.repl.chrome import ToolbarState, toolbar_fragments


def lines(state: ToolbarState) -> list[str]:
    return "".join(text for _style, text in toolbar_fragments(state)).split("\n")


def state(**changes: object) -> ToolbarState:
    base: dict[str, object] = {"title": "Plan", "cwd": "/w", "status": "running", "model_name": "demo"}
    return ToolbarState(**{**base, **changes})  # type: ignore[arg-type]


def test_the_streaming_line_is_inert_one_line_and_shows_the_newest_words() -> None:
    streamed = "**Step one**: read the \x1b[31mlog\x1b[0m\tthen " + "word " * 40 + "the end"
    streaming, status = lines(state(streaming=streamed, columns=60))
    assert streaming.startswith(" assistant › …") and streaming.endswith("word the end")
    assert "\x1b" not in streaming and "\t" not in streaming
    assert cell_len(streaming) < 60
    assert status.startswith(" Plan ")


def test_a_short_streaming_line_is_shown_whole() -> None:
    streaming, _status = lines(state(streaming="## Plan\u2028next", columns=80))
    assert streaming == " assistant › ## Plan\\u2028next"


def test_a_failed_lookup_is_named() -> None:
    hint, _status = lines(state(status="idle", lookup_failure="STORE_CLOSED: the store is closed"))
    assert hint == " @ sessions unavailable: STORE_CLOSED: the store is closed"


def test_the_status_line_fits_80_columns_and_keeps_the_status_whole() -> None:
    long = state(
        title="Incident review: cache stampede in the payments service (long)",
        cwd="/home/ana/src/payments/services/billing-service",
        status="idle",
        model_name="demo model (offline, no API key)",
        columns=80,
    )
    (status,) = lines(long)
    assert cell_len(status) < 80
    assert "│ idle │ " in status
    assert status.startswith(" Incident review") and "demo" in status


def test_a_short_status_line_is_shown_whole() -> None:
    (status,) = lines(state(status="idle", columns=80))
    assert status == " Plan │ /w │ idle │ demo"
