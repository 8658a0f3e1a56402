"""Every script of ``benchmarks/`` and ``experiments/`` runs at a tiny size, and answers a bad flag with one line and
exit 2. The scripts are found by listing the folders, so a new or renamed script without a tiny run fails here."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEACHER_RUN = ROOT / "long_runs" / "td-teacher-2p-bound05-20261206-055800"
"""A teacher-start run kept in the repository (``long_runs/README.md``), with drawn moves and a bound."""
TINY_TD_RUN = "{tiny td run}"
"""Stands for the folder of a tiny ``td_scratch_2p`` run without ``td.turn_baseline``, trained in the test's
``tmp_path`` (:func:`tiny_td_run`): ``experiments/td_step_noise.py`` plays a plain value network."""
TINY_TD_OVERRIDES = ["threads=1", "td.turn_baseline=false", "td.hidden=[8,4]", "rules.stock_size=3",
                     "td.stock_sizes=[2,3]", "td.hands=4", "td.minibatch=32", "td.snapshot_every=4",
                     "td.budget_hands=8", "td.checkpoint_every=4", "td.curve_every=8", "td.curve_games=2",
                     "td.curve_opponents=[greedy]", "td.final_games=2"]


def latest_checkpoint(run: Path) -> str:
    """The checkpoint a kept run's ``latest.json`` names, relative to the repository: each long run keeps only its
    latest checkpoint, which its next commit replaces (``checkpoint.keep: 1``)."""
    name = json.loads((run / "checkpoints" / "latest.json").read_text())["checkpoint"]
    return (run / "checkpoints" / name).relative_to(ROOT).as_posix()


SCRIPTS = sorted(p for folder in ("benchmarks", "experiments") for p in (ROOT / folder).glob("*.py"))
TINY = {
    "benchmarks/compile_time.py": ["--tables", "2:1", "--engine-only"],
    "benchmarks/engine_speed.py": ["--seconds", "0.01", "--players", "2", "--json"],
    "benchmarks/env_speed.py": ["--games", "1", "--repeat", "1", "--players", "2", "--without-uno", "--json"],
    "benchmarks/neural_speed.py": ["--tiny"],
    "benchmarks/planner_speed.py": ["--seconds", "0.01", "--batch", "4"],
    "benchmarks/rllib_speed.py": ["--runners", "1", "--steps", "20", "--hidden", "8"],
    "benchmarks/td_speed.py": ["--tiny"],
    "benchmarks/tournament_speed.py": ["--games", "2", "--agents", "greedy", "random"],
    "benchmarks/training_speed.py": ["--seconds", "0.01", "--paths", "vector", "--mixes", "greedy",
                                     "--networks", "quickstart", "--n-steps", "4", "--json"],
    "benchmarks/vector_speed.py": ["--seconds", "0.01", "--players", "2", "--json"],
    "experiments/decision_signal.py": ["--decisions", "1", "--samples", "2", "--share", "1"],
    "experiments/td_correction.py": [latest_checkpoint(TEACHER_RUN), "--spread-hands", "1", "--hands", "1",
                                     "--drawn-hands", "2"],
    "experiments/td_step_noise.py": [TINY_TD_RUN, "--learning-rates", "1e-3", "--iterations", "1", "--games", "2",
                                     "--every", "1"],
}
"""A run of each script at a tiny size: a few seconds once the kernels are compiled."""
BAD_VALUE = {"benchmarks/compile_time.py": ["--tables", "7:1"], "benchmarks/rllib_speed.py": ["--steps", "0"],
             "benchmarks/training_speed.py": ["--seconds", "nan"], "benchmarks/tournament_speed.py": ["--players", "9"]}
"""A flag value each script must refuse before any work (the others: a negative seed)."""
NEEDS = {"benchmarks/rllib_speed.py": "ray", "benchmarks/training_speed.py": "sb3_contrib"}
"""A package a script needs that an environment may lack (ray is in the RLlib environment only)."""


def name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def run_script(path: Path, args: list[str], timeout: float) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(path), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def tiny_td_run(folder: Path) -> str:
    """Train a tiny ``skipbo train td_scratch_2p`` run under ``folder`` (a few seconds); its run folder."""
    from training.run import train

    return str(train("td_scratch_2p", [f"output_dir={folder}", *TINY_TD_OVERRIDES], progress=False,
                     out=io.StringIO()).run_dir)


def test_every_script_has_a_tiny_run():
    assert [name(p) for p in SCRIPTS] == sorted(TINY), "give each script of benchmarks/ and experiments/ a tiny run"


@pytest.mark.parametrize("path", SCRIPTS, ids=name)
def test_a_script_runs_at_a_tiny_size(path, tmp_path):
    needed = NEEDS.get(name(path))
    if needed and importlib.util.find_spec(needed) is None:
        pytest.skip(f"{needed} is not installed here")
    args = TINY[name(path)]
    if TINY_TD_RUN in args:
        run = tiny_td_run(tmp_path)
        args = [run if arg == TINY_TD_RUN else arg for arg in args]
    done = run_script(path, args, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr


def test_a_script_without_a_package_it_needs_says_so_in_one_line():
    path = ROOT / "benchmarks" / "rllib_speed.py"
    if importlib.util.find_spec("ray") is not None:
        pytest.skip("ray is installed here")
    done = run_script(path, TINY[name(path)], timeout=120)
    assert done.returncode == 2 and "Ray is not installed here" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("path", SCRIPTS, ids=name)
@pytest.mark.parametrize("bad", ["flag", "value"])
def test_a_script_answers_a_bad_flag_with_one_line_and_exit_2(path, bad):
    args = ["--no-such-flag"] if bad == "flag" else BAD_VALUE.get(name(path), ["--seed", "-1"])
    done = run_script(path, args, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "error:" in done.stderr, done.stderr
