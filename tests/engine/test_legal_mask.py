"""Game.legal_mask: one byte per action id, exactly the legal ids, the one answer step checks."""

from __future__ import annotations

import numpy as np
import pytest

from skipbo_env import Game, IllegalActionError, Rules
from skipbo_env.actions import NUM_ACTIONS, hand_play_action
from tests.positions import position


@pytest.mark.parametrize("table", [{"num_players": 2}, {"num_players": 4, "partners": True},
                                   {"num_players": 6, "partners": True, "team_stock": "shared"},
                                   {"num_players": 3, "max_turn_plays": 2}], ids=str)
def test_the_legal_mask_marks_exactly_the_legal_ids_and_nothing_once_the_hand_is_over(table):
    rng = np.random.default_rng(1)
    for seed in range(3):
        game = Game.new(Rules(**table, max_turns=200), seed=seed)
        while True:
            mask = game.legal_mask()
            assert len(mask) == NUM_ACTIONS and set(mask) <= {0, 1}
            assert [action for action in range(NUM_ACTIONS) if mask[action]] == game.legal_actions()
            assert game.action_mask().tolist() == [bool(byte) for byte in mask]
            if game.is_over:
                assert not any(mask)
                break
            game.step(int(rng.choice(game.legal_actions())))


def test_step_checks_an_id_of_any_integer_type_against_the_mask_and_refuses_the_rest():
    game = Game.from_dict(position(seats=[{"hand": [1, 9, 9, 9, 9], "stock": [4]}, {"stock": [4]}]), seed=0)
    before = game.to_dict()
    for refused in (True, -1, NUM_ACTIONS, hand_play_action(9, 0), 2.5, "0"):
        with pytest.raises(IllegalActionError):
            game.step(refused)
    assert game.to_dict() == before
    game.step(np.int8(hand_play_action(1, 0)))
    assert game.building[0] == [1] and game.record()["actions"] == [hand_play_action(1, 0)]
