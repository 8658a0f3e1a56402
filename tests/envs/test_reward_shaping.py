"""Potential-based stockpile shaping (skipbo_env.envs.common): a signal every step, the same best policy."""

from __future__ import annotations

import numpy as np
import pytest

from agents import load_policy
from agents.batched.seating import batch_opponents
from skipbo_env import Game, Rules
from skipbo_env.envs.common import game_potential, stockpile_potential
from skipbo_env.envs.single_agent import SingleAgentEnv
from skipbo_env.envs.vec_env import SkipBoVecEnv

GAMMA = 0.9


def discounted(rewards: list[float]) -> float:
    return sum(GAMMA ** t * reward for t, reward in enumerate(rewards))


def test_the_potential_is_the_opponents_mean_stockpile_left_minus_ones_own_over_the_stock_size():
    assert stockpile_potential([3, 10, 4], 0, [0, 1, 2], 10) == pytest.approx((7 - 3) / 10)
    assert stockpile_potential([3, 10, 4, 8], 1, [0, 1, 0, 1], 10) == pytest.approx((3.5 - 10) / 10)


def test_a_finished_hand_has_potential_zero():
    game = Game.new(Rules(stock_size=5), seed=3)
    assert game_potential(game, 0) == pytest.approx(0.0)  # both stockpiles full
    game.outcome = "win"
    assert game_potential(game, 0) == 0.0


def test_vec_env_shaped_returns_of_a_hand_are_the_unshaped_ones_minus_the_first_potential():
    rules = Rules(stock_size=6)
    shaped = SkipBoVecEnv(rules, num_envs=8, opponents=batch_opponents("greedy"), seed=5, shaping="stockpile", gamma=GAMMA)
    plain = SkipBoVecEnv(rules, num_envs=8, opponents=batch_opponents("greedy"), seed=5)
    shaped.reset(), plain.reset()
    rng = np.random.default_rng(0)
    start = [game_potential(shaped.engine.to_game(row), int(shaped._learner[row])) for row in range(8)]
    paid = [[] for _ in range(8)]
    unpaid = [[] for _ in range(8)]
    hands = 0
    for _ in range(400):
        masks = shaped.action_masks()
        assert np.array_equal(masks, plain.action_masks())
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])
        _, rewards, dones, _ = shaped.step(actions)
        _, plain_rewards, plain_dones, _ = plain.step(actions)
        assert np.array_equal(dones, plain_dones)
        for row in range(8):
            paid[row].append(float(rewards[row]))
            unpaid[row].append(float(plain_rewards[row]))
            if dones[row]:
                assert discounted(paid[row]) == pytest.approx(discounted(unpaid[row]) - start[row], abs=1e-4)
                hands += 1
                paid[row], unpaid[row] = [], []
                start[row] = game_potential(shaped.engine.to_game(row), int(shaped._learner[row]))
    assert hands >= 8
    assert any(reward != 0 for rewards in paid for reward in rewards), "shaping paid nothing between results"


def test_single_agent_shaped_returns_of_a_hand_are_the_unshaped_ones_minus_the_first_potential():
    rules = Rules(stock_size=6)
    for seed in range(4):
        shaped = SingleAgentEnv(opponents=load_policy("greedy"), rules=rules, shaping="stockpile", gamma=GAMMA)
        plain = SingleAgentEnv(opponents=load_policy("greedy"), rules=rules)
        shaped.reset(seed=seed), plain.reset(seed=seed)
        first = game_potential(shaped.game, shaped.seat)
        rng = np.random.default_rng(seed)
        paid, unpaid, done = [], [], False
        while not done:
            action = int(rng.choice(np.flatnonzero(shaped.action_masks())))
            _, reward, terminated, truncated, _ = shaped.step(action)
            _, plain_reward, _, _, _ = plain.step(action)
            paid.append(reward), unpaid.append(plain_reward)
            done = terminated or truncated
        assert discounted(paid) == pytest.approx(discounted(unpaid) - first, abs=1e-9)


def test_an_unknown_shaping_is_refused_naming_the_allowed_ones():
    with pytest.raises(ValueError, match="'none', 'stockpile'"):
        SingleAgentEnv(opponents=load_policy("greedy"), shaping="stock")
    with pytest.raises(ValueError, match="gamma"):
        SkipBoVecEnv(Rules(), num_envs=2, opponents=batch_opponents("greedy"), shaping="stockpile", gamma=1.5)


def test_aec_shaped_returns_of_each_agent_are_the_unshaped_ones_minus_its_first_potential():
    from skipbo_env.envs.aec import raw_env

    rules = Rules(stock_size=6)
    for seed in range(3):
        shaped, plain = raw_env(rules=rules, shaping="stockpile", gamma=GAMMA), raw_env(rules=rules)
        shaped.reset(seed=seed), plain.reset(seed=seed)
        rng = np.random.default_rng(seed)
        paid: dict[str, list[float]] = {}
        first: dict[str, float] = {}
        while not any(shaped.terminations.values()) and not any(shaped.truncations.values()):
            agent = shaped.agent_selection
            if agent not in first:
                first[agent] = game_potential(shaped.game, shaped.agent_name_mapping[agent])
                paid[agent] = []
            action = int(rng.choice(np.flatnonzero(shaped.observe(agent)["action_mask"])))
            shaped.step(action), plain.step(action)
            if shaped.game.is_over:
                for done in paid:
                    paid[done].append(shaped.rewards[done])
            elif shaped.agent_selection in paid:
                paid[shaped.agent_selection].append(shaped.rewards[shaped.agent_selection])
        for agent, rewards in paid.items():
            unshaped = GAMMA ** (len(rewards) - 1) * plain.rewards[agent]
            assert discounted(rewards) == pytest.approx(unshaped - first[agent], abs=1e-9)
