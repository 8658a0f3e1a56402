"""Checkpoints survive a kill at every step of saving one, a missing ``latest.json`` falls back to the newest
complete checkpoint, and a resumed sNES run (in a new process, the kernels read from numba's cache) ends with
the same weights as an uninterrupted one."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from training.checkpoint import CheckpointError, RunFolder
from training.run import train

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "snes_2p.yaml"
SMALL = ["rules.stock_size=5", "snes.population=4", "snes.deals=2", "snes.curve_every=1", "snes.curve_deals=2",
         "snes.final_deals=2", "seed=4"]
KILLED = 17
KILL_AT_STEP = """
import os, sys
import training.checkpoint as checkpoint
from training.run import train

STEPS = {"os": ("chmod", "rename"), "shutil": ("copy2", "rmtree"), "tempfile": ("mkdtemp",)}
FUNCTIONS = ("write_bytes_atomically", "write_json_atomically", "fsync_directory")
kill_at, count = int(sys.argv[2]), [0]

def step(function):
    def counted(*args, **kwargs):
        count[0] += 1
        if count[0] == kill_at:
            os._exit(%d)  # as a kill: no cleanup, no flush
        return function(*args, **kwargs)
    return counted

class Module:
    def __init__(self, module, names):
        self.module, self.names = module, names
    def __getattr__(self, name):
        value = getattr(self.module, name)
        return step(value) if name in self.names else value

for module, names in STEPS.items():
    setattr(checkpoint, module, Module(getattr(checkpoint, module), names))
for name in FUNCTIONS:
    setattr(checkpoint, name, step(getattr(checkpoint, name)))
train(None, ["snes.generations=2"], resume=sys.argv[1], progress=False, out=open(os.devnull, "w"))
print(count[0])
""" % KILLED
"""A resume of the run folder argv[1] to 2 generations, killed (``os._exit``) just before the argv[2]-th step
of saving its checkpoints: every file-system call ``save_checkpoint`` makes itself. It prints the number of
steps when it is not killed."""


def run(output: Path, *overrides: str, resume: Path | None = None):
    out = io.StringIO()
    if resume is not None:
        return train(None, list(overrides), resume=resume, progress=False, out=out), out.getvalue()
    return train(CONFIG, [*SMALL, f"output_dir={output}", *overrides], progress=False, out=out), out.getvalue()


def weights(run_dir: Path) -> dict:
    return json.loads((run_dir / "model.json").read_text())["parameters"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """An uninterrupted run of 2 generations and a run of 1 generation to resume, with the real limit on a
    candidate's search (some of these candidates come within a factor 2 of it)."""
    folder = tmp_path_factory.mktemp("runs")
    whole, _ = run(folder / "whole", "snes.generations=2")
    first, _ = run(folder / "first", "snes.generations=1")
    return whole.run_dir, first.run_dir


def test_a_kill_at_any_step_of_saving_a_checkpoint_leaves_a_run_that_resumes_to_the_same_weights(runs, tmp_path):
    whole, first = runs
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    steps, kill_at = None, 1
    while steps is None or kill_at <= steps:
        copy = tmp_path / f"killed-at-{kill_at}"
        shutil.copytree(first, copy)
        done = subprocess.run([sys.executable, "-c", KILL_AT_STEP, str(copy), str(kill_at)], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=300)
        if done.returncode == 0:  # past the last step: count them, and the kills so far covered each
            steps = int(done.stdout.split()[-1])
            assert kill_at == steps + 1 and steps >= 16, f"{steps} steps in two checkpoints"
            break
        assert done.returncode == KILLED, done.stderr
        latest = json.loads((copy / "checkpoints" / "latest.json").read_text())["checkpoint"]
        assert (copy / "checkpoints" / latest / "state.json").is_file(), f"killed at step {kill_at}"
        result, _ = run(tmp_path, "snes.generations=2", resume=copy)
        assert weights(result.run_dir) == weights(whole), f"killed at step {kill_at}"
        assert result.evaluation == json.loads((whole / "evaluation.json").read_text())["results"]
        kill_at += 1


SLOW_FIRST_CALL = """
import sys, time
import training.snes.trainer as learned

kernel, loaded = learned.play_table, []

def play_table(*args):
    if not loaded:  # the first call in a process: numba reads the kernel from its cache, or compiles it
        loaded.append(True)
        end = time.thread_time() + 1.0
        while time.thread_time() < end:
            pass
    return kernel(*args)

learned.play_table = play_table
from skipbo_cli.main import main
sys.exit(main(sys.argv[1:]))
"""
"""``skipbo train`` in a new process whose first call of the play kernel costs a CPU-second, as loading it
can on a slow or busy machine (4e-3 s an action over the first candidate's hands, were the limit on a
candidate a time)."""


def test_a_resume_in_a_new_process_ends_with_the_weights_of_an_uninterrupted_run(runs, tmp_path):
    """A candidate is refused by the positions its search values, not by time: none is refused for the time
    numba takes to read its cache, and the run ends as the uninterrupted one did."""
    whole, first = runs
    copy = tmp_path / "resumed"
    shutil.copytree(first, copy)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", SLOW_FIRST_CALL, "train", "--resume", str(copy),
                           "snes.generations=2", "--no-progress"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert weights(copy) == weights(whole)
    resumed_state = json.loads((RunFolder(copy).latest_checkpoint() / "state.json").read_text())
    assert [entry["refused"] for entry in resumed_state["log"]] == [0, 0]


def test_without_latest_json_a_resume_falls_back_to_the_newest_complete_checkpoint_and_says_so(runs, tmp_path):
    whole, first = runs
    copy = tmp_path / "no-pointer"
    shutil.copytree(first, copy)
    checkpoints = copy / "checkpoints"
    (checkpoints / "latest.json").unlink()
    (checkpoints / ".step_000000002.half-written").mkdir()  # a staging folder a kill left: never a checkpoint
    newest = max(path.name for path in checkpoints.glob("step_*"))
    result, log = run(tmp_path, "snes.generations=2", resume=copy)
    assert f"latest.json is missing: resuming from the newest complete checkpoint, {newest}" in log
    assert "already trained 1 generations" not in log and weights(result.run_dir) == weights(whole)


def test_a_run_folder_without_any_checkpoint_is_refused_not_restarted(runs, tmp_path):
    _, first = runs
    copy = tmp_path / "none"
    shutil.copytree(first, copy)
    shutil.rmtree(copy / "checkpoints")
    with pytest.raises(CheckpointError, match="it has no checkpoint .* start the run again: skipbo train"):
        run(tmp_path, "snes.generations=2", resume=copy)
    assert not (copy / "checkpoints").exists()


def test_a_second_checkpoint_of_the_same_step_never_replaces_the_first_in_place(tmp_path):
    folder = RunFolder.create(tmp_path, "run", "name: run\n", {})
    first = folder.save_checkpoint(3, {"a.txt": b"first"}, {"n": 1}, keep=2)
    second = folder.save_checkpoint(3, {"a.txt": b"second"}, {"n": 2}, keep=2)
    assert (first.name, second.name) == ("step_000000003", "step_000000003-2")
    assert folder.latest_checkpoint() == second and (first / "a.txt").read_bytes() == b"first"
    third = folder.save_checkpoint(4, {"a.txt": b"third"}, {"n": 3}, keep=2)
    assert [path.name for path in folder.checkpoints()] == [second.name, third.name]  # the oldest pruned


def test_the_checkpoints_sort_by_step_not_by_name(tmp_path):
    folder = RunFolder.create(tmp_path, "run", "name: run\n", {})
    for step in (999_999_999, 1_000_000_000):
        folder.save_checkpoint(step, {}, {}, keep=5)
    assert folder.checkpoints()[-1].name == "step_1000000000"



def test_a_checkpoints_state_is_written_compactly_and_reads_back_the_same(tmp_path):
    from training.state_checks import read_json_object

    folder = RunFolder.create(tmp_path, "run", "name: run\n", {})
    state = {"timesteps": 3, "archive": [{"first": [[1, -2], [3, 4]]}], "wall_seconds": 1.5}
    saved = folder.save_checkpoint(3, {}, state, keep=1)
    text = (saved / "state.json").read_text()
    assert text == '{"archive":[{"first":[[1,-2],[3,4]]}],"timesteps":3,"wall_seconds":1.5}'
    assert read_json_object(saved / "state.json") == state
