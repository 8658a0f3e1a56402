"""Saved models: a round trip plays the same moves; anything else is refused without unpickling."""

from __future__ import annotations

import io
import json
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.network import NetworkPolicy, parameter_shapes
from agents.saved_model import SavedModelError, load_saved_policy, read_model, save_model
from skipbo_env import Game, Rules
from evaluation.tournament import run_tournament
from skipbo_env.encoding import EARLIER_OBS_SIZES, OBS_SIZE, observe, table_inputs

HIDDEN = [16, 8]


def random_weights(obs_size=OBS_SIZE, seed=0):
    rng = np.random.default_rng(seed)
    return {name: rng.normal(size=shape).astype(np.float32)
            for name, shape in parameter_shapes(obs_size, HIDDEN).items()}


def metadata(obs_size=OBS_SIZE):
    return {"obs_size": obs_size, "hidden": HIDDEN, "activation": "relu", "rules": Rules().to_dict(), "seed": 3}


@pytest.mark.parametrize("suffix", [".zip", ".pt"])
def test_a_saved_model_plays_the_same_moves_after_loading(tmp_path, suffix):
    weights = random_weights()
    path = save_model(tmp_path / f"model{suffix}", weights, metadata())
    original = NetworkPolicy(weights, HIDDEN, "relu")
    loaded = load_saved_policy(path)
    assert loaded.metadata["seed"] == 3 and loaded.metadata["obs_size"] == OBS_SIZE
    game = Game.new(Rules(), seed=1)
    for _ in range(40):
        observation = observe(game, game.current_seat)
        action = loaded.act(observation)
        assert action == original.act(observation)
        assert observation["action_mask"][action]
        game.step(action)
        if game.is_over:
            break


def test_the_zip_metadata_is_plain_json(tmp_path):
    path = save_model(tmp_path / "model.zip", random_weights(), metadata())
    with zipfile.ZipFile(path) as archive:
        record = json.loads(archive.read("skipbo-model.json"))
    assert record["format"] == "skipbo-model/1" and record["hidden"] == HIDDEN


def test_random_bytes_are_refused(tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes(os.urandom(4096))
    with pytest.raises(SavedModelError, match="not a skipbo model file"):
        load_saved_policy(path)


class Payload:
    def __reduce__(self):
        return (os.system, ("touch PWNED",))


@pytest.mark.parametrize("suffix", [".pt", ".zip"])
def test_a_pickle_with_a_code_payload_is_refused_without_running_it(tmp_path, monkeypatch, suffix):
    monkeypatch.chdir(tmp_path)
    buffer = io.BytesIO()
    torch.save({"format": "skipbo-model/1", "payload": Payload()}, buffer)
    path = tmp_path / f"evil{suffix}"
    if suffix == ".zip":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("skipbo-model.json", json.dumps({"format": "skipbo-model/1", **metadata(),
                                                              "num_actions": 145}))
            archive.writestr("policy.pt", buffer.getvalue())
    else:
        path.write_bytes(buffer.getvalue())
    with pytest.raises(SavedModelError, match="refused to load"):
        load_saved_policy(path)
    assert not (tmp_path / "PWNED").exists()


def test_a_refused_plain_pickle_prints_only_the_one_line_error_in_a_real_process(tmp_path):
    import subprocess
    import sys

    with zipfile.ZipFile(tmp_path / "evil.zip", "w") as archive:
        archive.writestr("skipbo-model.json", json.dumps({"format": "skipbo-model/1", **metadata(),
                                                          "num_actions": 145}))
        archive.writestr("policy.pt", pickle.dumps({"x": Payload()}))  # protocol 4+: torch warns about it
    done = subprocess.run([sys.executable, "-m", "skipbo_cli.main", "evaluate", "--agents", "evil.zip", "greedy",
                           "--games", "2"], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == 2 and not (tmp_path / "PWNED").exists()
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and "refused to load evil.zip" in done.stderr


def test_a_plain_pickle_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "model.pt"
    path.write_bytes(pickle.dumps(Payload()))
    with pytest.raises(SavedModelError):
        load_saved_policy(path)
    assert not (tmp_path / "PWNED").exists()


def test_a_model_for_another_observation_size_is_refused(tmp_path):
    path = save_model(tmp_path / "old.zip", random_weights(obs_size=100), metadata(obs_size=100))
    with pytest.raises(SavedModelError, match=f"size 100.*size {OBS_SIZE}"):
        load_saved_policy(path)


@pytest.mark.parametrize("obs_size", EARLIER_OBS_SIZES)
def test_a_model_of_an_earlier_layout_loads_and_reads_the_prefix_it_was_trained_on(tmp_path, obs_size):
    weights = random_weights(obs_size=obs_size, seed=5)
    policy = load_saved_policy(save_model(tmp_path / "earlier.zip", weights, metadata(obs_size=obs_size)))
    game = Game.new(Rules(max_turn_plays=3), seed=2)
    for _ in range(30):
        observation = observe(game, game.current_seat)
        prefix = {**observation, "observation": observation["observation"][:obs_size]}
        assert np.array_equal(policy.logits(observation["observation"]), policy.logits(prefix["observation"]))
        assert policy.act(observation) == policy.act(prefix)
        game.step(policy.act(observation))


def test_weights_that_do_not_match_the_metadata_are_refused(tmp_path):
    weights = random_weights()
    weights["action_net.bias"] = np.zeros(3, dtype=np.float32)
    with pytest.raises(SavedModelError, match="action_net.bias has shape"):
        save_model(tmp_path / "model.zip", weights, metadata())


def test_a_stable_baselines_archive_is_refused_with_advice(tmp_path):
    path = tmp_path / "ppo.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", "{}")
        archive.writestr("policy.pth", b"")
    with pytest.raises(SavedModelError, match="Stable-Baselines3 archive"):
        load_saved_policy(path)


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(SavedModelError, match="no model file"):
        read_model(tmp_path / "absent.zip")


def test_load_policy_loads_a_model_file(tmp_path):
    from agents.loading import load_policy

    path = save_model(tmp_path / "model.zip", random_weights(), metadata())
    assert isinstance(load_policy(str(path)), NetworkPolicy)


def test_the_shipped_two_player_model_loads_and_plays():
    from agents.loading import load_policy

    policy = load_policy("agents/pretrained/ppo-2p.zip")
    assert policy.metadata["rules"]["num_players"] == 2 and policy.metadata["obs_size"] == 731  # an earlier layout
    game = Game.new(Rules(), seed=4)
    while not game.is_over and game.turn < 20:
        observation = observe(game, game.current_seat)
        game.step(policy.act(observation))


def table_only_weights(num_players: int) -> dict:
    """Weights of a network trained with ``network.inputs: table``: zero rows for every value a table of
    ``num_players`` seats never sets."""
    weights = random_weights()
    unread = np.setdiff1d(np.arange(OBS_SIZE), table_inputs(num_players))
    weights["policy_net.0.weight"][:, unread] = 0.0
    return weights


def test_a_table_only_model_for_two_players_refuses_a_larger_table_in_one_line(tmp_path):
    path = save_model(tmp_path / "two.zip", table_only_weights(2), metadata())
    policy = load_saved_policy(path)
    with pytest.raises(ValueError, match=f"the model {path} was trained for 2 players and reads only the seats of "
                                         "a 2-player table") as error:
        run_tournament([str(path), "greedy", "greedy"], Rules(num_players=3), games=2, seed=1)
    assert "\n" not in str(error.value)
    game = Game.new(Rules(num_players=4), seed=1)
    with pytest.raises(ValueError, match="does not play at a table of 4"):
        policy.act(observe(game, game.current_seat))
    game = Game.new(Rules(num_players=2), seed=1)
    assert policy.act(observe(game, game.current_seat)) in game.legal_actions()


def test_a_model_that_reads_every_seat_plays_at_every_table_size(tmp_path):
    policy = load_saved_policy(save_model(tmp_path / "all.zip", random_weights(), metadata()))
    for players in (2, 3, 6):
        policy.check_num_players(players)
        game = Game.new(Rules(num_players=players), seed=1)
        assert policy.act(observe(game, game.current_seat)) in game.legal_actions()
