"""Every script in examples/ runs to its end on a tiny budget (the flags its docstring names)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TINY = {
    "sb3_maskable_ppo.py": ["--timesteps", "64", "--envs", "2", "--stock-size", "4"],
    "cleanrl_masked_ppo.py": ["--total-timesteps", "256", "--num-envs", "16", "--num-steps", "16", "--hidden", "32",
                              "--stock-size", "3"],
    "own_policy_tournament.py": ["--games", "6"],
    "tianshou_dqn.py": ["--steps", "256", "--envs", "2", "--stock-size", "3", "--hidden", "32", "--test-hands", "3"],
}


def run_example(name: str, *extra: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / name), *TINY[name], *extra], capture_output=True,
                          text=True, timeout=600, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_every_example_has_a_tiny_budget_here():
    assert sorted(path.name for path in (ROOT / "examples").glob("*.py")) == sorted(TINY)


def test_the_sb3_example_trains_and_plays_masked_hands():
    assert "after 64 timesteps: won " in run_example("sb3_maskable_ppo.py")


def test_the_cleanrl_example_saves_a_model_that_load_policy_plays(tmp_path):
    from agents import load_policy
    from skipbo_env import Game, Rules, observe

    out = run_example("cleanrl_masked_ppo.py", "--save", str(tmp_path / "clean.zip"))
    assert "update 1/1: 256 steps" in out
    policy = load_policy(str(tmp_path / "clean.zip"))
    game = Game.new(Rules(stock_size=3), seed=0)
    while not game.is_over:
        game.step(policy.act(observe(game, game.current_seat)))


def test_the_tournament_example_reports_the_users_policy():
    out = run_example("own_policy_tournament.py")
    assert "stock-first" in out and "win rate" in out


@pytest.mark.parametrize("table", ["pettingzoo", "gymnasium"])
def test_the_tianshou_example_trains_a_masked_dqn_against_a_bot(table):
    pytest.importorskip("tianshou")
    out = run_example("tianshou_dqn.py", "--table", table)
    line = next(line for line in out.splitlines() if line.startswith("after 256 steps"))
    update_steps = int(line.split("(")[1].split()[0])
    assert update_steps > 0 and f"on the {table} table: won " in line and " of 3 hands against random" in line


@pytest.mark.parametrize("name", sorted(TINY))
def test_each_example_says_how_to_run_it(name):
    assert f"python examples/{name}" in (ROOT / "examples" / name).read_text()
