"""``env.vec_env: vector``: self-play training on the batched engine, opponents drawn from the pool per hand."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from agents.network import parameter_shapes
from skipbo_env import Rules
from skipbo_env.encoding import OBS_SIZE
from skipbo_cli.main import main
from training.config import ConfigError, config_from_dict
from training.sb3.selfplay import OpponentPool
from training.sb3.selfplay_vector import VectorSelfPlayEnv

TINY_VECTOR = {
    "name": "tiny",
    "rules": {"num_players": 2, "stock_size": 5},
    "env": {"num_envs": 8, "vec_env": "vector"},
    "opponents": {"mix": {"snapshots": 0.5, "greedy": 0.3, "random": 0.2}, "snapshot_every": 64,
                  "max_snapshots": 2},
    "network": {"hidden": [16]},
    "ppo": {"n_steps": 16, "batch_size": 32, "n_epochs": 1},
    "budget": {"total_timesteps": 384},
    "evaluation": {"every_steps": 10_000, "games": 2, "opponents": ["greedy"], "final_games": 2,
                   "final_opponents": ["greedy"]},
    "checkpoint": {"every_steps": 128, "keep": 2},
}


def snapshot(seed):
    rng = np.random.default_rng(seed)
    return {name: rng.normal(size=shape).astype(np.float32) for name, shape in parameter_shapes(OBS_SIZE, [8]).items()}


def play(env, steps, seed=0):
    """Random legal learner moves (the games already dealt); the infos of every finished hand."""
    rng = np.random.default_rng(seed)
    finished = []
    for _ in range(steps):
        masks = env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])
        _, _, dones, infos = env.step(actions)
        finished += [info for done, info in zip(dones, infos) if done]
    return finished


def test_a_short_vector_run_trains_on_the_batched_engine_grows_the_pool_and_resumes(tmp_path, monkeypatch, capsys):
    steps = []
    step_wait = VectorSelfPlayEnv.step_wait
    monkeypatch.setattr(VectorSelfPlayEnv, "step_wait", lambda self: steps.append(1) or step_wait(self))
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump({**TINY_VECTOR, "output_dir": str(tmp_path / "runs")}))
    assert main(["train", str(path), "--no-progress"]) == 0
    assert len(steps) * 8 >= 384                      # every learner step went through the batched engine
    [folder] = sorted((tmp_path / "runs").glob("tiny-*"))
    evaluation = json.loads((folder / "evaluation.json").read_text())
    assert evaluation["timesteps"] >= 384 and set(evaluation["results"]) == {"greedy"}
    assert (folder / "model.zip").is_file()
    state = json.loads((folder / "checkpoints" / "latest.json").read_text())
    step_state = json.loads((folder / "checkpoints" / f"step_{state['step']:09d}" / "state.json").read_text())
    assert len(step_state["snapshot_steps"]) == 2 and step_state["snapshot_steps"][-1] > 0
    assert main(["train", "--resume", str(folder), "budget.total_timesteps=640", "--no-progress"]) == 0
    assert f"resumed from step_{state['step']:09d}" in capsys.readouterr().out
    assert json.loads((folder / "evaluation.json").read_text())["timesteps"] >= 640


def test_each_hand_draws_its_opponents_from_the_mix():
    pool = OpponentPool({"snapshots": 1.0, "greedy": 1.0, "random": 1.0}, max_snapshots=2, network=([8], "relu"))
    env = VectorSelfPlayEnv(Rules(num_players=3, stock_size=5), 16, pool, seed=3)
    env.add_snapshot(snapshot(0), 0)
    env.reset()
    finished = play(env, 300)
    kinds = {part for info in finished for part in info["selfplay_opponents"].split("+")}
    assert kinds == {"snapshots", "greedy", "random"}
    assert all(len(info["selfplay_opponents"].split("+")) == 2 for info in finished)
    assert {info["selfplay_result"] for info in finished} <= {-1.0, 0.0, 1.0}
    assert all(info["selfplay_result"] == info["episode"]["r"] for info in finished)


def test_dropped_snapshots_free_their_seats_for_new_ones():
    pool = OpponentPool({"snapshots": 1.0}, max_snapshots=2, network=([8], "relu"))
    env = VectorSelfPlayEnv(Rules(stock_size=5), 8, pool, seed=1)
    env.add_snapshot(snapshot(0), 0)
    env.reset()
    for step in range(1, 9):
        env.add_snapshot(snapshot(step), step)
        play(env, 150, seed=step)
    assert set(env._snapshot_index) >= {7, 8}
    assert len(env.seating.policies) == 3    # max_snapshots + one draining slot, not one per snapshot taken


def test_a_snapshot_only_pool_without_a_snapshot_is_refused_when_play_starts():
    pool = OpponentPool({"snapshots": 1.0}, max_snapshots=2, network=([8], "relu"))
    env = VectorSelfPlayEnv(Rules(stock_size=5), 4, pool, seed=0)
    with pytest.raises(ValueError, match="snapshots only"):
        env.reset()


def test_vec_env_names_the_allowed_values():
    with pytest.raises(ConfigError, match=r"env.vec_env='batched'.*'dummy', 'subproc', 'vector'"):
        config_from_dict({"env": {"vec_env": "batched"}})
