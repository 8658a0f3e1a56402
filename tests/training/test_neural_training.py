"""``backend: neural``: a run's files, resuming to the same weights, the same weights for a seed, and every
damaged value of a checkpoint refused in one line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from agents import load_policy
from agents.neural import NeuralBot
from training.config import ConfigError, load_config
from training.state_checks import CheckpointError
from training.run import train

TINY = {
    "name": "tiny", "seed": 5, "threads": 1, "backend": "neural",
    "rules": {"num_players": 2, "stock_size": 5},
    "neural": {"hidden": [8, 4], "teacher": "pretrained-2p", "teacher_games": 16, "games": 12, "explore": 0.05,
               "tables": [["self"], ["planner"]], "window": 2, "epochs": 1, "batch_size": 64,
               "generations": 2, "chunk": 8, "curve_games": 4, "curve_opponents": ["greedy", "planner"],
               "final_opponents": ["planner", "random"], "final_games": 6},
    "checkpoint": {"keep": 2},
}


def tiny_config(tmp_path, **neural):
    data = json.loads(json.dumps(TINY))
    tmp_path.mkdir(parents=True, exist_ok=True)
    data["output_dir"] = str(tmp_path / "runs")
    data["neural"].update(neural)
    path = tmp_path / "tiny.yaml"
    path.write_text(json.dumps(data))
    return path


def weights_of(result) -> dict:
    model = json.loads(result.model_path.read_text())
    return {key: model[key] for key in ("first", "first_bias", "second", "second_bias", "output", "output_bias")}


def test_a_run_leaves_a_playable_model_its_curve_and_evaluation(tmp_path, capsys):
    result = train(tiny_config(tmp_path), progress=False)
    bot = load_policy(f"neural:model={result.model_path}")
    assert isinstance(bot, NeuralBot)
    run = result.run_dir
    for name in ("learning_curve.png", "learning_curve.json", "evaluation.json", "config.yaml"):
        assert (run / name).is_file(), name
    assert any((run / "tensorboard").iterdir())
    curve = json.loads((run / "learning_curve.json").read_text())
    # a point after each generation but the last, whose point is the final evaluation
    assert [point["generation"] for point in curve["history"]] == [0, 1, 2]
    assert [point.get("final", False) for point in curve["history"]] == [False, False, True]
    assert set(curve["history"][0]["results"]) == {"greedy", "planner"}
    assert curve["history"][-1]["results"] == curve["evaluation"]
    assert set(curve["teacher"]) == {"greedy", "planner"}  # the teacher's level on the same deals
    assert result.timesteps == 16 + 2 * 12
    assert set(result.evaluation) == {"planner", "random"} and result.evaluation["planner"]["games"] == 6
    out = capsys.readouterr().out
    assert "generation   0" in out and "final evaluation" in out


def test_the_same_seed_gives_the_same_weights_and_a_resumed_run_ends_where_an_uninterrupted_one_does(tmp_path):
    whole = train(tiny_config(tmp_path / "a"), progress=False)
    again = train(tiny_config(tmp_path / "b"), progress=False)
    assert weights_of(whole) == weights_of(again)
    first = train(tiny_config(tmp_path / "c", generations=1), progress=False)
    resumed = train(None, ["neural.generations=2"], resume=first.run_dir, progress=False)
    assert weights_of(resumed) == weights_of(whole)
    assert resumed.evaluation == whole.evaluation


ES = {"generations": 1, "es_population": 4, "es_games": 4, "es_opponents": ["planner", "greedy"]}


def test_the_evolution_moves_only_the_output_layer_and_resumes_to_the_weights_of_an_uninterrupted_run(tmp_path):
    fitted = train(tiny_config(tmp_path / "a", generations=1), progress=False)
    whole = train(tiny_config(tmp_path / "b", es_generations=2, **ES), progress=False)
    before, after = weights_of(fitted), weights_of(whole)
    assert all(after[key] == before[key] for key in ("first", "first_bias", "second", "second_bias", "output_bias"))
    assert after["output"] != before["output"]
    model = json.loads(whole.model_path.read_text())
    assert model["es_generations"] == 2
    assert model["method"] == "fitted to the teacher's lists, then 1 DAgger generation, then 2 sNES generations on the output layer (training/neural/trainer.py)"
    assert model["games"] == 16 + 12 + 2 * 4 * 2 * 4  # teacher, one fitted generation, two of 4 candidates x 2 x 4
    curve = json.loads((whole.run_dir / "learning_curve.json").read_text())["history"]
    assert [(p["generation"], p.get("es_generation", 0), p.get("final", False)) for p in curve] == [
        (0, 0, False), (1, 0, False), (1, 1, False), (1, 2, True)]  # the fitted network's point, then the evolution's
    first = train(tiny_config(tmp_path / "c", es_generations=1, **ES), progress=False)
    resumed = train(None, ["neural.es_generations=2"], resume=first.run_dir, progress=False)
    assert weights_of(resumed) == after and resumed.evaluation == whole.evaluation
    with pytest.raises(ConfigError, match="already trained 2 of neural.es_generations=1: .* neural.es_generations=4"):
        train(None, [], resume=resumed.run_dir, progress=False)


def test_the_progress_bar_counts_the_evolution_games_as_played(tmp_path, monkeypatch):
    import training.neural.trainer

    totals, original = [], training.neural.trainer.progress_bar

    def bar(total, *args):
        totals.append(total)
        return original(total, *args)

    monkeypatch.setattr(training.neural.trainer, "progress_bar", bar)
    run = train(tiny_config(tmp_path, es_generations=1, **{**ES, "es_games": 3}), progress=False)
    assert totals == [json.loads(run.model_path.read_text())["games"]] == [16 + 12 + 4 * 2 * 4]  # 3 games: 4 seatings


def test_a_run_can_start_from_a_model_file_and_plays_it_as_it_was(one_generation, tmp_path):
    model = str(one_generation.model_path)
    started = train(tiny_config(tmp_path, start=model, generations=0), progress=False)
    assert weights_of(started) == weights_of(one_generation)
    assert started.evaluation == one_generation.evaluation  # the same network on the same final deals
    document = json.loads(started.model_path.read_text())
    assert document["method"] == f"started from {model} (training/neural/trainer.py)" and document["games"] == 0
    assert not list((started.run_dir / "data").glob("*.npz"))
    resumed = train(None, ["neural.es_generations=1", "neural.es_population=2", "neural.es_games=2"],
                    resume=started.run_dir, progress=False)  # a checkpoint without data files resumes
    assert weights_of(resumed)["first"] == weights_of(one_generation)["first"]


@pytest.mark.parametrize("start, message", [
    ("{tmp}/missing.json", "neural.start: neural model .* cannot be read: No such file"),
    ("{tmp}/bad.json", "neural.start: neural model .* is not valid JSON"),
    ("neural-2p", "a 2-seat network of layers \\[128, 32\\]: the run needs 2 seats and "
                                         "neural.hidden=\\[8, 4\\]"),
])
def test_a_bad_start_model_is_one_line(tmp_path, start, message):
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(ConfigError, match=message):
        load_config(tiny_config(tmp_path, start=start.format(tmp=tmp_path)))


@pytest.fixture(scope="module")
def one_generation(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("neural-run")
    return train(tiny_config(tmp, generations=1), progress=False)


@pytest.mark.parametrize("field, value, message", [
    ("generation", -1, "'generation' must be an integer >= 0"),
    ("generation", "3", "'generation' must be an integer >= 0"),
    ("games", -5, "'games' must be an integer >= 0"),
    ("decisions", 1.5, "'decisions' must be an integer >= 0"),
    ("wall_seconds", -1.0, "'wall_seconds' must be a finite number"),
    ("wall_seconds", math.inf, "'wall_seconds' must be a finite number"),
    ("data_files", ["gen-0000.npz"] * 3, "'data_files' must name distinct generations"),
    ("data_files", ["../../etc/passwd"], "'data_files' must be"),
    ("archive", "x", "'archive' must be a list"),
    ("archive", [{"format": "skipbo-neural/1"}], "num_players must be"),
    ("rng", {"state": 1}, "'rng' must be"),
    ("history", None, "'history' must be a list"),
    ("es", {"generation": 1, "sigma": [math.nan]}, "'es' must be an object"),
])
def test_a_damaged_state_field_is_refused_naming_the_file_and_the_field(one_generation, tmp_path, field, value,
                                                                        message):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(one_generation.run_dir, run)
    state_path = next(run.glob("checkpoints/step_*/state.json"))
    state = json.loads(state_path.read_text())
    state[field] = value
    state_path.write_text(json.dumps(state))
    with pytest.raises(CheckpointError, match=message) as error:
        train(None, ["neural.generations=2"], resume=run, progress=False)
    assert "state.json" in str(error.value) and "\n" not in str(error.value)


def test_damaged_weights_or_data_are_refused(one_generation, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(one_generation.run_dir, run)
    weights = next(run.glob("checkpoints/step_*/weights.npz"))
    arrays = dict(np.load(weights))
    arrays["first.weight"][0, 0] = np.nan
    np.savez(weights, **arrays)
    with pytest.raises(CheckpointError, match="NaN or infinite"):
        train(None, ["neural.generations=2"], resume=run, progress=False)
    shutil.rmtree(run)
    shutil.copytree(one_generation.run_dir, run)
    for data in (run / "data").glob("*.npz"):
        data.write_bytes(b"not a zip file")
    with pytest.raises(CheckpointError, match="not a readable .npz file"):
        train(None, ["neural.generations=2"], resume=run, progress=False)


def test_data_files_without_the_decisions_positions_resume_and_damaged_ones_are_refused(one_generation, tmp_path):
    """Without ``neural.outcome_weight`` no decisions' positions are kept; a run of a release before it
    resumes (its files lack the arrays); a position's result outside 0..1 is refused."""
    import shutil

    from training.neural.data_files import npz_bytes

    for path in (one_generation.run_dir / "data").glob("*.npz"):
        with np.load(path) as data:
            assert data["root_inputs"].shape[0] == 0 and data["root_results"].shape == (0,)

    def rewrite(run, change):
        for path in (run / "data").glob("*.npz"):
            with np.load(path) as data:
                arrays = {name: data[name] for name in data.files}
            change(arrays)
            path.write_bytes(npz_bytes(arrays))

    run = tmp_path / "old"
    shutil.copytree(one_generation.run_dir, run)
    rewrite(run, lambda arrays: [arrays.pop(name) for name in ("root_inputs", "root_results")])
    assert train(None, ["neural.generations=2"], resume=run, progress=False).timesteps == 16 + 2 * 12
    run = tmp_path / "damaged"
    shutil.copytree(one_generation.run_dir, run)
    rewrite(run, lambda arrays: arrays.update(root_inputs=arrays["stop_inputs"][:1],
                                              root_results=np.array([2.0], np.float32)))
    with pytest.raises(CheckpointError, match="'root_results' holds a result other than 0, 0.5 or 1"):
        train(None, ["neural.generations=2"], resume=run, progress=False)


def test_a_four_seat_run_with_the_outcome_weight_is_measured_at_its_tables_with_each_other_seats_share(tmp_path):
    config = tiny_config(tmp_path, teacher="pretrained-4p", tables=[["self", "greedy", "greedy"]], generations=1,
                         curve_opponents=["planner+greedy+greedy"], final_opponents=["pretrained-4p+greedy+greedy"],
                         outcome_weight=1.0, seat_orders="all")
    result = train(config, ["rules.num_players=4"], progress=False)
    for path in (result.run_dir / "data").glob("*.npz"):  # the outcome weight keeps every decision's position
        with np.load(path) as data:
            assert data["root_inputs"].shape[0] == len(data["root_results"]) > 0
    stats = result.evaluation["pretrained-4p+greedy+greedy"]
    assert stats["games"] == 24  # 6 rounded up to a whole set of the 24 orders of the four seats
    assert set(stats["others"]) == {"pretrained-4p", "greedy", "greedy#2"}
    shares = stats["win_rate"] + sum(stats["others"].values()) + stats["draws"] / stats["games"]
    assert shares == pytest.approx(1.0)
    curve = json.loads((result.run_dir / "learning_curve.json").read_text())
    assert set(curve["teacher"]) == {"planner+greedy+greedy"}  # the teacher in the network's seat, same deals


def test_a_spent_budget_names_the_key_to_raise(one_generation):
    with pytest.raises(ConfigError, match="neural.generations=2"):
        train(None, [], resume=one_generation.run_dir, progress=False)


@pytest.mark.parametrize("override, message", [
    ("neural.hidden=[8]", "neural.hidden"),
    ("neural.teacher=mybot.py:Bot", "neural.teacher"),
    ("neural.tables=[[self, self]]", "lists the 1 other seat"),
    ("neural.tables=[[nobody]]", "'nobody' is not allowed"),
    ("neural.curve_opponents=[self]", "neural.curve_opponents"),
    ("neural.final_opponents=[]", "neural.final_opponents is empty"),
    ("neural.final_opponents=[mybot.py:Bot]", "neural.final_opponents"),
    ("neural.explore=2", "neural.explore"),
    ("neural.curve_opponents=[planner+greedy]", "lists the 1 other seat"),
    ("neural.final_opponents=[planner+nobody]", "'planner\\+nobody' is not allowed"),
    ("neural.outcome_weight=-1", "neural.outcome_weight"),
    ("neural.es_population=1", "neural.es_population"),
    ("neural.es_population=5", "neural.es_population=5 is not allowed: use an even number"),
    ("neural.es_opponents=[self]", "neural.es_opponents: 'self' is not allowed"),
    ("neural.es_sigma=0", "neural.es_sigma"),
    ("neural.seat_orders=mirror", "neural.seat_orders='mirror' is not allowed: use one of rotations, all"),
])
def test_bad_neural_settings_are_one_line(tmp_path, override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(tiny_config(tmp_path), [override])


def test_the_quickstart_config_gives_the_same_weights_twice(tmp_path):
    """``make train``'s config, its first steps (a shorter generation 0 and one later generation), twice."""
    first_steps = ["neural.teacher_games=12", "neural.teacher_epochs=1", "neural.games=6", "neural.generations=1",
                   "neural.chunk=4", "neural.curve_games=2", "neural.final_games=2", "neural.curve_opponents=[greedy]"]
    runs = [train("quickstart", first_steps + [f"output_dir={tmp_path / name}"], progress=False) for name in "ab"]
    assert weights_of(runs[0]) == weights_of(runs[1])
    assert json.loads(runs[0].model_path.read_text())["games"] == 12 + 6


def test_a_generations_log_entry_and_curve_point_fit_the_bytes_the_state_cap_allows_them(one_generation):
    """``training.neural.config.ENTRY_BYTES`` (what a generation adds to ``state.json`` beside the names it repeats)
    holds a real run's entries with room to spare."""
    from training.checkpoint import compact_json
    from training.neural.config import ENTRY_BYTES

    state = json.loads(next(one_generation.run_dir.glob("checkpoints/step_*/state.json")).read_text())
    entries = state["log"] + state["history"]
    assert entries and max(len(compact_json(entry)) for entry in entries) <= ENTRY_BYTES / 4
