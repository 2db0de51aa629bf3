"""Narrow picker rows drop columns in order: the id, then the folder, then the age; never the title."""

from __future__ import annotations

from dataclasses import dataclass

from sessionref_tui.widgets.candidate_rows import FieldWidths, RowFields, columns_for, layout_row

NOW_MS = 1_800_000_000_000
SESSION_ID = "f0155ab6-33c1-5b8e-9a7d-1c2e3f405050"


@dataclass(frozen=True)
class Row:
    session_id: str = SESSION_ID
    label: str = "Fix flaky retry test in payments"
    cwd: str | None = "/home/ana/src/payments"
    same_workspace: bool = True
    last_activity: int = NOW_MS - 3_600_000


FIELDS = RowFields.of(Row(), NOW_MS)
COLUMNS = columns_for([FIELDS])


def kept(width: int) -> tuple[bool, bool, bool]:
    widths = FieldWidths.of(COLUMNS, width)
    return widths.has_id_column, widths.has_cwd_column, widths.has_age_column


def test_a_wide_row_keeps_every_column() -> None:
    assert kept(140) == (True, True, True)
    assert SESSION_ID in layout_row(FIELDS, "", 140, COLUMNS).plain


def test_an_id_too_narrow_to_read_goes_first_and_the_title_stays_whole() -> None:
    assert kept(76) == (True, True, True)  # 13 cells of id still tell sessions apart
    assert kept(60) == (False, True, True)
    row = layout_row(FIELDS, "", 60, COLUMNS).plain
    assert "f01" not in row
    assert row.startswith("Fix flaky retry test in payments  ● /home/")
    assert row.endswith("1h")
    assert len(row) == 60


def test_narrower_the_folder_goes_then_the_age() -> None:
    assert kept(44) == (False, True, True)
    assert kept(36) == (False, False, True)
    assert layout_row(FIELDS, "", 36, COLUMNS).plain.endswith("1h")
    assert kept(18) == (False, False, False)
    row = layout_row(FIELDS, "", 18, COLUMNS).plain
    assert row.startswith("Fix") and "1h" not in row
    assert len(row) == 18
