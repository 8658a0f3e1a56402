"""Every hand ends (RULES.md, "A turn that never ends" and ``max_turns``), in both engines.

A policy that always takes the lowest legal id plays SKIP-BO cards round a completed pile and
the draw pile for ever; one that always takes the highest legal id never plays at all. Under
``max_turn_plays`` and the environments' ``max_turns=1000`` both finish every hand, on every
table size and variant: a turn holds at most ``max_turn_plays`` plays and one discard (or end
turn), so a hand takes at most ``max_turns * (max_turn_plays + 1)`` actions.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from skipbo_env import Game, Rules
from skipbo_env.actions import NUM_ACTIONS, is_play
from skipbo_env.envs.common import ENV_MAX_TURNS
from skipbo_env.vector import VectorGame
from skipbo_env.vector.layout import OUTCOME_NAMES

VARIANTS = {
    "2p": dict(stock_size=5),
    "2p-limit-3": dict(max_turn_plays=3),
    "3p-limit-3": dict(num_players=3, stock_size=8, max_turn_plays=3),
    "4p": dict(num_players=4, stock_size=5),
    "5p-exhausted-draw": dict(num_players=5, stock_size=4, exhausted_draw="draw"),
    "6p-limit-3": dict(num_players=6, stock_size=3, max_turn_plays=3),
    "4p-partners-both": dict(num_players=4, partners=True, stock_size=5, max_turn_plays=3),
    "6p-partners-either": dict(num_players=6, partners=True, team_win="either", stock_size=3),
    "4p-partners-shared": dict(num_players=4, partners=True, team_stock="shared", stock_size=5, max_turn_plays=3),
    "2p-two-decks": dict(decks=2, stock_size=10, max_turn_plays=3),
}


def lowest_legal_id(legal: list[int]) -> int:
    return legal[0]


def highest_legal_id(legal: list[int]) -> int:
    return legal[-1]


def play_out(game: Game, choose) -> int:
    """Play ``game`` to its end with ``choose(legal ids)``; returns the most plays made in one turn.

    Fails if the hand takes more actions than a turn limit and ``max_turns`` allow.
    """
    rules = game.rules
    bound = rules.max_turns * (rules.max_turn_plays + 1)
    most = 0
    for _ in range(bound):
        if game.is_over:
            return most
        action = choose(game.legal_actions())
        if is_play(action):
            most = max(most, game.plays_this_turn + 1)
        game.step(action)
    assert game.is_over, f"the hand did not end within {bound} actions"
    return most


@pytest.mark.parametrize("choose", [lowest_legal_id, highest_legal_id])
@pytest.mark.parametrize("name", list(VARIANTS))
def test_lowest_and_highest_legal_id_policies_finish_every_hand_in_the_rules_engine(name, choose):
    rules = Rules(**{"max_turns": ENV_MAX_TURNS, **VARIANTS[name]})
    for seed in range(3):
        game = Game.new(rules, seed=seed)
        most = play_out(game, choose)
        assert game.outcome in ("win", "draw", "truncated")
        assert most <= rules.max_turn_plays


def test_the_turn_play_limit_is_reached_by_the_lowest_legal_id_policy():
    rules = Rules(**{"max_turns": ENV_MAX_TURNS, **VARIANTS["2p-limit-3"]})
    assert max(play_out(Game.new(rules, seed=seed), lowest_legal_id) for seed in range(3)) == 3


@pytest.mark.parametrize("seed", [0, 2, 3])
def test_the_endless_two_player_turns_of_the_lowest_legal_id_policy_now_end(seed):
    """The hands of the report: with no limit a turn after about 100 turns runs past 19,000 plays."""
    game = Game.new(Rules(num_players=2), seed=seed)
    plays, limit_reached = 0, False
    while game.turn < 200 and not game.is_over:
        action = lowest_legal_id(game.legal_actions())
        plays = plays + 1 if is_play(action) else 0
        limit_reached |= plays == game.rules.max_turn_plays
        assert plays <= game.rules.max_turn_plays
        game.step(action)
    assert limit_reached


# ---------------------------------------------------------------------------------- batched engine
def batched_lowest_legal_id(masks: np.ndarray) -> np.ndarray:
    return np.argmax(masks, axis=1)


def batched_highest_legal_id(masks: np.ndarray) -> np.ndarray:
    return NUM_ACTIONS - 1 - np.argmax(masks[:, ::-1], axis=1)


def play_batch_until_every_row_ended(engine: VectorGame, choose) -> dict:
    """Step every row with ``choose(masks)`` until each has finished a hand; returns the outcomes seen.

    Fails if a hand takes more actions than a turn limit and ``max_turns`` allow, or a turn
    holds more plays than ``max_turn_plays``.
    """
    rules = engine.rules
    bound = rules.max_turns * (rules.max_turn_plays + 1)
    actions_in_hand = np.zeros(engine.batch_size, dtype=np.int64)
    ended = np.zeros(engine.batch_size, dtype=bool)
    outcomes: Counter = Counter()
    while not ended.all():
        finished = engine.step(choose(engine.action_mask))
        actions_in_hand += 1
        assert actions_in_hand.max() <= bound, f"a hand did not end within {bound} actions"
        assert engine.games["plays"].max() <= rules.max_turn_plays
        assert np.array_equal(finished.actions, actions_in_hand[finished.rows])
        outcomes.update(OUTCOME_NAMES[code] for code in finished.outcome.tolist())
        actions_in_hand[finished.rows] = 0
        ended[finished.rows] = True
    return outcomes


@pytest.mark.parametrize("choose", [batched_lowest_legal_id, batched_highest_legal_id])
@pytest.mark.parametrize("name", list(VARIANTS))
def test_lowest_and_highest_legal_id_policies_finish_every_hand_in_the_batched_engine(name, choose):
    rules = Rules(**{"max_turns": ENV_MAX_TURNS, **VARIANTS[name]})
    engine = VectorGame(rules, batch_size=16, seed=0, observations=False, threads=1)
    outcomes = play_batch_until_every_row_ended(engine, choose)
    assert sum(outcomes.values()) >= 16 and set(outcomes) <= {"win", "draw", "truncated"}


def test_the_endless_two_player_hands_end_in_the_batched_engine_under_the_environment_defaults():
    engine = VectorGame(Rules(num_players=2, max_turns=ENV_MAX_TURNS), batch_size=5, seed=0,
                        observations=False, threads=1)
    outcomes = play_batch_until_every_row_ended(engine, batched_lowest_legal_id)
    assert sum(outcomes.values()) >= 5 and outcomes["truncated"] > 0
