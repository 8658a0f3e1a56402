"""GreedyBot and RandomBot opponents played by their kernel twins in SingleAgentEnv: the same episodes as in Python;
a class the registry does not give a kernel (a subclass of a kernel bot's included) is played in Python."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from agents import registry
from agents.batched import greedy, table
from agents.greedy import GreedyBot
from agents.random_bot import RandomBot
from skipbo_env import IllegalActionError, SingleAgentEnv
from skipbo_env.actions import END_TURN


class PythonGreedy(GreedyBot):
    """GreedyBot's moves, asked in Python (its own ``act`` has no kernel twin)."""

    def act(self, observation: dict) -> int:
        return GreedyBot.act(self, observation)


class PythonRandom(RandomBot):
    def act(self, observation: dict) -> int:
        return RandomBot.act(self, observation)


TABLES = [
    {"num_players": 2},
    {"num_players": 3, "random_seat": True},
    {"num_players": 4, "partners": True, "random_seat": True},
    {"num_players": 4, "partners": True, "team_stock": "shared", "team_win": "either"},
    {"num_players": 2, "stock_size": 5, "max_turn_plays": 3, "shaping": "stockpile"},
    {"num_players": 2, "exhausted_draw": "draw", "max_turns": 30, "reward": "score"},
]


def opponent_pairs(num_players: int, shared: bool):
    """(kernel-played opponents, the same bots asked in Python): one shared bot, or a greedy/random mix."""
    if shared:
        return GreedyBot(11), PythonGreedy(11)
    fast = [GreedyBot(k) if k % 2 else RandomBot(k) for k in range(num_players - 1)]
    slow = [PythonGreedy(k) if k % 2 else PythonRandom(k) for k in range(num_players - 1)]
    return fast, slow


def play_side_by_side(settings: dict, shared: bool, episodes: int = 8) -> int:
    """Random learner play in both environments; every result equal; returns the learner steps taken."""
    fast_bots, slow_bots = opponent_pairs(settings["num_players"], shared)
    fast, slow = SingleAgentEnv(opponents=fast_bots, **settings), SingleAgentEnv(opponents=slow_bots, **settings)
    assert fast._compiled is not None and slow._compiled is None
    rng = np.random.default_rng(3)
    steps = 0
    for episode in range(episodes):
        (first, info), (expected, expected_info) = fast.reset(seed=episode), slow.reset(seed=episode)
        assert np.array_equal(first, expected) and str(info) == str(expected_info)
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(fast.action_masks())))
            got, wanted = fast.step(action), slow.step(action)
            assert np.array_equal(got[0], wanted[0]) and got[1:4] == wanted[1:4] and str(got[4]) == str(wanted[4])
            done = got[2] or got[3]
            steps += 1
        assert fast.game.record() == slow.game.record() and fast.actions_taken == slow.game.actions_taken
        for bot, twin in zip(np.atleast_1d(fast_bots), np.atleast_1d(slow_bots)):  # left as Python leaves them
            assert bot.rng.bit_generator.state == twin.rng.bit_generator.state
    return steps


@pytest.mark.parametrize("settings", TABLES, ids=[",".join(f"{k}={v}" for k, v in s.items()) for s in TABLES])
@pytest.mark.parametrize("shared", [True, False], ids=["one-bot", "greedy-random-mix"])
def test_kernel_played_opponents_give_the_episodes_python_gives(settings, shared):
    assert play_side_by_side(settings, shared) > 40


def test_a_call_that_fills_its_room_for_moves_goes_on_in_the_next(monkeypatch):
    monkeypatch.setattr(table, "MOVES_PER_CALL", 1)
    assert play_side_by_side({"num_players": 4}, shared=False, episodes=4) > 20


def test_opponents_without_a_kernel_twin_play_in_python():
    class Lowest:
        def act(self, observation: dict) -> int:
            return int(np.flatnonzero(observation["action_mask"])[0])

    assert SingleAgentEnv(opponents=[GreedyBot(0), Lowest()], num_players=3)._compiled is None
    assert SingleAgentEnv(opponents=PythonGreedy(0))._compiled is None
    assert SingleAgentEnv(opponents=[GreedyBot(0), RandomBot(1)], num_players=3)._compiled is not None


def test_an_illegal_learner_action_leaves_the_kernel_played_hand_as_it_was():
    environment = SingleAgentEnv(opponents=GreedyBot(0), illegal_action="raise")
    environment.reset(seed=0)
    before = environment.game.to_dict()
    with pytest.raises(IllegalActionError, match="end turn"):
        environment.step(END_TURN)
    assert environment.game.to_dict() == before


def test_an_environment_pickled_in_mid_hand_plays_on_as_the_original():
    environment = SingleAgentEnv(opponents=GreedyBot(5), num_players=3)
    environment.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(10):
        environment.step(int(rng.choice(np.flatnonzero(environment.action_masks()))))
    twin = pickle.loads(pickle.dumps(environment))
    assert twin._compiled is not None
    done = False
    while not done:
        action = int(rng.choice(np.flatnonzero(environment.action_masks())))
        got, wanted = twin.step(action), environment.step(action)
        assert np.array_equal(got[0], wanted[0]) and got[1:4] == wanted[1:4]
        done = got[2] or got[3]
    assert twin.game.record() == environment.game.record()


def test_a_bot_with_its_own_reset_plays_in_python_and_is_reset_every_hand():
    class CountedGreedy(GreedyBot):
        resets = 0

        def reset(self, seed=None) -> None:
            CountedGreedy.resets += 1
            super().reset(seed)

    environment = SingleAgentEnv(opponents=CountedGreedy(0), num_players=3)
    assert environment._compiled is None
    environment.reset(seed=0)
    environment.reset(seed=1)
    assert CountedGreedy.resets == 4


class LastChoiceGreedy(GreedyBot):
    """GreedyBot with its own ``choose`` (the last option, no draw): ``act`` and ``reset`` are greedy's, the moves
    are not."""

    def choose(self, options) -> int:
        return int(options[-1])


class RenamedGreedy(GreedyBot):
    """GreedyBot under another name and nothing else (the registry test's ``EagerBot``)."""

    name = "renamed"


class Asked:
    """A bot asked ``act`` and ``reset`` in Python whatever its class (it offers no hook)."""

    def __init__(self, bot) -> None:
        self.bot = bot

    def act(self, observation: dict) -> int:
        return self.bot.act(observation)

    def reset(self, seed=None) -> None:
        self.bot.reset(seed)


def episodes(opponents, settings: dict, count: int = 6) -> list[dict]:
    """The records of ``count`` episodes against ``opponents``, the learner playing at random (episode ``k``:
    seed ``k``, its choices from ``default_rng(k)``)."""
    environment = SingleAgentEnv(opponents=opponents, **settings)
    records = []
    for episode in range(count):
        environment.reset(seed=episode)
        rng = np.random.default_rng(episode)
        done = False
        while not done:
            done = any(environment.step(int(rng.choice(np.flatnonzero(environment.action_masks()))))[2:4])
        records.append(environment.game.record())
    return records


@pytest.mark.parametrize("settings", TABLES[:3], ids=["2p", "3p", "4p-partners"])
def test_a_subclass_with_a_method_of_its_own_is_played_in_python_with_its_own_moves(settings):
    seats = settings["num_players"] - 1
    assert SingleAgentEnv(opponents=[LastChoiceGreedy(k) for k in range(seats)], **settings)._compiled is None
    played = episodes([LastChoiceGreedy(k) for k in range(seats)], settings)
    assert played == episodes([Asked(LastChoiceGreedy(k)) for k in range(seats)], settings)
    by_greedy = episodes([GreedyBot(k) for k in range(seats)], settings)  # what greedy's kernel would have played
    assert sum(mine != theirs for mine, theirs in zip(played, by_greedy)) == len(played)


def test_only_a_registry_line_gives_a_class_a_kernel(monkeypatch):
    settings = {"num_players": 3}
    opponents = [RenamedGreedy(1), RenamedGreedy(2)]
    assert registry.kernel_of(RenamedGreedy) is None and registry.kernel_of(GreedyBot) == greedy.__name__
    assert SingleAgentEnv(opponents=opponents, **settings)._compiled is None
    in_python = episodes(opponents, settings, count=3)
    line = registry.RegisteredBot("renamed", RenamedGreedy, kernel=greedy.__name__)
    monkeypatch.setattr(registry, "REGISTRY", (*registry.REGISTRY, line))
    assert registry.kernel_of(RenamedGreedy) == greedy.__name__
    assert SingleAgentEnv(opponents=opponents, **settings)._compiled is not None
    assert episodes(opponents, settings, count=3) == in_python
