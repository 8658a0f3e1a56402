"""The learned bot's self-play training (training/learned.py): reproducible from its seed, resumable,
its ranking and its refusal of slow candidates."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.learned import PARAMETERS, read_parameters
from training import learned as training

SMALL = dict(minutes=5.0, seed=4, population=4, deals=2, sigma=0.5, curve_every=1, curve_deals=2,
             stock_size=5)


def comparable(state: dict) -> dict:
    """A run's state without its clock readings."""
    kept = {key: value for key, value in state.items() if key not in ("wall_s", "log", "curve")}
    kept["curve"] = [{k: v for k, v in point.items() if k != "wall_s"} for point in state["curve"]]
    kept["log"] = [{k: v for k, v in entry.items() if k != "seconds"} for entry in state["log"]]
    return kept


def test_a_resumed_run_ends_where_an_uninterrupted_one_does(tmp_path, monkeypatch):
    monkeypatch.setattr(training, "SLOW", float("inf"))  # the one machine-dependent choice: off
    whole = training.train(str(tmp_path / "whole"), resume=False, generations=2, **SMALL)
    training.train(str(tmp_path / "split"), resume=False, generations=1, **SMALL)
    split = training.train(str(tmp_path / "split"), resume=True, generations=2, **SMALL)
    assert whole["generation"] == split["generation"] == 2
    assert comparable(whole) == comparable(split)
    saved = json.loads((tmp_path / "split" / "state.json").read_text())
    assert comparable(saved) == comparable(split)


def test_training_starts_neutral_and_writes_weights_the_bot_reads(tmp_path):
    state = training.train(str(tmp_path / "run"), resume=False, generations=1, **SMALL)
    start = np.array(state["archive"][0])
    assert start[PARAMETERS.index("stock_cards")] == 1.0 and np.count_nonzero(start) == 1
    weights = read_parameters(str(tmp_path / "run" / "weights.json"))
    assert weights.tolist() == state["mu"]
    assert weights[PARAMETERS.index("stock_cards")] == 1.0  # the unit stays fixed
    assert state["mu"] != state["archive"][0]  # the generation moved the mean


def test_the_best_ranked_candidate_gets_the_largest_utility_and_they_sum_to_zero():
    u = training.utilities(16)
    assert u[0] == u.max() and np.all(np.diff(u) <= 0)
    assert u.sum() == pytest.approx(0.0)


def test_candidates_slower_than_the_limit_are_refused_and_leave_the_distribution_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(training, "SLOW", 0.0)
    state = training.train(str(tmp_path / "run"), resume=False, generations=1, **SMALL)
    assert state["log"][-1]["refused"] == SMALL["population"]
    assert state["mu"] == state["archive"][0]


@pytest.mark.parametrize("arguments, message", [
    (["--minutes", "-1"], "--minutes -1 is not allowed: use a number > 0"),
    (["--deals", "0"], "--deals 0 is not allowed: use a number >= 1"),
    (["--population", "3"], "--population 3 is not allowed: use an even number >= 2"),
])
def test_bad_numbers_are_refused_in_one_line_before_anything_is_written(tmp_path, capsys, arguments, message):
    out = tmp_path / "run"
    assert training.main(["--out", str(out), *arguments]) == 2
    assert capsys.readouterr().err.strip() == message
    assert not out.exists()


def test_an_output_path_that_is_a_file_is_refused_in_one_line(tmp_path, capsys):
    taken = tmp_path / "taken"
    taken.write_text("")
    assert training.main(["--out", str(taken), "--minutes", "0.01"]) == 2
    refusal = f"--out {str(taken)!r}: {str(taken)!r} is a file, not a folder: give a folder"
    assert capsys.readouterr().err.strip() == refusal
