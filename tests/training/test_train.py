"""``skipbo train``: a short run end to end, resuming after a kill, refusals before the run, the pool."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml

from agents.loading import load_policy
from agents.network import NetworkPolicy, parameter_shapes
from skipbo_env import Game, Rules
from skipbo_env.encoding import OBS_SIZE, observe
from skipbo_cli.main import main
from training.config import ConfigError, load_config
from training.sb3.selfplay import OpponentPool, PoolOpponent

TINY = {
    "name": "tiny",
    "rules": {"num_players": 2, "stock_size": 5},
    "env": {"num_envs": 2},
    "opponents": {"mix": {"snapshots": 0.5, "greedy": 0.5}, "snapshot_every": 64, "max_snapshots": 2},
    "network": {"hidden": [16]},
    "ppo": {"n_steps": 32, "batch_size": 32, "n_epochs": 1},
    "pretrain": {"enabled": True, "games": 2, "epochs": 1, "dagger_rounds": 1, "dagger_games": 1},
    "budget": {"total_timesteps": 192},
    "evaluation": {"every_steps": 64, "games": 4, "opponents": ["greedy"], "final_games": 4,
                   "final_opponents": ["random", "greedy"]},
    "checkpoint": {"every_steps": 64, "keep": 2},
}


def tiny_config(tmp_path, **changes) -> str:
    config = {**TINY, "output_dir": str(tmp_path / "runs"), **changes}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def run_folders(tmp_path):
    return sorted((tmp_path / "runs").glob("tiny-*"))


def test_a_short_run_trains_evaluates_and_exports_a_loadable_model(tmp_path, capsys):
    assert main(["train", tiny_config(tmp_path), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    [folder] = run_folders(tmp_path)
    assert "tensorboard --logdir" in printed and str(folder / "model.zip") in printed
    assert "random" in printed and "greedy" in printed          # the final evaluation table
    evaluation = json.loads((folder / "evaluation.json").read_text())
    assert set(evaluation["results"]) == {"random", "greedy"}
    assert evaluation["timesteps"] >= 192
    assert [record["timesteps"] for record in evaluation["history"]][:2] == [0, 64]
    assert list((folder / "tensorboard").glob("events.out.tfevents.*"))
    state = json.loads((folder / "checkpoints" / "latest.json").read_text())
    assert state["step"] == evaluation["timesteps"]
    assert len(list((folder / "checkpoints").glob("step_*"))) == 2   # checkpoint.keep
    assert (folder / "best_model.zip").is_file()
    policy = load_policy(str(folder / "model.zip"))
    assert policy.metadata["rules"]["stock_size"] == 5 and policy.metadata["obs_size"] == OBS_SIZE
    game = Game.new(Rules(stock_size=5), seed=0)
    observation = observe(game, game.current_seat)
    assert observation["action_mask"][policy.act(observation)]


def test_a_run_killed_mid_way_resumes_from_its_last_checkpoint(tmp_path, capsys):
    config = tiny_config(tmp_path, budget={"total_timesteps": 10_000_000},
                         evaluation={**TINY["evaluation"], "every_steps": 10_000_000})
    process = subprocess.Popen([sys.executable, "-m", "skipbo_cli.main", "train", config, "--no-progress"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            folders = run_folders(tmp_path)
            latest = folders[0] / "checkpoints" / "latest.json" if folders else None
            if latest is not None and latest.is_file() and json.loads(latest.read_text())["step"] >= 128:
                break
            assert process.poll() is None, "the training process ended on its own"
            time.sleep(0.2)
        else:
            pytest.fail("no checkpoint at step 128 within 120 s")
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    [folder] = run_folders(tmp_path)
    killed_at = json.loads((folder / "checkpoints" / "latest.json").read_text())["step"]
    target = killed_at + 128
    assert main(["train", "--resume", str(folder), f"budget.total_timesteps={target}", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert f"resumed from step_{killed_at:09d} at step {killed_at:,}" in printed
    evaluation = json.loads((folder / "evaluation.json").read_text())
    assert evaluation["timesteps"] >= target
    state = json.loads((folder / "checkpoints" / f"step_{evaluation['timesteps']:09d}" / "state.json").read_text())
    assert state["snapshot_steps"][-1] > killed_at       # the pool kept growing after the resume
    assert len(run_folders(tmp_path)) == 1


def test_a_bad_key_stops_the_run_before_anything_is_written(tmp_path, capsys):
    assert main(["train", tiny_config(tmp_path), "ppo.learnin_rate=0.1"]) == 2
    assert "ppo.learnin_rate" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_an_unknown_opponent_stops_the_run_naming_the_key(tmp_path, capsys):
    assert main(["train", tiny_config(tmp_path), "opponents.mix={grredy: 1}"]) == 2
    error = capsys.readouterr().err
    assert "opponents.mix" in error and "grredy" in error
    assert not (tmp_path / "runs").exists()


def test_resume_of_a_folder_that_is_not_a_run_is_refused(tmp_path, capsys):
    assert main(["train", "--resume", str(tmp_path)]) == 2
    assert "not a run folder" in capsys.readouterr().err


def snapshot(seed):
    rng = np.random.default_rng(seed)
    return {name: rng.normal(size=shape) for name, shape in parameter_shapes(OBS_SIZE, [8]).items()}


def test_the_pool_adds_snapshots_and_drops_the_oldest():
    pool = OpponentPool({"snapshots": 1.0}, max_snapshots=2, network=([8], "relu"))
    for step in (0, 100, 200):
        pool.add_snapshot(snapshot(step), step)
    assert pool.snapshot_steps == [100, 200]
    rng = np.random.default_rng(0)
    assert {pool.draw(rng) for _ in range(50)} == {("snapshots", 100), ("snapshots", 200)}


def test_the_pool_draws_by_the_mix_and_waits_for_a_first_snapshot():
    pool = OpponentPool({"snapshots": 3.0, "greedy": 1.0}, max_snapshots=4, network=([8], "relu"))
    rng = np.random.default_rng(0)
    assert {pool.draw(rng) for _ in range(20)} == {("greedy", None)}
    pool.add_snapshot(snapshot(0), 0)
    kinds = [pool.draw(rng)[0] for _ in range(2000)]
    assert 0.70 < kinds.count("snapshots") / len(kinds) < 0.80


def test_a_pool_seat_plays_legal_moves_for_whoever_it_drew():
    pool = OpponentPool({"snapshots": 1.0, "random": 1.0}, max_snapshots=2, network=([8], "relu"))
    pool.add_snapshot(snapshot(0), 0)
    seat = PoolOpponent(pool, seed=1, load_bot=lambda spec, seed: load_policy(spec, seed=seed))
    drawn = set()
    for hand in range(6):
        seat.reset(hand)
        drawn.add(seat.kind)
        game = Game.new(Rules(stock_size=5), seed=hand)
        for _ in range(30):
            if game.is_over:
                break
            observation = observe(game, game.current_seat)
            action = seat.act(observation)
            assert observation["action_mask"][action]
            game.step(action)
    assert drawn == {"snapshots", "random"}
    assert isinstance(seat._snapshots[0], NetworkPolicy)


def test_the_quickstart_config_is_a_two_player_neural_run_whose_budget_is_work():
    config = load_config("quickstart")
    assert config.make_rules().num_players == 2 and config.backend == "neural"
    assert config.neural.generations >= 1 and config.neural.teacher_games > 0  # the budget: hands, generations
    assert set(config.neural.final_bots) >= {"greedy", "planner"} and config.neural.final_games >= 400


def test_the_ppo_config_is_a_short_two_player_sb3_run():
    config = load_config("ppo_2p")
    assert config.make_rules().num_players == 2 and config.backend == "sb3"
    assert config.budget.max_minutes is not None and config.budget.max_minutes <= 10
    assert set(config.evaluation.final_opponents) == {"random", "greedy", "planner"}
    assert config.env.vec_env == "vector" and config.pretrain.max_minutes is not None


def test_overrides_on_a_training_object_are_refused():
    from training.run import train

    with pytest.raises(ConfigError):
        train(load_config("quickstart"), ["seed=1"])


def tensorboard_tags(folder) -> set[str]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tags = set()
    for events in (folder / "tensorboard").glob("events.out.tfevents.*"):
        accumulator = EventAccumulator(str(events))
        accumulator.Reload()
        tags |= set(accumulator.Tags()["scalars"])
    return tags


def logged_learning_rates(folder) -> list[float]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    rates = []
    for events in sorted((folder / "tensorboard").glob("events.out.tfevents.*")):
        accumulator = EventAccumulator(str(events))
        accumulator.Reload()
        if "train/learning_rate" in accumulator.Tags()["scalars"]:
            rates += [event.value for event in accumulator.Scalars("train/learning_rate")]
    return rates


@pytest.mark.parametrize("anneal", [False, True])
def test_anneal_lr_lowers_the_step_size_linearly_over_the_step_budget(tmp_path, anneal):
    ppo = {**TINY["ppo"], "learning_rate": 3e-4, "anneal_lr": anneal}
    assert main(["train", tiny_config(tmp_path, ppo=ppo, budget={"total_timesteps": 256}), "--no-progress"]) == 0
    [folder] = run_folders(tmp_path)
    rates = logged_learning_rates(folder)
    steps_per_update = TINY["env"]["num_envs"] * TINY["ppo"]["n_steps"]
    expected = [3e-4 * (1 - update * steps_per_update / 256) if anneal else 3e-4 for update in range(len(rates))]
    assert len(rates) >= 3 and rates == pytest.approx(expected, rel=1e-5)


def test_a_run_out_of_time_says_why_and_resume_with_a_larger_budget_continues(tmp_path, capsys):
    config = tiny_config(tmp_path, budget={"total_timesteps": 256, "max_minutes": 1e-6})
    assert main(["train", config, "--no-progress"]) == 0
    printed = capsys.readouterr().out
    [folder] = run_folders(tmp_path)
    assert "the time budget is spent (budget.max_minutes=1e-06 minutes of PPO)" in printed
    assert f"continue with: skipbo train --resume {folder} budget.max_minutes=" in printed
    stopped_at = json.loads((folder / "evaluation.json").read_text())["timesteps"]
    assert stopped_at < 256
    assert main(["train", "--resume", str(folder), "--no-progress"]) == 2          # that budget is spent
    assert "budget.max_minutes" in capsys.readouterr().err
    assert main(["train", "--resume", str(folder), "budget.max_minutes=10", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "training stopped at step" in printed and "budget.total_timesteps reached" in printed
    assert json.loads((folder / "evaluation.json").read_text())["timesteps"] >= 256 > stopped_at


def test_a_run_reaching_its_target_stops_and_says_so(tmp_path, capsys):
    config = tiny_config(tmp_path, budget={"total_timesteps": 100_000, "target_win_rate": 0.01,
                                           "target_opponent": "greedy"},
                         evaluation={**TINY["evaluation"], "opponents": ["random"]}, rules={"stock_size": 2})
    assert main(["train", config, "budget.target_opponent=random", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "the target is reached (budget.target_win_rate=0.01 against random)" in printed
    [folder] = run_folders(tmp_path)
    assert json.loads((folder / "evaluation.json").read_text())["timesteps"] < 100_000


def test_a_target_against_an_opponent_not_evaluated_is_refused(tmp_path, capsys):
    assert main(["train", tiny_config(tmp_path), "budget.target_win_rate=0.9", "budget.target_opponent=planner"]) == 2
    assert "budget.target_opponent='planner' is not one of evaluation.opponents" in capsys.readouterr().err


def test_a_run_draws_its_learning_curve_and_logs_losses_and_the_final_evaluation_to_tensorboard(tmp_path, capsys):
    assert main(["train", tiny_config(tmp_path), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    [folder] = run_folders(tmp_path)
    curve = folder / "learning_curve.png"
    assert f"curve:       {curve}" in printed
    assert curve.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and curve.stat().st_size > 5000
    tags = tensorboard_tags(folder)
    assert {"train/policy_gradient_loss", "train/value_loss", "train/entropy_loss", "train/approx_kl"} <= tags
    assert {"final/win_rate_vs_greedy", "final/win_rate_vs_random", "eval/win_rate_vs_greedy"} <= tags


def test_progress_is_logged_as_lines_when_the_output_is_not_a_terminal(tmp_path, capsys, monkeypatch):
    import training.common

    monkeypatch.setattr(training.common, "LOG_SECONDS", 0.0)
    assert main(["train", tiny_config(tmp_path)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("training: ")]
    assert lines and "steps/s" in lines[-1] and "/192 steps" in lines[-1]


def test_the_summary_never_calls_step_0_the_best_when_later_evaluations_came():
    import io

    from training.common import RunLog, print_best

    out = io.StringIO()
    record = lambda step, rate: {"timesteps": step, "results": {"greedy": {"win_rate": rate}}}  # noqa: E731
    state = {"timesteps": 128, "best": {"score": 0.6, "timesteps": 0},
             "history": [record(0, 0.6), record(64, 0.5), record(128, 0.55)]}
    print_best(state, "best_model.zip", RunLog(out))
    assert "best periodic evaluation at step 0" not in out.getvalue()
    assert "no later periodic evaluation beat the one before PPO" in out.getvalue() and "55.0%" in out.getvalue()
    assert "best_model.zip" in out.getvalue()


def test_an_opponent_without_a_batched_interface_is_asked_game_by_game_and_the_log_says_so_once(tmp_path, capsys):
    config = tiny_config(tmp_path, opponents={"mix": {"agents.random_bot:RandomBot": 1.0}})
    assert main(["train", config, "pretrain.enabled=false", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("'agents.random_bot:RandomBot' has no batched interface") == 1


def test_reports_show_short_names_and_tensorboard_tags_are_sanitised(tmp_path, capsys):
    config = tiny_config(tmp_path, rules={"num_players": 2, "stock_size": 2},  # hands end within the budget
                         opponents={"mix": {"agents.random_bot:RandomBot": 1.0}},
                         evaluation={**TINY["evaluation"], "opponents": ["rival=greedy"],
                                     "final_opponents": ["rival=greedy"]})
    assert main(["train", config, "pretrain.enabled=false", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "win rate vs rival " in printed and "against each of rival" in printed
    assert "rival=greedy" not in printed
    [folder] = run_folders(tmp_path)
    tags = tensorboard_tags(folder)
    assert {"eval/win_rate_vs_rival", "final/win_rate_vs_rival",
            "selfplay/win_rate_vs_agents.random_bot_RandomBot"} <= tags


def test_a_busy_machine_gets_a_note_before_torch_threads_oversubscribe_it(monkeypatch):
    from training.run import busy_machine_note

    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr("os.getloadavg", lambda: (1.9, 1.0, 1.0))
    assert "load 1.9 on 2 cores" in busy_machine_note(2) and "threads=1" in busy_machine_note(2)
    assert busy_machine_note(1) is None  # one thread waits on nobody
    monkeypatch.setattr("os.getloadavg", lambda: (0.2, 0.1, 0.1))
    assert busy_machine_note(2) is None
