"""Qwen Code: the live branch of the parentUuid tree, what is projected, titles and compactions."""

from __future__ import annotations

from pathlib import Path

from histories import READER_ROOTS, discover, projected, read_listed, write_jsonl
from sessionref.sources import parse_foreign_session_id
from sessionref.sources.qwen_code import READER

SHOP = "qwen-code:a1b2c3d4-0000-4000-8000-00000000qw01"
API = "qwen-code:b2c3d4e5-0000-4000-8000-00000000qw02"


def test_every_session_file_is_listed_but_an_empty_one() -> None:
    listed = {summary.session_id: summary for summary in discover("qwen-code")}
    assert set(listed) == {SHOP, API}
    assert listed[SHOP].cwd == "/home/ana/shop" and listed[API].cwd == "/home/ana/api"
    assert parse_foreign_session_id(SHOP) == ("qwen-code", SHOP.partition(":")[2])


def test_the_custom_title_wins_else_the_first_prompt() -> None:
    listed = {summary.session_id: summary for summary in discover("qwen-code")}
    assert listed[SHOP].title == "Cart rounding"
    assert listed[API].title == "Paginate the orders endpoint"


def test_only_the_live_branchs_visible_text_is_projected() -> None:
    (shop,) = [summary for summary in discover("qwen-code") if summary.session_id == SHOP]
    session = read_listed(shop)
    assert projected(session) == [
        ("user", "Why does the cart total round down?", False),
        ("assistant", "The total is floored in cents.", False),
        ("assistant", "Use round-half-even instead of floor.", False),
        ("user", "Actually, keep floor but document it", False),
        ("assistant", "Documented the floor in the docstring.", False),
    ]
    assert session.skipped_lines == 1 and session.title == "Cart rounding"


def test_a_compression_with_a_summary_is_a_checkpoint() -> None:
    (api,) = [summary for summary in discover("qwen-code") if summary.session_id == API]
    assert projected(read_listed(api)) == [
        ("user", "Orders endpoint now paginates with a cursor.", True),
        ("user", "Now add a page size limit", False),
        ("assistant", "Capped page size at 100.", False),
    ]


def test_a_file_with_only_tool_or_system_records_is_not_a_session(tmp_path: Path) -> None:
    write_jsonl(
        tmp_path / "projects" / "p" / "chats" / "s.jsonl",
        [{"uuid": "x", "type": "system", "subtype": "custom_title", "title": "Named only"}],
    )
    assert discover("qwen-code", tmp_path) == []


def test_the_default_root_is_in_the_home_folder() -> None:
    assert READER.default_root({}, Path("/home/ana")) == Path("/home/ana/.qwen")
    assert READER_ROOTS["qwen-code"].is_dir()
