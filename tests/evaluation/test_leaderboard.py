"""The leaderboard page (docs/leaderboard.md) shows exactly the result files of docs/leaderboard/, and for each
training backend's shipped config the row of what it made and the compute read from its run's record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.loading import PRETRAINED
from agents.saved_model import read_model
from agents.spec_names import split_name
from evaluation.benchmark import PROTOCOL, TABLE_SETS, deal_hash
from evaluation.leaderboard import FOLDER, PAGE, ROOT, compute, load_records, render, table_in, write_page
from training.backends import BACKENDS
from training.config import DEFAULT_BACKEND, load_config
from training.leaderboard import backend, made_by, render_page


def test_the_page_shows_exactly_the_result_files():
    assert table_in(PAGE.read_text()) == render_page(load_records()), "run: python -m training.leaderboard --write"


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
    write_page(render_page(load_records(FOLDER)), page)
    assert page.read_text() == PAGE.read_text()
    assert PROTOCOL in page.read_text()


# ---------------------------------------------------------------------- the training backends' shipped configs
def model_file(spec: str) -> Path:
    """The file a leaderboard row's spec plays: a shipped player's, a ``neural:model=`` network, a model path."""
    spec = split_name(spec)[1]
    if spec in PRETRAINED:
        return Path(PRETRAINED[spec]).resolve()
    return (ROOT / spec.removeprefix("neural:model=")).resolve()


def test_every_player_a_backend_made_has_its_shipped_config_its_row_and_its_record():
    """A backend that made no player has a row saying so (tests/training/test_backend_registry.py); every row
    names a backend, a config, a result file and the record of its compute."""
    assert {backend(ROOT / made.config) for made in made_by()} <= set(BACKENDS)
    assert DEFAULT_BACKEND == load_config(ROOT / "configs" / "ppo_2p.yaml").backend
    records = {record["file"]: record for record in load_records()}
    for made in made_by():
        config = load_config(ROOT / made.config)
        assert backend(ROOT / made.config) == config.backend
        assert made.result in records, f"{made.config}: its player's result file {made.result} is not in {FOLDER}"
        record = records[made.result]
        assert record["players"] == config.rules["num_players"], made
        source = ROOT / made.record
        run = json.loads(source.read_text()) if source.suffix == ".json" else {}
        if "model" in run:  # a run record: it names the model the row plays and the config
            assert model_file(record["policy"]["spec"]) == (ROOT / run["model"]).resolve(), made
            assert run["config"] == made.config and run["command"].split()[:3] == ["skipbo", "train", config.name]
            model = read_model(ROOT / run["model"])[1]
            assert (model["timesteps"], model["config"]["backend"]) == (run["timesteps"], config.backend), made
        else:  # the model file itself
            assert model_file(record["policy"]["spec"]) == source.resolve(), made


def test_the_compute_is_read_from_the_record(tmp_path):
    record = json.loads((ROOT / "agents/pretrained/learned-2p.json").read_text())
    assert compute(ROOT / "agents/pretrained/learned-2p.json").startswith(f"{record['games']:,} hands, in 40 generations")
    record["games"], record["wall_seconds"] = 1234, 7200
    (tmp_path / "run.json").write_text(json.dumps(record))
    assert compute(tmp_path / "run.json").startswith("1,234 hands, in 40 generations, 2.00 hours of wall time")
    (tmp_path / "run.json").write_text(json.dumps({"hands": 10, "cpu_seconds": 1800}))
    assert compute(tmp_path / "run.json") == "10 hands, 0.50 CPU-hours"
    (tmp_path / "run.json").write_text(json.dumps({"timesteps": 5}))
    assert compute(tmp_path / "run.json") == "5 PPO steps, no time recorded"
    assert "3,002,368 PPO steps" in compute(ROOT / "agents/pretrained/ppo-2p.zip")
