"""The single-agent Gymnasium wrapper: API checkers, the learner's point of view, opponents, rewards, MaskablePPO."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from skipbo_env import IllegalActionError, SingleAgentEnv, decode_observation
from skipbo_env.actions import END_TURN, FIRST_DISCARD, discard_action, play_action
from agents.environments import single_agent_env
from skipbo_env.envs.single_agent import ENV_ID
from tests.positions import position

STOCK_TO_FIRST_PILE = play_action(13, 0)


class StockFirst:
    """Plays its stockpile top when it can, else the lowest legal id; counts its resets."""

    def __init__(self) -> None:
        self.reset_seeds: list[int] = []

    def reset(self, seed: int) -> None:
        self.reset_seeds.append(seed)

    def act(self, observation: dict) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        stock_plays = [a for a in legal if 52 <= a < 56]
        return int(stock_plays[0] if stock_plays else legal[0])


class Illegal:
    def act(self, observation: dict) -> int:
        return END_TURN


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("settings", [{}, {"num_players": 4, "partners": True, "random_seat": True},
                                      {"num_players": 3, "stock_size": 10, "reward": "score"}])
def test_gymnasium_and_sb3_checkers_pass(settings):
    gymnasium_check_env(single_agent_env(**settings))
    sb3_check_env(single_agent_env(**settings))


def test_gymnasium_make_builds_it_with_every_render_mode():
    environment = gymnasium.make(ENV_ID, render_mode="ansi", opponents="random", num_players=3)
    gymnasium_check_env(environment.unwrapped)
    environment.reset(seed=0)
    assert "hand of player_0" in environment.render()
    assert environment.get_wrapper_attr("action_masks")().any()


def learner_episode(environment, seed: int, rng: np.random.Generator):
    """Yield (observation, info, action_masks) before every learner action of one random episode."""
    observation, info = environment.reset(seed=seed)
    while True:
        masks = environment.action_masks()
        yield observation, info, masks
        legal = np.flatnonzero(masks)
        observation, reward, terminated, truncated, info = environment.step(int(legal[rng.integers(len(legal))]))
        if terminated or truncated:
            yield observation, info, environment.action_masks()
            return


@pytest.mark.parametrize("settings", [{"num_players": 2}, {"num_players": 5, "random_seat": True},
                                      {"num_players": 6, "partners": True, "seat": 4}])
def test_every_observation_is_the_learners_own_turn(settings):
    environment = single_agent_env(opponents="random", **settings)
    rng = np.random.default_rng(0)
    decisions = 0
    for seed in range(6):
        for observation, info, masks in learner_episode(environment, seed, rng):
            view = decode_observation(observation)
            game = environment.game
            if game.is_over:
                assert not masks.any() and view["to_act"] is None
                continue
            decisions += 1
            assert game.current_seat == environment.seat == info["seat"]
            assert view["to_act"] == 0 and len(view["hand"]) == game.hand_sizes[environment.seat]
            assert np.flatnonzero(masks).tolist() == game.legal_actions()
            assert np.array_equal(info["action_mask"], masks.astype(np.int8))
    assert decisions > 40


@pytest.mark.parametrize("opponents", ["greedy", "random"])
def test_every_step_gives_new_infos_and_arrays_that_later_steps_leave_alone(opponents):
    environment = single_agent_env(opponents=opponents, num_players=3)
    given = []
    for observation, info, masks in learner_episode(environment, 2, np.random.default_rng(1)):
        assert list(info) == ["seat", "action_mask", "illegal_action", "outcome", "won", "points", "winners"]
        then = (observation.copy(), {**info, "action_mask": info["action_mask"].copy()}, masks.copy())
        if given:  # the learner writes over what the last step gave it: this step's are left as they were
            observation_before, info_before, masks_before = given[-1]
            observation_before[:], masks_before[:] = -1.0, False
            info_before["action_mask"][:], info_before["outcome"] = 7, "scribbled"
        assert np.array_equal(observation, then[0]) and np.array_equal(masks, then[2])
        assert np.array_equal(info["action_mask"], then[1]["action_mask"])
        assert {**info, "action_mask": None} == {**then[1], "action_mask": None}
        given.append((observation, info, masks))
    assert len(given) > 5
    assert [info["outcome"] for _, info, _ in given[:-2]] == ["scribbled"] * (len(given) - 2)


def test_the_opponents_play_a_whole_round_after_the_learners_discard():
    environment = single_agent_env(opponents="random", num_players=4)
    environment.reset(seed=5)
    turn = environment.game.turn
    legal = np.flatnonzero(environment.action_masks())
    environment.step(int(legal[legal >= FIRST_DISCARD][0]))
    assert environment.game.is_over or environment.game.turn == turn + 4


def test_random_seat_is_drawn_from_the_environments_generator():
    environment = single_agent_env(num_players=6, random_seat=True)
    seats = {environment.reset(seed=seed)[1]["seat"] for seed in range(30)}
    assert len(seats) > 3
    again = single_agent_env(num_players=6, random_seat=True)
    assert [again.reset(seed=s)[1]["seat"] for s in range(5)] == [environment.reset(seed=s)[1]["seat"] for s in range(5)]


def test_the_same_seed_and_actions_give_the_same_episode():
    runs = []
    for _ in range(2):
        environment = single_agent_env(opponents=["random", "greedy"], num_players=3)
        rng = np.random.default_rng(1)
        runs.append([obs for obs, _, _ in learner_episode(environment, 9, rng)])
    assert len(runs[0]) == len(runs[1]) and all(np.array_equal(a, b) for a, b in zip(*runs))


def test_opponents_are_reset_with_seeds_from_the_generator_every_hand():
    opponent = StockFirst()
    environment = single_agent_env(opponents=opponent)
    environment.reset(seed=0)
    environment.reset()
    assert len(opponent.reset_seeds) == 2 and opponent.reset_seeds[0] != opponent.reset_seeds[1]


def learner_wins_position():
    return position(seats=[{"hand": [7, 7, 8, 9, 10], "stock": [1]}, {"stock": [12] * 4}], current_seat=0)


def opponent_wins_position():
    return position(seats=[{"hand": [7, 7, 8, 9, 10], "stock": [12] * 4}, {"stock": [1]}], current_seat=0)


@pytest.mark.parametrize("reward, expected", [("win", 1.0), ("score", 45 / 500)])
def test_the_learner_is_paid_for_its_win(reward, expected):
    environment = single_agent_env(opponents=StockFirst(), reward=reward)
    environment.reset(seed=0, options={"state": learner_wins_position()})
    _, paid, terminated, truncated, info = environment.step(STOCK_TO_FIRST_PILE)
    assert (paid, terminated, truncated) == (pytest.approx(expected), True, False)
    assert info["outcome"] == "win" and info["winners"] == (True, False) and info["points"] == 45


def test_the_learner_loses_when_an_opponent_wins_on_its_turn():
    environment = single_agent_env(opponents=StockFirst())
    environment.reset(seed=0, options={"state": opponent_wins_position()})
    _, paid, terminated, _, info = environment.step(discard_action(7, 0))
    assert (paid, terminated, info["winners"]) == (-1.0, True, (False, True))


def test_max_turns_truncates_with_no_reward():
    environment = single_agent_env(max_turns=4)
    endings = [info for _, info, _ in learner_episode(environment, 3, np.random.default_rng(3))][-1:]
    assert endings[0]["outcome"] == "truncated"
    environment.reset(seed=3)
    while True:
        legal = np.flatnonzero(environment.action_masks())
        _, paid, terminated, truncated, _ = environment.step(int(legal[-1]))
        if terminated or truncated:
            break
    assert (paid, terminated, truncated) == (0.0, False, True)


def test_an_illegal_action_ends_the_episode_or_raises():
    environment = single_agent_env()
    environment.reset(seed=0)
    before = environment.game.to_dict()
    _, paid, terminated, truncated, info = environment.step(END_TURN)
    assert (paid, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    assert environment.game.to_dict() == before and not environment.action_masks().any()
    with pytest.raises(RuntimeError, match="call reset"):
        environment.step(0)
    strict = single_agent_env(illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError, match="end turn"):
        strict.step(END_TURN)


def test_an_opponents_illegal_action_names_its_seat():
    environment = single_agent_env(opponents=Illegal(), num_players=3)
    with pytest.raises(IllegalActionError, match="opponent at seat"):
        for seed in range(5):
            environment.reset(seed=seed)
            environment.step(int(np.flatnonzero(environment.action_masks())[-1]))


def test_policy_names_resolve_through_load_policy():
    from agents import GreedyBot, RandomBot

    environment = single_agent_env(opponents=["random", "greedy"], num_players=3)
    assert [type(p) for p in environment.opponents] == [RandomBot, GreedyBot]
    two = single_agent_env(opponents="random", num_players=3)
    assert two.opponents[0] is not two.opponents[1]


def test_bad_arguments_are_refused_with_what_is_allowed():
    with pytest.raises(ValueError, match="2 other seats"):
        single_agent_env(opponents=["random"], num_players=3)
    with pytest.raises(ValueError, match="seat=2 is not a seat"):
        single_agent_env(seat=2)
    with pytest.raises(ValueError, match="unknown setting.*stock_size"):
        single_agent_env(stocksize=10)
    with pytest.raises(ValueError, match="is not a policy"):
        single_agent_env(opponents=3)
    with pytest.raises(ValueError, match="illegal_action"):
        single_agent_env(illegal_action="ignore")


def test_maskable_ppo_trains_on_it_end_to_end():
    from sb3_contrib import MaskablePPO

    environment = single_agent_env(opponents="random", stock_size=10)
    model = MaskablePPO("MlpPolicy", environment, n_steps=512, batch_size=128, n_epochs=2, seed=0,
                        policy_kwargs={"net_arch": [64, 64]}, device="cpu")
    model.learn(total_timesteps=2048)
    observation, _ = environment.reset(seed=1)
    masks = environment.action_masks()
    action, _ = model.predict(observation, action_masks=masks, deterministic=True)
    assert masks[int(action)]


def test_a_rules_object_may_stand_for_the_settings():
    from skipbo_env import Rules

    environment = single_agent_env(rules=Rules(num_players=4, partners=True))
    assert len(environment.opponents) == 3 and environment.rules.partners
    with pytest.raises(ValueError, match="not a skipbo_env.Rules"):
        single_agent_env(rules={"num_players": 3})


def test_the_environment_truncates_hands_at_1000_turns_unless_told_otherwise():
    from skipbo_env import Rules

    assert single_agent_env().rules.max_turns == 1000
    assert single_agent_env(max_turns=None, max_turn_plays=5).rules == Rules(max_turns=None, max_turn_plays=5)


def test_the_environment_takes_policies_and_points_names_to_where_they_are_resolved():
    with pytest.raises(ValueError, match=r"agents.load_policy\('greedy'\)"):
        SingleAgentEnv(opponents="greedy")
    from agents import load_policy

    assert isinstance(SingleAgentEnv(opponents=load_policy("greedy")).opponents[0], type(load_policy("greedy")))
