"""`SessionStore.records_with_titles`: a keystroke's conversation matches get their facts and their
labels from one call, agreeing with `record` and `title` one id at a time."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessionref.store import StoreError, open_store


def test_each_listed_id_gets_its_record_and_title_and_unlisted_ids_are_left_out(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_session(cwd="/work/app", session_id="named", created_at=1)
    store.create_session(cwd=None, session_id="plain", created_at=2)
    store.rename("named", "Retry budget")
    found = store.records_with_titles(["plain", "gone", "named"])
    assert found == {
        "plain": (store.record("plain"), store.title("plain")),
        "named": (store.record("named"), "Retry budget"),
    }
    assert found["named"][0].cwd == "/work/app"
    store.close()
    with pytest.raises(StoreError) as caught:
        store.records_with_titles(["named"])
    assert caught.value.code == "STORE_CLOSED"
