"""Every value a resumed run reads back is checked: one damaged field per case, for the sNES, SB3 PPO and RLlib
checkpoints, each refused by ``skipbo train --resume`` with one line naming the file and the field (exit 2).
(The RLlib cases here check its state file without Ray; tests/rllib resumes a damaged real RLlib run.)"""

from __future__ import annotations

import copy
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from skipbo_cli.main import main
from training.checkpoint import CheckpointError, RunFolder, read_checkpoint_state
from training.rllib.config import RLLIB_STATE, STATE_COUNTERS as RLLIB_STATE_COUNTERS
from training.state_checks import (COUNT, check_finite_tensors, finite_numbers, generator_state, list_of, one_of,
                                   optional, record)
from training.run import train

ROOT = Path(__file__).resolve().parents[2]
SNES_CONFIG = ROOT / "configs" / "snes_2p.yaml"
SNES_SMALL = ["rules.stock_size=5", "snes.population=4", "snes.deals=2", "snes.curve_every=1", "snes.curve_deals=2",
              "snes.final_deals=2", "seed=4", "snes.generations=1"]
NAN, INF = float("nan"), float("inf")


def setter(key, value):
    def damage(state):
        state[key] = value
    return damage


def item(key, index, value):
    def damage(state):
        state[key][index] = value
    return damage


def delete(key):
    def damage(state):
        del state[key]
    return damage


def resume_refused(run_dir: Path, damage, capsys, *overrides: str) -> str:
    """The one line ``skipbo train --resume`` prints for the run with its latest state damaged."""
    state_file = RunFolder(run_dir).latest_checkpoint() / "state.json"
    state = json.loads(state_file.read_text())
    damage(state)
    state_file.write_text(json.dumps(state))  # NaN and Infinity as JSON's readers accept them
    code = main(["train", "--resume", str(run_dir), *overrides, "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert str(state_file) in err, err
    return err


# ---------------------------------------------------------------------- sNES
@pytest.fixture(scope="module")
def snes_run(tmp_path_factory) -> Path:
    return train(SNES_CONFIG, [*SNES_SMALL, f"output_dir={tmp_path_factory.mktemp('snes')}"], progress=False,
                 out=open("/dev/null", "w")).run_dir


SNES_DAMAGES = {
    "mu NaN": (item("mu", 1, NAN), "'mu' must be a list of 19 finite numbers"),
    "mu infinite": (item("mu", 2, -INF), "'mu' must be a list of 19 finite numbers"),
    "mu huge": (item("mu", 2, 1e300), "from -1e+06 to 1e+06"),
    "mu not a list": (setter("mu", "nonsense"), "'mu' must be a list"),
    "mu too short": (setter("mu", [1.0] * 5), "'mu' must be a list of 19"),
    "mu of text": (item("mu", 3, "1"), "'mu' must be"),
    "mu of a bool": (item("mu", 3, True), "'mu' must be"),
    "mu without the unit": (item("mu", 0, 2.0), "'stock_cards' must be 1"),
    "sigma NaN": (item("sigma", 1, NAN), "'sigma' must be"),
    "sigma negative": (item("sigma", 1, -0.5), "'sigma' must be a list of 19 finite numbers from 0"),
    "sigma too long": (setter("sigma", [0.5] * 30), "'sigma' must be a list of 19"),
    "sigma of the unit": (item("sigma", 0, 0.5), "'stock_cards' must have spread 0"),
    "clock negative": (setter("wall_seconds", -3600.0), "'wall_seconds' must be a finite number of seconds >= 0"),
    "clock infinite": (setter("wall_seconds", -INF), "'wall_seconds' must be"),
    "clock NaN": (setter("wall_seconds", NAN), "'wall_seconds' must be"),
    "clock text": (setter("wall_seconds", "1 h"), "'wall_seconds' must be"),
    "generation -1": (setter("generation", -1), "'generation' must be an integer >= 0 (below 2**63), not -1"),
    "generation fractional": (setter("generation", 1.5), "'generation' must be an integer"),
    "generation a bool": (setter("generation", True), "'generation' must be an integer"),
    "generation of another folder": (setter("generation", 7), "'generation' is 7, but the checkpoint folder"),
    "games negative": (setter("games", -40), "'games' must be an integer >= 0 (below 2**63), not -40"),
    "archive empty": (setter("archive", []), "'archive' must be a list of at least 1"),
    "archive of NaN": (lambda state: state["archive"][0].__setitem__(1, NAN), "'archive' must be"),
    "archive too long": (lambda state: state["archive"].append(state["mu"]), "generation + 1 = 2 means"),
    "history not a list": (setter("history", {}), "'history' must be a list"),
    "history point without generation": (lambda state: state["history"][0].pop("generation"), "'history' must be"),
    "history win rate above 1": (lambda state: state["history"][0]["results"]["planner"].__setitem__("win_rate", 2),
                                 "'history' must be"),
    "history from the future": (lambda state: state["history"][0].__setitem__("generation", 9), "a point after"),
    "log not a list": (setter("log", "x"), "'log' must be a list"),
    "log of numbers": (setter("log", [1]), "'log' must be a list of a JSON object"),
    "evaluation text": (setter("evaluation", "done"), "'evaluation' must be null or"),
    "rng text": (setter("rng", "seed 4"), "'rng' must be a PCG64 generator state"),
    "rng of another generator": (lambda state: state["rng"].__setitem__("bit_generator", "MT19937"), "'rng' must be"),
    "rng state negative": (lambda state: state["rng"]["state"].__setitem__("state", -1), "'rng' must be"),
    "rng state text": (lambda state: state["rng"]["state"].__setitem__("inc", "x"), "'rng' must be"),
    "rng without its state": (lambda state: state["rng"].pop("state"), "'rng' must be"),
    "rng has_uint32 2": (lambda state: state["rng"].__setitem__("has_uint32", 2), "'rng' must be"),
    "sigma missing": (delete("sigma"), "'sigma' must be a list of 19 finite numbers from 0 to 1e+06, but it is missing"),
}


@pytest.mark.parametrize("case", list(SNES_DAMAGES))
def test_a_damaged_sNES_state_is_refused_naming_the_field(case, snes_run, tmp_path, capsys):
    damage, words = SNES_DAMAGES[case]
    run_dir = tmp_path / "run"
    shutil.copytree(snes_run, run_dir)
    err = resume_refused(run_dir, damage, capsys, "snes.generations=2")
    assert words in err, err
    assert not (run_dir / "checkpoints" / "step_000000002").exists()  # nothing trained on it


def test_the_undamaged_sNES_state_resumes(snes_run, tmp_path, capsys):
    run_dir = tmp_path / "run"
    shutil.copytree(snes_run, run_dir)
    assert main(["train", "--resume", str(run_dir), "snes.generations=2", "--no-progress"]) == 0


# ---------------------------------------------------------------------- SB3 PPO
SB3_TINY = {
    "name": "tiny", "rules": {"num_players": 2, "stock_size": 5}, "env": {"num_envs": 2},
    "opponents": {"mix": {"snapshots": 0.5, "greedy": 0.5}, "snapshot_every": 32, "max_snapshots": 2},
    "network": {"hidden": [8]}, "ppo": {"n_steps": 32, "batch_size": 32, "n_epochs": 1},
    "pretrain": {"enabled": False}, "budget": {"total_timesteps": 64},
    "evaluation": {"every_steps": 64, "games": 2, "opponents": ["greedy"], "final_games": 2,
                   "final_opponents": ["greedy"]},
    "checkpoint": {"every_steps": 32, "keep": 2},
}


@pytest.fixture(scope="module")
def sb3_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("sb3")
    config = folder / "tiny.yaml"
    config.write_text(yaml.safe_dump({**SB3_TINY, "output_dir": str(folder / "runs")}))
    return train(str(config), progress=False, out=open("/dev/null", "w")).run_dir


SB3_DAMAGES = {
    "timesteps negative": (setter("timesteps", -64), "'timesteps' must be an integer >= 0 (below 2**63), not -64"),
    "timesteps of another folder": (setter("timesteps", 32), "'timesteps' is 32, but the checkpoint folder"),
    "updates text": (setter("updates", "2"), "'updates' must be an integer"),
    "next checkpoint NaN": (setter("next_checkpoint", NAN), "'next_checkpoint' must be an integer"),
    "next snapshot negative": (setter("next_snapshot", -1), "'next_snapshot' must be"),
    "next evaluation missing": (delete("next_evaluation"), "'next_evaluation' must be an integer >= 0 (below 2**63), but it is"),
    "clock negative": (setter("wall_seconds", -10.0), "'wall_seconds' must be a finite number of seconds >= 0"),
    "training clock infinite": (setter("training_seconds", INF), "'training_seconds' must be"),
    "training clock negative": (setter("training_seconds", -600.0), "'training_seconds' must be"),
    "snapshot steps not a list": (setter("snapshot_steps", 0), "'snapshot_steps' must be a list"),
    "snapshot step negative": (setter("snapshot_steps", [-32]), "'snapshot_steps' must be a list of an integer"),
    "snapshot step from the future": (setter("snapshot_steps", [10**6]), "'snapshot_steps' names step 1000000"),
    "history not a list": (setter("history", None), "'history' must be a list"),
    "history win rate NaN": (lambda state: state["history"][0]["results"]["greedy"].__setitem__("win_rate", NAN),
                             "'history' must be"),
    "history interval short": (lambda state: state["history"][0]["results"]["greedy"].__setitem__("ci95", [0]),
                               "'history' must be"),
    "best score NaN": (setter("best", {"score": NAN, "timesteps": 0}), "'best' must be null or"),
    "best from the future": (setter("best", {"score": 0.5, "timesteps": 10**6}), "'best' names step"),
    "pretrain a list": (setter("pretrain", [1]), "'pretrain' must be null or a JSON object"),
    "stopped by nonsense": (setter("stopped_by", "boredom"), "'stopped_by' must be null or one of"),
}


@pytest.mark.parametrize("case", list(SB3_DAMAGES))
def test_a_damaged_SB3_state_is_refused_naming_the_field(case, sb3_run, tmp_path, capsys):
    damage, words = SB3_DAMAGES[case]
    run_dir = tmp_path / "run"
    shutil.copytree(sb3_run, run_dir)
    err = resume_refused(run_dir, damage, capsys, "budget.total_timesteps=128")
    assert words in err, err


def damage_tensors(path: Path, damage) -> None:
    tensors = torch.load(path, weights_only=True)
    damage(tensors)
    torch.save(tensors, path)


def first_float(tensors: dict) -> torch.Tensor:
    return next(value for value in tensors.values() if isinstance(value, torch.Tensor) and value.is_floating_point())


@pytest.mark.parametrize("file, damage, words", [
    ("learner.pt", lambda tensors: first_float(tensors).view(-1).__setitem__(0, NAN), "holds NaN or infinite"),
    ("optimizer.pt", lambda tensors: first_float(tensors["state"][0]).view(-1).__setitem__(0, INF),
     "holds NaN or infinite"),
    ("pool.pt", lambda tensors: [tensors.pop(key) for key in list(tensors) if key.startswith("0/")],
     "the snapshot of step 0 is missing"),
    ("pool.pt", lambda tensors: tensors.__setitem__(next(iter(tensors)), torch.zeros(3)), "does not fit"),
])
def test_a_damaged_SB3_tensor_file_is_refused_naming_the_file(file, damage, words, sb3_run, tmp_path, capsys):
    run_dir = tmp_path / "run"
    shutil.copytree(sb3_run, run_dir)
    path = RunFolder(run_dir).latest_checkpoint() / file
    damage_tensors(path, damage)
    code = main(["train", "--resume", str(run_dir), "budget.total_timesteps=128", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and str(path) in err and words in err, err


# ---------------------------------------------------------------------- RLlib (its state file, without Ray)
RLLIB_GOOD = {"timesteps": 200, "iterations": 1, "wall_seconds": 12.5, "snapshot_steps": [0], "snapshots_added": 1,
              "warm_start": None, "next_snapshot": 300, "next_evaluation": 1000, "next_checkpoint": 1000,
              "best": {"score": 0.5, "timesteps": 0},
              "history": [{"timesteps": 0, "wall_seconds": 1.0, "seconds": 0.5, "training": {},
                           "results": {"greedy": {"games": 2, "wins": 1, "draws": 0, "losses": 1, "win_rate": 0.5,
                                                  "ci95": [0.09, 0.91], "mean_points": 0.0}}}]}
RLLIB_DAMAGES = {
    "iterations negative": (setter("iterations", -1), "'iterations' must be an integer >= 0"),
    "timesteps infinite": (setter("timesteps", INF), "'timesteps' must be an integer"),
    "snapshots added text": (setter("snapshots_added", "1"), "'snapshots_added' must be an integer"),
    "warm start a number": (setter("warm_start", 3), "'warm_start' must be null or a string"),
    "clock negative": (setter("wall_seconds", -1.0), "'wall_seconds' must be a finite number"),
    "history win rate negative": (lambda s: s["history"][0]["results"]["greedy"].__setitem__("win_rate", -0.1),
                                  "'history' must be"),
    "best missing": (delete("best"), "'best' must be null or"),
}


def rllib_checkpoint(tmp_path: Path, state: dict) -> Path:
    checkpoint = tmp_path / "checkpoints" / "step_000000200"
    checkpoint.mkdir(parents=True)
    (checkpoint / "state.json").write_text(json.dumps(state))
    return checkpoint


def test_the_RLlib_state_as_the_trainer_writes_it_is_accepted(tmp_path):
    state = read_checkpoint_state(rllib_checkpoint(tmp_path, RLLIB_GOOD), RLLIB_STATE_COUNTERS, RLLIB_STATE)
    assert state == RLLIB_GOOD


@pytest.mark.parametrize("case", list(RLLIB_DAMAGES))
def test_a_damaged_RLlib_state_is_refused_naming_the_field(case, tmp_path):
    damage, words = RLLIB_DAMAGES[case]
    state = copy.deepcopy(RLLIB_GOOD)
    damage(state)
    checkpoint = rllib_checkpoint(tmp_path, state)
    with pytest.raises(CheckpointError) as refused:
        read_checkpoint_state(checkpoint, RLLIB_STATE_COUNTERS, RLLIB_STATE)
    assert str(refused.value).startswith(f"cannot resume from {checkpoint / 'state.json'}: ")
    assert words in str(refused.value) and "\n" not in str(refused.value)


# ---------------------------------------------------------------------- the helpers themselves
def test_the_fields_accept_what_they_describe_and_nothing_else():
    assert COUNT.accepts(0) and not COUNT.accepts(-1) and not COUNT.accepts(True) and not COUNT.accepts(1.0)
    weights = finite_numbers(2, 0, 1)
    assert weights.accepts([0, 1.0]) and not weights.accepts([0.5]) and not weights.accepts([0.5, math.nan])
    assert not weights.accepts([0.5, 2]) and not weights.accepts((0.5, 0.5))
    assert list_of(COUNT, 1).accepts([3]) and not list_of(COUNT, 1).accepts([])
    assert optional(record({"a": COUNT})).accepts(None) and not optional(record({"a": COUNT})).accepts({"a": -1})
    assert one_of("x", 1).accepts(1) and not one_of("x", 1).accepts(True)
    state = np.random.default_rng(3).bit_generator.state
    assert generator_state().accepts(state)
    assert not generator_state().accepts({**state, "uinteger": -1})


def test_a_non_finite_tensor_anywhere_in_a_nested_state_is_named():
    check_finite_tensors({"a": [torch.ones(2), {"step": torch.tensor(3)}]}, "x.pt")
    with pytest.raises(CheckpointError, match="tensor 'a/1/w' holds NaN"):
        check_finite_tensors({"a": [torch.ones(2), {"w": torch.tensor([1.0, NAN])}]}, "x.pt")
