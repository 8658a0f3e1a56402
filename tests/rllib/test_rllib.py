"""RLlib backend: the registered env, the masking module, export and warm start, resume, ``evaluate --ray``.

Needs ``pip install -e '.[rllib]'``; the whole module is skipped without Ray. Ray runs as one
local instance bound to 127.0.0.1 for the module and is shut down at its end; training runs are
one or two tiny iterations sampled in the driver.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

pytest.importorskip("ray.rllib", reason="Ray/RLlib are not installed: pip install -e '.[rllib]'")

import ray  # noqa: E402
import torch  # noqa: E402
from gymnasium import spaces  # noqa: E402
from pettingzoo.utils.env_logger import EnvLogger  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402
from ray.tune.registry import ENV_CREATOR, _global_registry  # noqa: E402

from agents.loading import load_policy  # noqa: E402
from agents.network import parameter_shapes  # noqa: E402
from agents.saved_model import read_model, save_model  # noqa: E402
from skipbo_env import Game, Rules  # noqa: E402
from skipbo_env.actions import NUM_ACTIONS  # noqa: E402
from skipbo_env.encoding import EARLIER_OBS_SIZES, OBS_SIZE, observe  # noqa: E402
from skipbo_env.envs.aec import observation_space  # noqa: E402
from skipbo_cli.main import main  # noqa: E402
from evaluation import run_tournament  # noqa: E402
from training.config import ConfigError, config_from_dict  # noqa: E402
from training.rllib.env import ENV_NAME, SINGLE_AGENT_ID, register  # noqa: E402
from training.rllib.metrics import hand_end_info  # noqa: E402
from training.rllib.module import policy_spec, policy_weights  # noqa: E402
from training.rllib.seating import SeatDrawer  # noqa: E402
from training.rllib.trainer import build_algorithm_config, warm_start_weights  # noqa: E402
from training.run import train  # noqa: E402

HIDDEN = [16]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    from evaluation.ray_runner import connect_ray

    assert connect_ray("local", num_cpus=2)
    assert ray.nodes()[0]["NodeManagerAddress"] == "127.0.0.1"
    register()
    yield
    ray.shutdown()


def positions(count: int, seed: int = 0) -> list[dict]:
    """Observation dicts of the seat to act, from a few seeded hands played by their first legal id."""
    found = []
    game = Game.new(Rules(num_players=2, stock_size=5), seed=seed)
    while len(found) < count and not game.is_over:
        found.append(observe(game, game.current_seat))
        legal = game.legal_actions()
        game.step(legal[len(found) % len(legal)])
    return found


def batch_of(observations: list[dict]) -> dict:
    return {Columns.OBS: {
        "observation": torch.as_tensor(np.stack([o["observation"] for o in observations])),
        "action_mask": torch.as_tensor(np.stack([o["action_mask"] for o in observations])),
    }}


def new_module():
    torch.manual_seed(0)
    return policy_spec(observation_space(), spaces.Discrete(NUM_ACTIONS), HIDDEN, "relu").build()


# ---------------------------------------------------------------------- environment
def test_the_env_registered_by_name_plays_a_hand_through_rllibs_pettingzoo_wrapper():
    env = _global_registry.get(ENV_CREATOR, ENV_NAME)({"num_players": 3, "stock_size": 4, "decks": 2})
    assert sorted(env.possible_agents) == ["player_0", "player_1", "player_2"]
    observations, _ = env.reset(seed=3)
    bot = load_policy("greedy", seed=0)
    steps = 0
    while True:
        (agent, observation), = observations.items()
        observations, rewards, terminated, truncated, infos = env.step({agent: bot.act(observation)})
        steps += 1
        if terminated["__all__"] or truncated["__all__"]:
            break
    assert set(rewards) == {"player_0", "player_1", "player_2"} and infos["player_0"]["outcome"] == "win"
    winners = infos["player_0"]["winners"]
    assert [rewards[f"player_{seat}"] for seat in range(3)] == [1.0 if won else -1.0 for won in winners]
    assert infos["player_1"]["turns"] == env.env.unwrapped.game.turn > 0 and steps >= infos["player_1"]["turns"]


def test_an_illegal_id_ends_the_hand_and_says_so_in_every_info():
    env = _global_registry.get(ENV_CREATOR, ENV_NAME)({"num_players": 2, "stock_size": 5})
    observations, _ = env.reset(seed=0)
    (agent, observation), = observations.items()
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    _, rewards, terminated, _, infos = env.step({agent: illegal})
    assert terminated["__all__"] and set(infos) == {"player_0", "player_1"}
    assert all(info["illegal_move"] and info["outcome"] == "" for info in infos.values())
    assert rewards[agent] == -1.0 and sum(rewards.values()) == -1.0


def test_the_env_passes_rllibs_own_env_check():
    env = _global_registry.get(ENV_CREATOR, ENV_NAME)({"num_players": 3, "stock_size": 4})
    check_multiagent_environments(env)  # raises on a MultiAgentEnv API fault (it steps one unmasked random id)


def test_the_single_agent_id_resolves_through_the_rllib_registry():
    env = _global_registry.get(ENV_CREATOR, SINGLE_AGENT_ID)({"opponents": "greedy", "stock_size": 5})
    observation, _ = env.reset(seed=0)
    assert observation.shape == (OBS_SIZE,) and env.action_masks().any()
    observation, reward, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert observation.shape == (OBS_SIZE,) and not truncated


# ---------------------------------------------------------------------- the module
def test_the_module_never_samples_or_picks_an_illegal_action():
    module = new_module()
    observations = positions(12)
    batch = batch_of(observations)
    masks = batch[Columns.OBS]["action_mask"].bool()
    logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
    distribution = module.get_exploration_action_dist_cls().from_logits(logits)
    torch.manual_seed(1)
    samples = torch.stack([distribution.sample() for _ in range(300)])
    assert masks.gather(1, samples.T).all()
    inference = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
    assert masks[torch.arange(len(observations)), inference.argmax(1)].all()
    assert torch.isfinite(distribution.entropy()).all()


def finished_hands(env_runner, hands: int) -> list:
    """Episodes of the env runner that ended, sampled until there are ``hands`` of them."""
    finished = []
    while len(finished) < hands:
        finished += [episode for episode in env_runner.sample(num_timesteps=500) if episode.is_done]
    return finished


def test_rllib_sampled_hands_never_end_on_an_illegal_move():
    """Every seat kind (the learner, a snapshot, bots) plays its hands to a real end, from the
    first hand of a new env runner on (RLlib's env pre-check used to play an unmasked one).
    Short stockpiles win hands before some seat's first turn: the metrics count those too."""
    config = config_from_dict({
        "backend": "rllib", "rules": {"num_players": 3, "stock_size": 2, "max_turns": 40},
        "opponents": {"mix": {"self": 1.0, "snapshots": 1.0, "greedy": 1.0, "random": 1.0}, "max_snapshots": 1},
        "network": {"hidden": HIDDEN}, "ppo": {"batch_size": 64},
        "rllib": {"num_env_runners": 0, "num_envs_per_env_runner": 2, "train_batch_size": 500}})
    drawer = SeatDrawer(config.opponents.mix, 3, True, seed=0)
    EnvLogger.flush()
    algorithm = build_algorithm_config(config, drawer).build_algo()
    try:
        env_runner = algorithm.env_runner
        env_runner.config.policy_mapping_fn.kept_snapshots = 1
        hands = finished_hands(env_runner, 150)
        metrics = env_runner.get_metrics()
    finally:
        algorithm.stop()
    endings = [hand_end_info(hand) for hand in hands]
    assert [info["illegal_move"] for info in endings] == [False] * len(hands)
    assert {info["outcome"] for info in endings} <= {"win", "draw", "truncated"}
    assert not [message for message in EnvLogger.mqueue if "Illegal move" in str(message)]
    assert metrics["hand/illegal_move_rate"] == 0.0
    assert {key.removeprefix("selfplay/win_rate_vs_") for key in metrics if key.startswith("selfplay/")} >= {
        "self+snapshots", "greedy+random"}
    assert any(len(hand.agent_episodes) < 3 for hand in hands)  # won before a seat's first turn


# ---------------------------------------------------------------------- export, warm start, resume
def test_exported_weights_load_as_a_policy_with_the_same_logits(tmp_path):
    module = new_module()
    weights = policy_weights(module.get_state())
    assert {name: w.shape for name, w in weights.items()} == parameter_shapes(OBS_SIZE, HIDDEN)
    path = save_model(tmp_path / "model.zip", weights, {"obs_size": OBS_SIZE, "hidden": HIDDEN, "activation": "relu"})
    policy = load_policy(str(path))
    observations = positions(8)
    vectors = np.stack([o["observation"] for o in observations])
    expected = module.raw_logits(torch.as_tensor(vectors)).numpy()
    np.testing.assert_allclose(policy.logits(vectors), expected, rtol=1e-5, atol=1e-5)
    for observation in observations:
        assert observation["action_mask"][policy.act(observation)] == 1


def test_a_model_of_an_earlier_observation_layout_warm_starts_the_module_with_its_own_logits(tmp_path):
    rng = np.random.default_rng(7)
    earlier = {name: rng.normal(0, 0.3, shape).astype(np.float32)
               for name, shape in parameter_shapes(EARLIER_OBS_SIZES[0], HIDDEN).items()}
    path = save_model(tmp_path / "earlier.zip", earlier,
                      {"obs_size": EARLIER_OBS_SIZES[0], "hidden": HIDDEN, "activation": "relu"})
    config = config_from_dict({"backend": "rllib", "network": {"hidden": HIDDEN}, "ppo": {"batch_size": 64},
                               "rllib": {"warm_start": str(path)}})
    module = new_module()
    module.set_state({**module.get_state(), **{name: torch.as_tensor(w) for name, w in
                                               warm_start_weights(config).items()}})
    vectors = np.stack([o["observation"] for o in positions(8)])
    np.testing.assert_allclose(module.raw_logits(torch.as_tensor(vectors)).numpy(),
                               load_policy(str(path)).logits(vectors), rtol=1e-5, atol=1e-5)


def tiny_run_config(tmp_path, **changes) -> str:
    config = {
        "name": "tiny", "backend": "rllib", "output_dir": str(tmp_path / "runs"),
        "rules": {"num_players": 2, "stock_size": 5, "max_turns": 30},  # hands end within an iteration
        "opponents": {"mix": {"self": 0.3, "snapshots": 0.3, "greedy": 0.4}, "snapshot_every": 100,
                      "max_snapshots": 2},
        "network": {"hidden": HIDDEN},
        "ppo": {"batch_size": 64, "n_epochs": 1},
        "rllib": {"num_env_runners": 0, "train_batch_size": 200, "iterations": 1},
        "budget": {"total_timesteps": 100_000},
        "evaluation": {"every_steps": 100_000, "games": 2, "opponents": ["greedy"], "final_games": 2,
                       "final_opponents": ["greedy"]},
        "checkpoint": {"every_steps": 100_000, "keep": 2},
        **changes,
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


@pytest.fixture(scope="module")
def warm_start_file(tmp_path_factory):
    rng = np.random.default_rng(4)
    weights = {name: rng.normal(0, 0.3, shape).astype(np.float32)
               for name, shape in parameter_shapes(OBS_SIZE, HIDDEN).items()}
    return save_model(tmp_path_factory.mktemp("warm") / "start.zip", weights,
                      {"obs_size": OBS_SIZE, "hidden": HIDDEN, "activation": "relu"})


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory, warm_start_file):
    tmp_path = tmp_path_factory.mktemp("run")
    config = tiny_run_config(tmp_path, rllib={"num_env_runners": 0, "train_batch_size": 200, "iterations": 1,
                                              "warm_start": str(warm_start_file)})
    return train(config, progress=False, out=open(tmp_path / "log.txt", "w"))


def test_a_warm_start_begins_from_the_model_files_policy(trained_run, warm_start_file):
    start, _ = read_model(warm_start_file)
    first, metadata = read_model(trained_run.run_dir / "checkpoints" / "step_000000000" / "model.zip")
    for name, tensor in start.items():
        assert torch.equal(first[name], tensor), name
    assert metadata["warm_start"] == str(warm_start_file)
    final, _ = read_model(trained_run.model_path)
    assert any(not torch.equal(final[name], tensor) for name, tensor in start.items())  # PPO moved it


def test_the_trained_policy_plays_in_evaluate_like_any_model(trained_run, capsys):
    assert trained_run.timesteps > 0 and "greedy" in trained_run.evaluation
    assert main(["evaluate", "--agents", str(trained_run.model_path), "greedy", "--games", "2",
                 "--stock-size", "5", "--no-progress"]) == 0
    assert "engine: vector" in capsys.readouterr().out


def test_training_metrics_reach_tensorboard(trained_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(trained_run.run_dir / "tensorboard"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"eval/win_rate_vs_greedy", "hand/turns", "hand/illegal_move_rate", "ppo/policy_loss"} <= tags
    assert any(tag.startswith("selfplay/win_rate_vs_") for tag in tags)
    assert [event.value for event in events.Scalars("hand/illegal_move_rate")] == [0.0]


def test_a_run_resumes_from_its_last_checkpoint(trained_run):
    state = json.loads((trained_run.run_dir / "checkpoints" / "latest.json").read_text())
    assert state["step"] == trained_run.timesteps
    before, _ = read_model(trained_run.model_path)
    resumed = train(None, ["rllib.iterations=2"], resume=trained_run.run_dir, progress=False,
                    out=open(trained_run.run_dir / "resume.txt", "w"))
    assert resumed.run_dir == trained_run.run_dir and resumed.timesteps > trained_run.timesteps
    log = (trained_run.run_dir / "resume.txt").read_text()
    assert f"resumed from step_{trained_run.timesteps:09d}" in log and "iteration 2:" in log
    assert "iteration 1:" not in log
    after, _ = read_model(resumed.model_path)
    assert any(not torch.equal(after[name], before[name]) for name in before)


def test_a_warm_start_that_does_not_fit_the_network_is_refused(tmp_path, warm_start_file):
    config = tiny_run_config(tmp_path, network={"hidden": [8]},
                             rllib={"num_env_runners": 0, "train_batch_size": 200, "warm_start": str(warm_start_file)})
    with pytest.raises(ConfigError, match=rf"rllib\.warm_start: .*network\.hidden=\[8\] needs \(8, {OBS_SIZE}\)"):
        train(config, progress=False)


# ---------------------------------------------------------------------- evaluate --ray
def comparable(result) -> list[tuple]:
    return [(g.index, g.deal, g.seed, g.seating, g.outcome, g.winners, g.points, g.turns, g.seat_turns,
             g.seat_actions) for g in result.games]


def test_a_tournament_on_ray_matches_the_local_run_game_for_game(warm_start_file):
    agents = ["greedy", "random", str(warm_start_file)]
    rules = Rules(num_players=2, stock_size=5)
    local = run_tournament(agents, rules, games=12, seed=11)
    on_ray = run_tournament(agents, rules, games=12, seed=11, ray_address="local")
    assert on_ray.complete and len(on_ray.games) == 12
    assert comparable(on_ray) == comparable(local)
    assert on_ray.engine == "python" and "Ray tasks" in on_ray.engine_reason


def test_evaluate_ray_refuses_options_it_cannot_honour(capsys, tmp_path):
    assert main(["evaluate", "--agents", "greedy", "random", "--ray", "--save-games", str(tmp_path)]) == 2
    assert "--ray cannot save game records" in capsys.readouterr().err
    assert main(["evaluate", "--agents", "greedy", "random", "--ray", "--engine", "vector"]) == 2
    assert "drop --engine vector" in capsys.readouterr().err


# ---------------------------------------------------------------------- damaged checkpoints
def damaged_copy(trained_run, tmp_path):
    import shutil

    from training.checkpoint import RunFolder

    run_dir = tmp_path / "run"
    shutil.copytree(trained_run.run_dir, run_dir)
    return run_dir, RunFolder(run_dir).latest_checkpoint()


@pytest.mark.parametrize("key, value, words", [
    ("iterations", -1, "'iterations' must be an integer >= 0"),
    ("snapshots_added", "1", "'snapshots_added' must be an integer"),
    ("wall_seconds", float("nan"), "'wall_seconds' must be a finite number"),
])
def test_a_damaged_rllib_state_is_refused_before_ray_starts(trained_run, tmp_path, capsys, key, value, words):
    run_dir, checkpoint = damaged_copy(trained_run, tmp_path)
    state = json.loads((checkpoint / "state.json").read_text())
    state[key] = value
    (checkpoint / "state.json").write_text(json.dumps(state))
    assert main(["train", "--resume", str(run_dir), "rllib.iterations=3", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(checkpoint / "state.json") in err and words in err, err


def test_a_rllib_learner_file_with_nan_weights_is_refused(trained_run, tmp_path, capsys):
    run_dir, checkpoint = damaged_copy(trained_run, tmp_path)
    saved = torch.load(checkpoint / "learner.pt", weights_only=True)

    def poison(tree) -> bool:
        for value in tree.values() if isinstance(tree, dict) else tree if isinstance(tree, list) else ():
            if isinstance(value, torch.Tensor) and value.is_floating_point() and value.numel():
                value.view(-1)[0] = float("nan")
                return True
            if isinstance(value, (dict, list)) and poison(value):
                return True
        return False

    assert poison(saved)
    torch.save(saved, checkpoint / "learner.pt")
    assert main(["train", "--resume", str(run_dir), "rllib.iterations=3", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert str(checkpoint / "learner.pt") in err and "holds NaN or infinite values" in err, err
