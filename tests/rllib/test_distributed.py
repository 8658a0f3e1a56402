"""``training.distributed`` on a local Ray instance (2 CPUs): results in input order, errors raised, an sNES run
whose candidate games are Ray tasks and a TD run whose hands are played in parts as Ray tasks, each ending with the
same weights as the same run in one process."""

from __future__ import annotations

import io
import json
import operator
import socket
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[rllib]'")

from skipbo_cli.main import main  # noqa: E402
from training.checkpoint import RunFolder  # noqa: E402
from training.config import ConfigError  # noqa: E402
from training.distributed import WorkPool  # noqa: E402
from training.run import train  # noqa: E402
from training.td.state import LEARNER_FILE  # noqa: E402

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "snes_2p.yaml"
TD_CONFIG = CONFIG.with_name("td_teacher_2p.yaml")
TD_SMALL = ["rules.stock_size=5", "seed=4", "td.hidden=[8, 4]", "td.search_top=4", "td.hands=8", "td.chunk=3",
            "td.budget_hands=16", "td.snapshot_every=8", "td.checkpoint_every=8", "td.curve_every=16",
            "td.curve_games=2", "td.curve_opponents=[greedy]", "td.final_games=2"]
"""A teacher-start run of two iterations, each of 8 hands in parts of 3, 3 and 2."""
SMALL = ["rules.stock_size=5", "snes.population=4", "snes.deals=3", "snes.curve_every=1", "snes.curve_deals=2",
         "snes.final_deals=2", "seed=4", "snes.generations=2"]


def sNES_run(tmp_path: Path, name: str, *overrides: str) -> tuple[dict, dict, str]:
    out = io.StringIO()
    result = train(CONFIG, [*SMALL, f"output_dir={tmp_path / name}", *overrides], progress=True, out=out)
    state = json.loads((RunFolder(result.run_dir).latest_checkpoint() / "state.json").read_text())
    return state, json.loads(result.model_path.read_text())["parameters"], out.getvalue()


def without_clocks_and_nodes(state: dict) -> dict:
    kept = {key: value for key, value in state.items() if key not in ("wall_seconds", "log", "history")}
    kept["history"] = [{k: v for k, v in point.items() if k != "wall_seconds"} for point in state["history"]]
    kept["log"] = [{k: v for k, v in entry.items() if k not in ("seconds", "nodes")} for entry in state["log"]]
    return kept


def test_a_pool_on_ray_returns_every_result_in_input_order_and_raises_a_calls_error():
    with WorkPool("local", workers=2) as pool:
        assert pool.on_ray and pool.describe().startswith("as Ray tasks on 1 node(s), 2 CPUs")
        assert pool.map(operator.sub, list(range(12)), shared=100) == [100 - i for i in range(12)]
        assert len(pool.last_nodes) == 12 and len(set(pool.last_nodes)) == 1
        with pytest.raises(ZeroDivisionError):
            pool.map(operator.truediv, [1, 0, 2], shared=1)


def test_an_sNES_run_on_ray_ends_with_the_weights_of_the_same_run_in_one_process(tmp_path):
    here, here_weights, _ = sNES_run(tmp_path, "here")
    on_ray, ray_weights, log = sNES_run(tmp_path, "ray", "ray.address=local", "ray.workers=2")
    assert "candidate games: as Ray tasks on 1 node(s), 2 CPUs (local)" in log and "refused, on 1 Ray node(s)" in log
    assert ray_weights == here_weights
    assert on_ray["mu"] == here["mu"] and on_ray["sigma"] == here["sigma"] and on_ray["archive"] == here["archive"]
    assert without_clocks_and_nodes(on_ray) == without_clocks_and_nodes(here)
    assert on_ray["games"] == here["games"] > 0
    assert all(sum(entry["nodes"].values()) == 4 for entry in on_ray["log"])  # every candidate a task
    assert all("nodes" not in entry for entry in here["log"])


def test_a_run_in_one_process_resumed_on_ray_ends_where_the_uninterrupted_run_does(tmp_path):
    whole, whole_weights, _ = sNES_run(tmp_path, "whole")
    first = train(CONFIG, [*SMALL, f"output_dir={tmp_path / 'split'}", "snes.generations=1"], progress=False,
                  out=io.StringIO())
    resumed = train(None, ["snes.generations=2", "ray.address=local", "ray.workers=2"], resume=first.run_dir,
                    progress=False, out=io.StringIO())
    state = json.loads((RunFolder(resumed.run_dir).latest_checkpoint() / "state.json").read_text())
    assert "nodes" not in state["log"][0] and sum(state["log"][1]["nodes"].values()) == 4
    assert json.loads(resumed.model_path.read_text())["parameters"] == whole_weights
    assert without_clocks_and_nodes(state) == without_clocks_and_nodes(whole)


def test_a_ray_address_where_no_cluster_listens_is_refused_in_one_line(tmp_path, capsys):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ConfigError, match=f"ray.address: no Ray cluster answers at '127.0.0.1:{port}'"):
        train(CONFIG, [*SMALL, f"output_dir={tmp_path}", f"ray.address=127.0.0.1:{port}"], progress=False,
              out=io.StringIO())
    assert main(["train", str(CONFIG), *SMALL, f"output_dir={tmp_path}", f"ray.address=127.0.0.1:{port}"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "nothing listens at 127.0.0.1" in error
    assert not list(tmp_path.iterdir())  # no empty run folder left behind


def td_run(tmp_path: Path, name: str, *overrides: str) -> tuple[dict, dict, str]:
    out = io.StringIO()
    result = train(TD_CONFIG, [*TD_SMALL, f"output_dir={tmp_path / name}", *overrides], progress=False, out=out)
    checkpoint = RunFolder(result.run_dir).latest_checkpoint()
    with np.load(checkpoint / LEARNER_FILE) as data:
        arrays = {name: data[name] for name in data.files}
    return arrays, json.loads((checkpoint / "state.json").read_text()), out.getvalue()


def test_a_td_run_whose_parts_are_ray_tasks_ends_with_the_weights_of_the_same_run_here(tmp_path):
    here, here_state, _ = td_run(tmp_path, "here", "threads=2")
    on_ray, ray_state, log = td_run(tmp_path, "ray", "ray.address=local", "ray.workers=2")
    assert "self-play in parts of 3 hands: as Ray tasks on 1 node(s), 2 CPUs (local)" in log
    assert set(on_ray) == set(here) and all(np.array_equal(on_ray[name], here[name]) for name in here)
    assert ray_state["positions_fitted"] == here_state["positions_fitted"] > 0
    assert ray_state["cpu_seconds"] > 0  # the tasks' CPU seconds are counted


def test_a_td_run_on_ray_without_parts_is_refused_naming_td_chunk(tmp_path):
    with pytest.raises(ConfigError, match="td.chunk=0 makes one part of td.hands=8: set td.chunk from 1 to 7"):
        train(TD_CONFIG, [*TD_SMALL, "td.chunk=0", f"output_dir={tmp_path}", "ray.address=local"], progress=False,
              out=io.StringIO())
