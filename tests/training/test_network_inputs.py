"""network.inputs: table: the networks read only what the table can set, and play as the whole vector would."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from agents.network import NetworkPolicy
from skipbo_env import Rules
from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.encoding import OBS_HIGH, OBS_LOW, OBS_SIZE, observe, table_inputs
from skipbo_env.game import Game
from training.ppo_sections import NetworkConfig
from training.sb3.network import policy_kwargs
from training.sb3.trainer import learner_weights


def observations_of_play(num_players: int, moves: int = 400, seed: int = 0) -> np.ndarray:
    """Observation vectors of every seat along a hand of random legal play."""
    rng = np.random.default_rng(seed)
    game = Game.new(Rules(num_players=num_players, stock_size=5), seed=seed)
    seen = []
    while not game.is_over and len(seen) < moves:
        seen.extend(observe(game, seat)["observation"] for seat in range(num_players))
        game.step(int(rng.choice(np.flatnonzero(observe(game, game.current_seat)["action_mask"]))))
    return np.array(seen)


@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 6])
def test_a_table_sets_no_value_outside_its_table_inputs(num_players):
    outside = np.setdiff1d(np.arange(OBS_SIZE), table_inputs(num_players))
    assert np.all(observations_of_play(num_players)[:, outside] == 0)


def test_six_seats_read_the_whole_observation_and_two_seats_less_than_half():
    assert len(table_inputs(6)) == OBS_SIZE
    assert len(table_inputs(2)) < OBS_SIZE / 2


def sb3_policy(inputs: str) -> MaskableActorCriticPolicy:
    torch.manual_seed(0)
    space = gym.spaces.Box(OBS_LOW, OBS_HIGH, dtype=np.float32)
    return MaskableActorCriticPolicy(space, gym.spaces.Discrete(NUM_ACTIONS), lambda _: 1e-3,
                                     **policy_kwargs(NetworkConfig(hidden=[32, 32], inputs=inputs), 2))


class Model:
    def __init__(self, policy):
        self.policy = policy


def test_the_table_network_has_a_first_layer_as_wide_as_the_table_inputs():
    assert sb3_policy("table").mlp_extractor.policy_net[0].in_features == len(table_inputs(2))
    assert sb3_policy("all").mlp_extractor.policy_net[0].in_features == OBS_SIZE


@pytest.mark.parametrize("inputs", ["all", "table"])
def test_the_exported_policy_gives_the_logits_of_the_trained_one(inputs):
    policy = sb3_policy(inputs)
    weights = learner_weights(Model(policy))
    assert weights["policy_net.0.weight"].shape == (32, OBS_SIZE)
    observations = observations_of_play(2, moves=100)
    with torch.no_grad():
        features = policy.extract_features(torch.as_tensor(observations), policy.pi_features_extractor)
        expected = policy.action_net(policy.mlp_extractor.forward_actor(features)).numpy()
    exported = NetworkPolicy(weights, [32, 32])
    np.testing.assert_allclose(exported.logits(observations), expected, rtol=1e-5, atol=1e-5)


def test_a_network_leaves_out_inputs_with_zero_weights_and_gives_the_same_logits():
    weights = learner_weights(Model(sb3_policy("all")))
    skipped = np.setdiff1d(np.arange(OBS_SIZE), table_inputs(2))
    weights["policy_net.0.weight"][:, skipped] = 0.0
    observations = observations_of_play(2, moves=100)
    first, *rest = [weights[f"policy_net.{i}.weight"] for i in (0, 2)]
    hidden = np.maximum(observations @ first.T + weights["policy_net.0.bias"], 0)
    hidden = np.maximum(hidden @ rest[0].T + weights["policy_net.2.bias"], 0)
    expected = hidden @ weights["action_net.weight"].T + weights["action_net.bias"]
    network = NetworkPolicy(weights, [32, 32])
    assert np.array_equal(network._inputs, table_inputs(2))
    np.testing.assert_allclose(network.logits(observations), expected, rtol=1e-5, atol=1e-5)
