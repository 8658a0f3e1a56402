"""``backend: snes`` (training/snes/trainer.py): the learned bot's weights trained by ``skipbo train``,
reproducible from the seed, resumable, its ranking, its refusal of slow candidates, its tables at any
number of seats and its one-line refusals of configs it cannot run (``ray`` included: the runs on Ray
are in tests/rllib/test_distributed.py)."""

from __future__ import annotations

import io
import json
import operator
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.batched import bots
from agents.batched.learned import TABLE_CODES
from agents.learned_parameters import PARAMETERS, WEIGHTS_FILE, read_parameters
from training.snes import trainer as training
from training.checkpoint import RunFolder
from skipbo_cli.main import main
from training.config import ConfigError, load_config
from training.distributed import WorkPool
from training.run import train

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "snes_2p.yaml"
SMALL = ["rules.stock_size=5", "snes.population=4", "snes.deals=2", "snes.curve_every=1", "snes.curve_deals=2",
         "snes.final_deals=2", "seed=4"]


def run(tmp_path: Path, name: str, *overrides: str, resume: Path | None = None):
    out = io.StringIO()
    if resume is not None:
        return train(None, list(overrides), resume=resume, progress=False, out=out)
    return train(CONFIG, [*SMALL, f"output_dir={tmp_path / name}", *overrides], progress=False, out=out)


def last_state(run_dir: Path) -> dict:
    return json.loads((RunFolder(run_dir).latest_checkpoint() / "state.json").read_text())


def comparable(state: dict) -> dict:
    """A run's state without its clock readings."""
    kept = {key: value for key, value in state.items() if key not in ("wall_seconds", "log", "history")}
    kept["history"] = [{k: v for k, v in point.items() if k != "wall_seconds"} for point in state["history"]]
    kept["log"] = [{k: v for k, v in entry.items() if k != "seconds"} for entry in state["log"]]
    return kept


def test_a_resumed_run_ends_where_an_uninterrupted_one_does(tmp_path):
    whole = run(tmp_path, "whole", "snes.generations=2")
    first = run(tmp_path, "split", "snes.generations=1")
    split = run(tmp_path, "split", "snes.generations=2", resume=first.run_dir)
    assert last_state(whole.run_dir)["generation"] == last_state(split.run_dir)["generation"] == 2
    assert comparable(last_state(whole.run_dir)) == comparable(last_state(split.run_dir))
    assert whole.evaluation == split.evaluation


def test_training_starts_neutral_and_writes_weights_the_bot_reads(tmp_path):
    result = run(tmp_path, "run", "snes.generations=1")
    state = last_state(result.run_dir)
    start = np.array(state["archive"][0])
    assert start[PARAMETERS.index("stock_cards")] == 1.0 and np.count_nonzero(start) == 1
    weights = read_parameters(str(result.model_path))
    assert result.model_path.name == "model.json"
    assert weights.tolist() == state["mu"]
    assert weights[PARAMETERS.index("stock_cards")] == 1.0  # the unit stays fixed
    assert state["mu"] != state["archive"][0]  # the generation moved the mean
    assert (result.run_dir / "learning_curve.png").stat().st_size > 0


def test_the_final_evaluation_plays_every_curve_table_in_every_seat(tmp_path):
    result = run(tmp_path, "run", "snes.generations=1", "snes.final_deals=3")
    saved = json.loads((result.run_dir / "evaluation.json").read_text())
    assert set(saved["results"]) == {"planner", "greedy"}
    for stats in saved["results"].values():
        assert stats["games"] == 3 * 2
        assert stats["wins"] + stats["draws"] + stats["losses"] == stats["games"]
        (other, share), = stats["others"].items()
        assert stats["wins"] / 6 + share + stats["draws"] / 6 == pytest.approx(1.0)
    assert [point["generation"] for point in saved["history"]] == [0, 1]


def test_a_run_can_start_from_a_weights_file(tmp_path):
    result = run(tmp_path, "run", "snes.generations=1", f"snes.start={WEIGHTS_FILE}")
    assert last_state(result.run_dir)["archive"][0] == read_parameters(WEIGHTS_FILE).tolist()


def test_the_best_ranked_candidate_gets_the_largest_utility_and_they_sum_to_zero():
    u = training.utilities(16)
    assert u[0] == u.max() and np.all(np.diff(u) <= 0)
    assert u.sum() == pytest.approx(0.0)


def test_candidates_searching_more_than_the_limit_are_refused_and_leave_the_distribution_alone(tmp_path,
                                                                                             monkeypatch):
    monkeypatch.setattr(training, "MAX_POSITIONS", 0.0)
    result = run(tmp_path, "run", "snes.generations=1")
    state = last_state(result.run_dir)
    assert state["log"][-1]["refused"] == 4
    assert state["mu"] == state["archive"][0]


def test_a_run_whose_budget_is_spent_is_refused_with_the_key_to_raise(tmp_path):
    result = run(tmp_path, "run", "snes.generations=1")
    with pytest.raises(ConfigError, match="already trained 1 generations .* give more, e.g. skipbo train --resume"):
        run(tmp_path, "run", resume=result.run_dir)


def test_rotations_seat_role_zero_in_every_seat_and_the_others_after_it_in_turn_order():
    from skipbo_env.rules import Rules

    arena = training.Arena(Rules(num_players=3, stock_size=3), batch=8)
    try:
        roles = [bots.kernel_bot_code("greedy"), bots.kernel_bot_code("random"), bots.kernel_bot_code("planner")]
        seeds = np.arange(5, dtype=np.int64) + 11
        table = np.zeros((1, len(PARAMETERS)))
        by_role, _ = arena.rotations(roles, seeds, table)
        for shift in range(3):
            codes = np.empty((5, 3), dtype=np.int64)
            for role, code in enumerate(roles):
                codes[:, (shift + role) % 3] = code
            winners, _ = arena.play(codes, seeds, table)
            assert np.array_equal(by_role[shift], winners[:, [(shift + role) % 3 for role in range(3)]])
    finally:
        arena.close()


@pytest.mark.parametrize("override, message", [
    ("snes.population=3", "snes.population=3 is not allowed: use an even number (mirrored pairs)"),
    ("snes.tables=[[greedy, planner]]", "snes.tables[0]=['greedy', 'planner'] is not allowed: a table of "
                                        "rules.num_players=2 lists the 1 other seat(s)"),
    ("snes.tables=[[mybot.py:Bot]]", "snes.tables[0]: 'mybot.py:Bot' is not allowed: use a kernel bot"),
    ("snes.curve_tables=[[self]]", "snes.curve_tables[0]: 'self' is not allowed: use a kernel bot"),
    ("snes.tables=[]", "snes.tables is empty"),
    ("snes.deals=0", "snes.deals=0 is not allowed: use a number >= 1"),
    ("snes.start=/no/such.json", "snes.start: learned weights '/no/such.json' cannot be read"),
])
def test_configs_the_sNES_trainer_cannot_run_are_refused_in_one_line(override, message):
    with pytest.raises(ConfigError) as refused:
        load_config(CONFIG, [override])
    assert str(refused.value).startswith(message)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("overrides, message", [
    (["ray.address=cluster"], "ray.address='cluster' is not allowed: use local, auto or HOST:PORT (ray start --head "
                              "prints it), or null to play in this process"),
    (["ray.address=10.0.0.5:99999"], "ray.address='10.0.0.5:99999' is not allowed: use local, auto or HOST:PORT"),
    (["ray.address=:6379"], "ray.address=':6379' is not allowed"),
    (["ray.workers=2"], "ray.workers=2 sizes the Ray instance ray.address=local starts: set ray.address=local"),
    (["ray.address=auto", "ray.workers=2"], "ray.workers=2 sizes the Ray instance ray.address=local starts"),
    (["ray.address=local", "ray.workers=0"], "ray.workers=0 is not allowed: use a number >= 1"),
    (["ray.address=local", "backend=sb3"], "ray.address is read by backend: snes, backend: neural and backend: td, not "
                                            "backend: sb3"),
    (["ray.address=local", "backend=rllib", "ppo.batch_size=64"], "ray.address is read by backend: snes, backend: neural "
                                                                  "and backend: td, not backend: rllib; backend: "
                                                                  "rllib has rllib.address"),
    (["ray.adress=local"], "unknown key ray.adress: allowed keys in ray are address, workers"),
])
def test_ray_settings_the_trainer_cannot_use_are_refused_in_one_line(overrides, message):
    with pytest.raises(ConfigError) as refused:
        load_config(CONFIG, overrides)
    assert str(refused.value).startswith(message)
    assert "\n" not in str(refused.value)


def test_a_ray_address_without_ray_installed_is_refused_with_the_install_command(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed: `import ray` fails
    assert main(["train", str(CONFIG), "ray.address=local", f"output_dir={tmp_path}"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "ray.address='local' needs Ray, which is not installed: pip install -e '.[rllib]'" in error
    assert not list(tmp_path.iterdir())  # refused before a run folder is made


def test_a_pool_without_an_address_calls_the_function_here_in_input_order():
    with WorkPool() as pool:
        assert not pool.on_ray and pool.describe() == "in this process"
        assert pool.map(operator.sub, [5, 1, 9, 3], shared=10) == [5, 9, 1, 7]
        assert pool.last_nodes == []
        with pytest.raises(ZeroDivisionError):
            pool.map(operator.truediv, [1, 0], shared=1)


def test_a_candidates_games_as_a_work_item_score_it_as_the_arena_does():
    from skipbo_env.rules import Rules

    rules = Rules(num_players=2, stock_size=4)
    table = np.zeros((2, len(PARAMETERS)))
    table[:, PARAMETERS.index("stock_cards")] = 1.0
    roles = [[TABLE_CODES, bots.kernel_bot_code("greedy")], [TABLE_CODES, TABLE_CODES + 1]]
    seeds = np.arange(10, dtype=np.int64) + 3
    arena = training.Arena(rules, batch=32)
    try:
        expected = arena.fitness(roles, seeds, table, max_positions=float("inf"))
    finally:
        arena.close()
    rates, games = training.play_candidate((rules.to_dict(), table, float("inf"), 1), (roles, seeds))
    assert rates == expected and games == len(roles) * len(seeds) * 2
    assert training.play_candidate((rules.to_dict(), table, 0.0, 1), (roles, seeds))[0] is None  # refused: it searched


def test_an_sNES_run_needs_a_time_or_generation_budget():
    with pytest.raises(ConfigError, match="backend: snes needs budget.max_minutes or snes.generations"):
        load_config(CONFIG, ["budget.max_minutes=null", "snes.generations=null"])



def test_a_run_with_only_a_time_budget_stops_at_the_most_generations_allowed(tmp_path, monkeypatch):
    """Each generation grows ``state.json`` (the archive of means): with only ``budget.max_minutes`` a run stops at
    the most generations the schema allows, and its resume is refused in one line."""
    import dataclasses

    from training.snes import config as snes_config

    monkeypatch.setattr(snes_config, "GENERATIONS", dataclasses.replace(snes_config.GENERATIONS, max=2))
    result = run(tmp_path, "run", "snes.generations=null", "budget.max_minutes=600")
    assert last_state(result.run_dir)["generation"] == 2 and len(last_state(result.run_dir)["archive"]) == 3
    with pytest.raises(ConfigError, match="already trained 2 generations, the most a run may"):
        run(tmp_path, "run", resume=result.run_dir)
