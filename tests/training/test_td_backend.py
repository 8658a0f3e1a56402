"""``backend: td``: a run trains, writes its curve and a model ``agents.load_policy`` plays, and a run stopped halfway
and resumed through ``training.run.train(resume=...)`` ends with the weights of one never stopped; a broken state
file is one line naming the file and the field."""

from __future__ import annotations

import io
import json
import shutil

import numpy as np
import pytest

from agents.loading import load_policy
from skipbo_cli.main import main
from training.checkpoint import RunFolder
from training.config import load_config
from training.run import train
from training.schema import ConfigError
from training.state_checks import CheckpointError
from training.td.state import LEARNER_FILE

TINY = """
name: tiny-td
seed: 3
backend: td
rules: {num_players: 2, stock_size: 3}
checkpoint: {keep: 2}
td:
  hidden: [8, 4]
  hands: 4
  explore: 0.1
  minibatch: 32
  opponents: {self: 0.25, snapshots: 0.5, greedy: 0.25}
  snapshot_every: 4
  max_snapshots: 2
  stock_sizes: [2, 3]
  budget_hands: 16
  checkpoint_every: 4
  curve_every: 8
  curve_games: 2
  curve_opponents: [greedy]
  final_games: 2
"""


def tiny_config(tmp_path, name: str = "tiny.yaml") -> str:
    path = tmp_path / name
    path.write_text(TINY.replace("name: tiny-td", f"name: tiny-td\noutput_dir: {tmp_path / 'runs'}"))
    return str(path)


def learner_arrays(run_dir) -> dict:
    checkpoint = RunFolder(run_dir).latest_checkpoint()
    with np.load(checkpoint / LEARNER_FILE) as data:
        return {name: data[name] for name in data.files}


def test_a_run_resumed_halfway_ends_with_the_weights_of_an_uninterrupted_one(tmp_path):
    straight = train(tiny_config(tmp_path), progress=False, out=io.StringIO())
    half = train(tiny_config(tmp_path), ["td.budget_hands=8"], progress=False, out=io.StringIO())
    assert half.timesteps == 8
    assert json.loads((RunFolder(half.run_dir).latest_checkpoint() / "state.json").read_text())["snapshot_hands"] == [4, 8]
    elsewhere = tmp_path / "clone" / "long_runs" / half.run_dir.name  # as a fresh clone has it, on another path
    shutil.copytree(half.run_dir, elsewhere)
    shutil.rmtree(half.run_dir)
    resumed = train(None, ["td.budget_hands=16"], resume=elsewhere, progress=False, out=io.StringIO())
    assert resumed.timesteps == straight.timesteps == 16
    a, b = learner_arrays(straight.run_dir), learner_arrays(resumed.run_dir)
    assert set(a) == set(b) and all((a[name] == b[name]).all() for name in a)
    assert {name.split(".")[1] for name in a if name.startswith("snapshot.")} == {"0", "1"}
    assert json.loads((RunFolder(resumed.run_dir).latest_checkpoint() / "state.json").read_text())["snapshot_hands"] == [12, 16]
    assert json.loads((resumed.run_dir / "model.json").read_text())["hands"] == 16
    for name in ("learning_curve.json", "learning_curve.png", "evaluation.json", "model.json", "best_model.json"):
        assert (resumed.run_dir / name).is_file(), name
    curve = json.loads((resumed.run_dir / "learning_curve.json").read_text())
    hands = [point["timesteps"] for point in curve["history"]]
    assert hands == [0, 8, 16] and all(point["cpu_hours"] >= 0 for point in curve["history"])
    stats = curve["history"][-1]["results"]["greedy"]
    assert stats["games"] == 2 and 0 <= stats["ci95"][0] <= stats["win_rate"] <= stats["ci95"][1] <= 1
    assert sum(path.stat().st_size for path in RunFolder(resumed.run_dir).latest_checkpoint().iterdir()) < 200_000
    policy = load_policy(f"neural:model={resumed.run_dir / 'model.json'}")
    assert policy is not None
    assert json.loads((resumed.run_dir / "evaluation.json").read_text())["hands"] == 16
    with pytest.raises(ConfigError, match="already trained 16 of td.budget_hands=16"):
        train(None, resume=straight.run_dir, progress=False, out=io.StringIO())


def test_a_broken_state_file_is_one_line_naming_the_file_and_the_field(tmp_path, capsys):
    run = train(tiny_config(tmp_path), ["td.budget_hands=4", "td.curve_every=100"], progress=False,
                out=io.StringIO())
    checkpoint = RunFolder(run.run_dir).latest_checkpoint()
    state_path = checkpoint / "state.json"
    state = json.loads(state_path.read_text())
    state["hands_played"] = -1
    state_path.write_text(json.dumps(state))
    with pytest.raises(CheckpointError, match=r"state\.json: 'hands_played' must be an integer >= 0 \(below 2\*\*63\), not -1"):
        train(None, ["td.budget_hands=8"], resume=run.run_dir, progress=False, out=io.StringIO())
    state["hands_played"] = 8
    state_path.write_text(json.dumps(state))
    with pytest.raises(CheckpointError, match="'hands_played' is 8, but the checkpoint folder step_000000004"):
        train(None, ["td.budget_hands=8"], resume=run.run_dir, progress=False, out=io.StringIO())
    del state["history"][0]["cpu_hours"]
    state["hands_played"] = 4
    state_path.write_text(json.dumps(state))
    with pytest.raises(CheckpointError, match="'history' must be a list of an object"):
        train(None, ["td.budget_hands=8"], resume=run.run_dir, progress=False, out=io.StringIO())
    state["history"][0]["cpu_hours"] = 0.0
    assert state["snapshot_hands"] == [4]
    state["snapshot_hands"] = [1, 2, 3]
    state_path.write_text(json.dumps(state))
    with pytest.raises(CheckpointError, match="'snapshot_hands' must be a list of 0 to 2 of an integer"):
        train(None, ["td.budget_hands=8"], resume=run.run_dir, progress=False, out=io.StringIO())
    state["snapshot_hands"] = [8]
    state_path.write_text(json.dumps(state))
    with pytest.raises(CheckpointError, match=r"'snapshot_hands' must be increasing hands no later than 'hands_played' \(4\)"):
        train(None, ["td.budget_hands=8"], resume=run.run_dir, progress=False, out=io.StringIO())
    state["snapshot_hands"] = [4]
    state_path.write_text(json.dumps(state))
    arrays = learner_arrays(run.run_dir)
    arrays["net.output.weight"] = arrays["net.output.weight"] * np.nan
    np.savez(checkpoint / LEARNER_FILE, **arrays)
    assert main(["train", "--no-progress", "--resume", str(run.run_dir), "td.budget_hands=8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "learner.npz" in err and "'net.output.weight' holds NaN" in err
    arrays["net.output.weight"] = np.zeros_like(arrays["net.output.weight"])
    arrays["snapshot.0.first.weight"] = arrays["snapshot.0.first.weight"][:, :-1]
    np.savez(checkpoint / LEARNER_FILE, **arrays)
    with pytest.raises(CheckpointError, match=r"'snapshot.0.first.weight' must be float32 \[8, 330\], not float32 \[8, 329\]"):
        train(None, ["td.budget_hands=8"], resume=run.run_dir, progress=False, out=io.StringIO())
    arrays["snapshot.0.first.weight"] = arrays["net.first.weight"]
    arrays["torch_generator"] = np.zeros_like(arrays["torch_generator"])
    np.savez(checkpoint / LEARNER_FILE, **arrays)
    with pytest.raises(CheckpointError, match="'torch_generator' is not a state of torch's generator"):
        train(None, ["td.budget_hands=8"], resume=run.run_dir, progress=False, out=io.StringIO())
    (checkpoint / LEARNER_FILE).write_bytes(b"not a zip")
    with pytest.raises(CheckpointError, match="learner.npz is not a readable arrays file"):
        train(None, ["td.budget_hands=8"], resume=run.run_dir, progress=False, out=io.StringIO())


@pytest.mark.parametrize("override, message", [
    ("td.opponents={self: 0.5}", "add up to 1"),
    ("td.opponents={self: 1.0, greedy: .nan}", "every share must be a finite number >= 0"),
    ("td.opponents={self: .inf}", "every share must be a finite number >= 0"),
    ("td.opponents={self: 0.5, nobody: 0.5}", "'nobody' is not allowed"),
    ("td.max_snapshots=0", "td.max_snapshots"),
    ("td.snapshot_every=0", "td.snapshot_every"),
    ("td.curve_opponents=[neural-2p]", "kernel bots"),
    ("td.hidden=[8]", "two layer widths"),
    ("td.lam=1.5", "<= 1.0"),
    ("td.start=imitation", "'scratch'"),
    ("td.stock_sizes=[0]", r"td.stock_sizes\[0\]=0 is not allowed"),
    ("td.stock_sizes=[51]", "use a number <= 50"),
    ("td.drawn_lam=0.8", "td.drawn_lam=0.8 is not allowed without td.rank_share"),
    ("td.drawn_lam=-0.1", ">= 0.0"),
    ("td.correction_bound=1", "td.correction_bound=1.0 is not allowed with td.start=scratch"),
    ("td.correction_bound=-1", ">= 0.0"),
    ("td.chunk=-1", ">= 0"),
    ("td.hidden=[1024, 1024]", r"its model file takes up to \d+\.\d MiB \(at most 16 MiB\)"),
])
def test_a_config_the_backend_cannot_run_is_refused_naming_the_key(tmp_path, override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(tiny_config(tmp_path), [override])


def test_a_pool_whose_checkpoints_a_resume_could_not_read_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"a checkpoint 1\d\d\.\d MiB \(at most 64 MiB, with td.max_snapshots=1000\)"):
        load_config(tiny_config(tmp_path), ["td.start=teacher", "td.max_snapshots=1000"])


def test_the_teacher_start_is_refused_at_another_table_size(tmp_path):
    with pytest.raises(ConfigError, match="td.start=teacher is not allowed at 3 seats"):
        load_config(tiny_config(tmp_path), ["td.start=teacher", "rules.num_players=3"])


def test_the_shipped_configs_load():
    config = load_config("td_scratch_2p")
    assert config.backend == "td" and config.td.start == "scratch" and config.threads == 1
    config = load_config("td_teacher_2p")
    assert config.backend == "td" and config.td.start == "teacher" and config.make_rules().stock_size == 30
    assert config.td.opponents == {"self": 0.4, "snapshots": 0.2, "pretrained-2p": 0.4} and not config.td.stock_sizes


def test_a_teacher_start_run_resumed_halfway_ends_with_the_weights_of_an_uninterrupted_one(tmp_path):
    teacher = ["td.start=teacher", "td.budget_hands=8", "td.curve_every=4", "td.correction_bound=2.5", "td.chunk=3",
               "threads=2"]  # each iteration's 4 hands in two parts, played on two threads
    log = io.StringIO()
    straight = train(tiny_config(tmp_path), teacher, progress=False, out=log)
    assert "self-play in parts of 3 hands: on 2 thread(s) here" in log.getvalue()
    half = train(tiny_config(tmp_path, "half.yaml"), teacher + ["td.budget_hands=4"], progress=False,
                 out=io.StringIO())
    resumed = train(None, ["td.budget_hands=8"], resume=half.run_dir, progress=False, out=io.StringIO())
    a, b = learner_arrays(straight.run_dir), learner_arrays(resumed.run_dir)
    assert {"net.log_a", "net.b", "net.log_a_discard"} <= set(a) == set(b)
    assert all((a[name] == b[name]).all() for name in a)
    model = json.loads((resumed.run_dir / "model.json").read_text())
    assert model["format"] == "skipbo-residual/2" and model["teacher"] == "learned-2p" and model["hands"] == 8
    assert model["scales"][0] > 0 and model["scales"][2] > 0 and model["scales"][3] > 0
    assert model["bound"] == 0.25  # td.correction_bound in r's units, kept by the resume
    curve = json.loads((resumed.run_dir / "learning_curve.json").read_text())
    assert [point["timesteps"] for point in curve["history"]] == [0, 4, 8]
    assert curve["history"][-1]["results"]["greedy"]["games"] == 2
