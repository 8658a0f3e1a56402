"""The leaderboard page (docs/leaderboard.md) shows exactly the result files of docs/leaderboard/."""

from __future__ import annotations

import json

import pytest

from evaluation.benchmark import PROTOCOL, TABLE_SETS, deal_hash
from evaluation.leaderboard import FOLDER, PAGE, load_records, render, table_in, write_page


def test_the_page_shows_exactly_the_result_files():
    assert table_in(PAGE.read_text()) == render(load_records()), "run: python -m evaluation.leaderboard --write"


def test_every_result_file_is_a_complete_run_on_the_pinned_deals_against_the_ladder():
    records = load_records()
    assert records, "the leaderboard has rows"
    hashes = {}
    for record in records:
        table = TABLE_SETS[record["players"]]
        deals = table.deals[record["tier"]]
        assert record["deal_set"]["deals"] == deals
        if (record["players"], deals) not in hashes:
            hashes[record["players"], deals] = deal_hash(record["players"], deals)
        assert record["deal_set"]["hash"] == hashes[record["players"], deals]
        assert [(r["rung"], r["anchor"]) for r in record["rungs"]] == [(r.spec, r.anchor) for r in table.ladder]


def test_a_partial_run_or_a_changed_figure_is_caught(tmp_path):
    record = json.loads(next(FOLDER.glob("*.json")).read_text())
    record["rungs"][0]["win_rate"] = 0.123
    (tmp_path / "changed.json").write_text(json.dumps(record))
    assert "12.3%" in render(load_records(tmp_path))
    assert render(load_records(tmp_path)) != table_in(PAGE.read_text())
    record["complete"] = False
    (tmp_path / "changed.json").write_text(json.dumps(record))
    with pytest.raises(ValueError, match="not a complete skipbo-bench-v1 result"):
        load_records(tmp_path)


def test_writing_the_page_replaces_only_the_tables(tmp_path):
    page = tmp_path / "leaderboard.md"
    page.write_text(PAGE.read_text().replace(table_in(PAGE.read_text()), "stale\n"))
    write_page(page, FOLDER)
    assert page.read_text() == PAGE.read_text()
    assert PROTOCOL in page.read_text()
