"""CompiledHand, the kernels' hand behind raw_env and SingleAgentEnv, against the rules engine at every position."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from skipbo_env import Game, IllegalActionError, Rules, encode_observation
from skipbo_env.actions import END_TURN, FIRST_DISCARD, hand_play_action
from skipbo_env.encoding import action_mask
from skipbo_env.vector.single import OVER, CompiledHand
from tests.envs.test_aec_env import TABLE_IDS, TABLES
from tests.positions import position


def eager_action(legal: list[int], rng: np.random.Generator) -> int:
    """A building-pile play 9 times in 10 when there is one (long hands that complete and recycle piles)."""
    plays = [a for a in legal if a < FIRST_DISCARD]
    choices = plays if plays and rng.random() < 0.9 else legal
    return int(choices[rng.integers(len(choices))])


def assert_same_position(hand: CompiledHand, game: Game) -> None:
    """Every seat's observation and mask, the state (generator included), the result and the record."""
    for seat in range(game.num_players):
        observed = hand.observe(seat)
        assert np.array_equal(observed["observation"], encode_observation(game, seat)), seat
        assert np.array_equal(observed["action_mask"], action_mask(game, seat)), seat
        assert observed["observation"].dtype == np.float32 and observed["action_mask"].dtype == np.int8
    assert hand.status == (game.current_seat if game.outcome is None else hand.status)
    assert (hand.outcome, hand.winners, hand.points()) == (game.outcome, game.winners, game.points())
    assert hand.to_dict() == game.to_dict()
    assert hand.actions_taken == game.actions_taken


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
def test_a_dealt_hand_plays_as_the_rules_engine_after_every_action(table):
    rules = Rules.from_dict({"max_turns": 1000, **table})
    hand = CompiledHand(rules)
    rng = np.random.default_rng(7)
    actions = 0
    for seed in range(2):
        game = Game.new(rules, seed=seed)
        hand.deal(seed)
        while True:
            assert_same_position(hand, game)
            if game.is_over:
                break
            action = eager_action(game.legal_actions(), rng)
            status = hand.step(action)
            game.step(action)
            actions += 1
            assert status == (game.current_seat if game.outcome is None else OVER + ("win", "draw", "truncated")
                              .index(game.outcome) + 1)
        assert hand.game().record() == game.record()
    assert actions > 200


def test_a_loaded_position_keeps_its_generator_and_record():
    rules = Rules(num_players=2, stock_size=20)
    game = Game.new(rules, seed=3)
    rng = np.random.default_rng(3)
    for _ in range(120):
        game.step(eager_action(game.legal_actions(), rng))
    loaded = Game.from_dict(game.to_dict())
    hand = CompiledHand(rules)
    hand.load(loaded)
    assert_same_position(hand, loaded)
    while not loaded.is_over:
        action = eager_action(loaded.legal_actions(), rng)
        hand.step(action)
        loaded.step(action)
        assert hand.to_dict() == loaded.to_dict()
    assert hand.game().record() == loaded.record()


def test_an_illegal_action_raises_the_engines_reason_and_changes_nothing():
    hand = CompiledHand(Rules())
    hand.deal(0)
    before, game = hand.to_dict(), Game.new(Rules(), seed=0)
    for action in (END_TURN, -1, 145, 2**70):
        with pytest.raises(IllegalActionError) as raised:
            hand.step(action)
        with pytest.raises(IllegalActionError) as expected:
            game.step(action)
        assert str(raised.value) == str(expected.value)
    with pytest.raises(IllegalActionError, match="not an action id"):
        hand.step(1.5)
    assert hand.to_dict() == before and hand.actions_taken == 0


def test_numpy_ids_are_taken_as_ints():
    hand, game = CompiledHand(Rules()), Game.new(Rules(), seed=1)
    hand.deal(1)
    action = game.legal_actions()[0]
    hand.step(np.int64(action))
    game.step(action)
    assert hand.to_dict() == game.to_dict()


def test_its_game_is_a_copy_built_when_read_and_rebuilt_after_an_action():
    hand = CompiledHand(Rules())
    hand.deal(2)
    first = hand.game()
    assert hand.game() is first
    first.step(first.legal_actions()[0])  # stepping the copy leaves the hand as it was
    assert hand.game() is not first and hand.game().actions_taken == 0
    action = hand.game().legal_actions()[0]
    hand.step(action)
    assert hand.game().record()["actions"] == [action]


def test_a_hand_pickles_and_copies_with_its_mask_and_observation_working():
    hand = CompiledHand(Rules(num_players=3))
    hand.deal(4)
    for twin in (copy.deepcopy(hand), pickle.loads(pickle.dumps(hand))):
        game = twin.game()
        action = game.legal_actions()[0]
        twin.step(action)
        game.step(action)
        assert_same_position(twin, game)
    assert hand.actions_taken == 0


def test_observing_before_any_deal_is_refused():
    hand = CompiledHand(Rules())
    assert not hand.dealt
    with pytest.raises(RuntimeError, match="no hand has been dealt"):
        hand.observe(0)


def test_a_position_with_its_own_rules_plays_by_them():
    seats = [{"hand": [1, 2, 3, 4, 5], "stock": [9, 9]}, {"hand": [6, 6, 6, 6, 6], "stock": [9, 9]}]
    state = position(rules={"num_players": 2, "stock_size": 5, "max_turn_plays": 2}, seats=seats)
    game = Game.from_dict(state)
    hand = CompiledHand(game.rules)
    hand.load(game)
    for value in (1, 2):  # a 1 onto the first building pile, then a 2
        hand.step(hand_play_action(value, 0))
        game.step(hand_play_action(value, 0))
    assert_same_position(hand, game)
    assert not any(a < FIRST_DISCARD for a in np.flatnonzero(hand.mask(0)))  # the turn's two plays are made


def test_the_bool_mask_is_the_int8_mask_of_the_seat_to_act_and_empty_for_the_others():
    hand = CompiledHand(Rules(num_players=3))
    hand.deal(5)
    for seat in range(3):
        legal = hand.legal(seat)
        assert legal.dtype == np.bool_ and legal.shape == (145,)
        assert np.array_equal(legal, hand.mask(seat).astype(bool))
        assert legal.any() == (seat == hand.status)
    legal = hand.legal(hand.status)
    legal[:] = False  # a new array: the hand's own mask is left alone
    assert hand.legal(hand.status).any()
