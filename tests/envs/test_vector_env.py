"""SkipBoVecEnv: the Stable-Baselines3 VecEnv over the batched engine."""

from __future__ import annotations

import numpy as np
import pytest

from skipbo_env import IllegalActionError, Rules
from skipbo_env.encoding import OBS_SIZE, encode_observation
from agents.batched.seating import batch_opponents
from skipbo_env.envs.vec_env import SkipBoVecEnv


def first_legal(observations, masks):
    return masks.argmax(axis=1)


@pytest.fixture(scope="module")
def env() -> SkipBoVecEnv:
    environment = SkipBoVecEnv(Rules(stock_size=5), num_envs=16, opponents=batch_opponents("greedy"), seed=11)
    environment.reset()
    return environment


def play_random(environment: SkipBoVecEnv, steps: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        masks = environment.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])
        yield environment.step(actions)


def test_reset_shows_the_learners_seat_as_the_rules_engine_encodes_it(env):
    obs = env.reset()
    assert obs.shape == (16, OBS_SIZE) and obs.dtype == np.float32
    for row in range(16):
        game = env.engine.to_game(row)
        assert game.current_seat == env._learner[row]
        assert np.array_equal(obs[row], encode_observation(game, game.current_seat))
        assert np.array_equal(env.action_masks()[row], game.action_mask())


def test_every_step_returns_to_the_learners_turn(env):
    for obs, _, _, _ in play_random(env, 30):
        assert np.array_equal(env.engine.current_seat, env._learner)
        assert env.observation_space.contains(obs[0])


def test_a_finished_hand_reports_its_reward_and_terminal_observation_and_is_dealt_again(env):
    ends = []
    for _, rewards, dones, infos in play_random(env, 150, seed=1):
        for row in np.flatnonzero(dones):
            ends.append((rewards[row], infos[row]))
    assert ends, "no hand ended"
    for reward, info in ends:
        assert info["terminal_observation"].shape == (OBS_SIZE,)
        if info["outcome"] == "win":
            assert reward == (1.0 if info["points"] > 0 else -1.0)
        else:
            assert reward == 0.0
        assert info["episode"]["r"] == reward and info["episode"]["l"] >= 1
    assert any(reward == -1.0 for reward, _ in ends)  # a random learner loses to greedy


def test_the_learner_rotates_through_the_seats_with_the_seed():
    environment = SkipBoVecEnv(Rules(num_players=3), num_envs=6, opponents=batch_opponents("random"), seed=0)
    environment.reset()
    assert sorted(set(environment._learner.tolist())) == [0, 1, 2]


def test_python_opponents_are_asked_once_per_round_for_a_batch_of_games():
    batches = []

    def counting(observations, masks):
        batches.append(len(masks))
        assert observations.shape == (len(masks), OBS_SIZE)
        return first_legal(observations, masks)

    environment = SkipBoVecEnv(Rules(num_players=4, partners=True, stock_size=5), num_envs=12,
                               opponents=batch_opponents([counting, "random", "greedy"]), seed=3)
    environment.reset()
    for _ in play_random(environment, 10):
        pass
    assert batches and max(batches) > 1


def test_an_illegal_learner_action_is_refused(env):
    env.reset()
    actions = env.action_masks().argmin(axis=1)  # a masked-out id in every game
    with pytest.raises(IllegalActionError, match="not legal in game 0"):
        env.step(actions)


def test_the_environment_takes_players_not_names():
    with pytest.raises(ValueError, match="not a set of batch players: build one with agents.batched.seating.batch_opponents"):
        SkipBoVecEnv(Rules(), num_envs=2, opponents="greedy")


def test_one_player_plays_every_other_seat():
    environment = SkipBoVecEnv(Rules(num_players=3), num_envs=4, opponents=batch_opponents("greedy"), seed=0)
    environment.reset()
    others = environment.seating.players[:, :3][environment.seating.players[:, :3] != -1]
    assert set(others.tolist()) == {0}


def test_bad_opponent_lists_and_seats_are_refused():
    with pytest.raises(ValueError, match="learner_seat"):
        SkipBoVecEnv(Rules(), num_envs=2, opponents=batch_opponents("greedy"), learner_seat=2)
    with pytest.raises(ValueError, match="unknown player 'oracle'"):
        batch_opponents("oracle")
    with pytest.raises(ValueError, match="the planner has no option 'depth'"):
        batch_opponents("planner:depth=true")


def test_maskable_ppo_trains_on_it_and_then_plays_as_a_frozen_opponent():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    environment = SkipBoVecEnv(Rules(stock_size=5), num_envs=8, opponents=batch_opponents("greedy"), seed=5)
    assert get_action_masks(environment).shape == (8, 145)
    model = MaskablePPO("MlpPolicy", environment, n_steps=16, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [32]})
    model.learn(256)
    against_snapshot = SkipBoVecEnv(Rules(stock_size=5), num_envs=8, opponents=batch_opponents(model), seed=6)
    against_snapshot.reset()
    for _ in play_random(against_snapshot, 5):
        pass


def test_without_rules_the_vector_env_truncates_hands_at_1000_turns():
    environment = SkipBoVecEnv(num_envs=2, opponents=batch_opponents("random"), seed=0, threads=1)
    assert environment.rules == Rules(max_turns=1000) and environment.engine.cfg.max_turns == 1000
    assert SkipBoVecEnv(Rules(), num_envs=2, opponents=batch_opponents("random"), threads=1).rules.max_turns is None
