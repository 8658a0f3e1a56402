"""A compiled hand's log of actions (written by the kernels) grows when full, in every path that writes it."""

from __future__ import annotations

import numpy as np

from skipbo_env import Game, Rules
from skipbo_env.vector import single
from skipbo_env.vector.single import CompiledHand
from tests.agents.test_kernel_opponents import play_side_by_side
from tests.envs.test_compiled_hand import assert_same_position, eager_action


def test_a_hand_stepped_past_its_log_grows_it_and_keeps_every_action(monkeypatch):
    monkeypatch.setattr(single, "LOG_ROOM", 2)
    rules = Rules(max_turns=200)
    hand, game = CompiledHand(rules), Game.new(rules, seed=4)
    hand.deal(4)
    rng = np.random.default_rng(1)
    while not game.is_over:
        action = eager_action(game.legal_actions(), rng)
        hand.step(action)
        game.step(action)
    assert_same_position(hand, game)
    assert len(hand.log) >= game.actions_taken > 64 and hand.game().record() == game.record()


def test_a_loaded_hand_gets_a_log_that_holds_its_record(monkeypatch):
    monkeypatch.setattr(single, "LOG_ROOM", 2)
    rules = Rules()
    game = Game.new(rules, seed=9)
    rng = np.random.default_rng(2)
    for _ in range(30):
        game.step(eager_action(game.legal_actions(), rng))
    hand = CompiledHand(rules)
    hand.load(game)
    assert len(hand.log) > 30 and hand.actions_taken == 30 and hand.game().record() == game.record()


def test_kernel_opponents_that_fill_the_log_grow_it_and_play_on(monkeypatch):
    monkeypatch.setattr(single, "LOG_ROOM", 1)
    assert play_side_by_side({"num_players": 3}, shared=False, episodes=3) > 20
