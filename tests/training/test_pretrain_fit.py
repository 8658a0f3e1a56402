"""Behaviour cloning's fit (training.sb3.pretrain.clone_teacher): the loss, and that it learns the teacher."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from skipbo_env import Rules
from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.encoding import OBS_SIZE
from training.sb3.pretrain import cloning_loss, clone_teacher, collect_teacher_games

RULES = Rules(stock_size=5, max_turns=1000)


def new_policy(seed: int = 0) -> MaskableActorCriticPolicy:
    torch.manual_seed(seed)
    return MaskableActorCriticPolicy(gym.spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32), gym.spaces.Discrete(NUM_ACTIONS),
                                     lambda _: 1e-3, net_arch={"pi": [64], "vf": [64]})


@pytest.fixture(scope="module")
def greedy_data():
    return collect_teacher_games("greedy", RULES, 30, seed=5, gamma=0.99)


def test_the_policy_loss_is_the_masked_distributions_negative_log_likelihood(greedy_data):
    policy = new_policy()
    batch = np.arange(256)
    with torch.no_grad():
        _, log_prob, _ = policy.evaluate_actions(torch.as_tensor(greedy_data.observations(batch)),
                                                 torch.as_tensor(greedy_data.actions[batch]),
                                                 action_masks=greedy_data.masks[batch])
        loss = cloning_loss(policy, greedy_data, batch, fit_value=False)
    assert loss.item() == pytest.approx(-log_prob.mean().item(), rel=1e-5)


def test_the_value_error_is_added_only_when_the_value_is_fitted(greedy_data):
    policy = new_policy()
    batch = np.arange(256)
    with torch.no_grad():
        values = policy.predict_values(torch.as_tensor(greedy_data.observations(batch))).squeeze(-1)
        error = torch.mean((values - torch.as_tensor(greedy_data.returns[batch])) ** 2).item()
        difference = (cloning_loss(policy, greedy_data, batch, True) - cloning_loss(policy, greedy_data, batch, False)).item()
    assert difference == pytest.approx(error, rel=1e-4)


def test_cloning_learns_to_agree_with_the_teacher_and_to_predict_the_result(greedy_data):
    untrained = clone_teacher(new_policy(), greedy_data, epochs=1, batch_size=len(greedy_data), learning_rate=1e-9,
                              fit_value=True, seed=0)
    trained = clone_teacher(new_policy(), greedy_data, epochs=6, batch_size=128, learning_rate=3e-3,
                            fit_value=True, seed=0)
    assert trained.agreement > untrained.agreement + 0.2
    assert trained.value_error < untrained.value_error
