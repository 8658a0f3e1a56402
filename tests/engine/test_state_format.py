"""RULES.md, "State format": saving, loading, and every check loading makes."""

from __future__ import annotations

import copy
import json

import pytest

from skipbo_env import Game, Rules
from skipbo_env.actions import STOCK_SOURCE, play_action
from tests.positions import position

SEATS = [{"hand": [5, 9, 9, 9, 9], "stock": [4, 1]}, {"stock": [4]}]


def random_midgame(seed: int = 0, steps: int = 60, **settings) -> Game:
    import numpy as np

    rng = np.random.default_rng(seed)
    game = Game.new(Rules(**settings), seed=seed)
    for _ in range(steps):
        if game.is_over:
            break
        legal = game.legal_actions()
        game.step(legal[int(rng.integers(len(legal)))])
    return game


def test_a_saved_game_is_plain_json_and_loads_back_to_the_same_state():
    game = random_midgame()
    state = json.loads(json.dumps(game.to_dict()))
    assert state["format"] == "skipbo-state/1"
    assert Game.from_dict(state).to_dict() == game.to_dict()


def test_a_saved_game_resumes_exactly_with_plays_this_turn_quiet_turns_and_future_shuffles():
    import numpy as np

    original = random_midgame(seed=3, steps=45, stock_size=5)
    resumed = Game.from_dict(json.loads(json.dumps(original.to_dict())))
    rng = np.random.default_rng(9)
    for _ in range(3000):
        if original.is_over:
            break
        legal = original.legal_actions()
        assert resumed.legal_actions() == legal
        action = legal[int(rng.integers(len(legal)))]
        original.step(action)
        resumed.step(action)
        assert resumed.to_dict() == original.to_dict()
    assert resumed.outcome == original.outcome


def test_the_last_element_of_every_pile_is_its_top():
    game = Game.from_dict(position(seats=SEATS), seed=0)
    game.step(play_action(STOCK_SOURCE, 0))
    assert game.to_dict()["seats"][0]["stock"] == [4] and game.building[0] == [1]


def test_a_state_in_phase_draw_performs_the_draw_on_loading():
    state = position(seats=[{"hand": [9], "stock": [4]}, {"stock": [4]}], phase="draw", draw_pile=[1, 2, 3, 5])
    assert sorted(Game.from_dict(state).to_dict()["seats"][0]["hand"]) == [1, 2, 3, 5, 9]


def test_a_finished_game_keeps_its_phase_and_adds_outcome_and_winners():
    game = Game.from_dict(position(seats=[{"hand": [9] * 5, "stock": [1]}, {"stock": [4]}]), seed=0)
    game.step(play_action(STOCK_SOURCE, 0))
    state = game.to_dict()
    assert state["outcome"] == "win" and state["winners"] == [0] and state["phase"] == "play"
    assert Game.from_dict(state).winners == (0,)


def broken(**changes):
    state = position(seats=SEATS)
    for path, value in changes.items():
        target = state
        keys = path.split("__")
        for key in keys[:-1]:
            target = target[int(key) if key.isdigit() else key]
        target[int(keys[-1]) if keys[-1].isdigit() else keys[-1]] = value
    return state


def with_extra_card(state):
    state["draw_pile"].append(5)
    return state


@pytest.mark.parametrize("state, message", [
    (with_extra_card(position(seats=SEATS)), r"cards do not match the deck.*13 x 5 \(the deck has 12\)"),
    (broken(seats=SEATS[:1]), "the state has 1 seats but rules.num_players is 2"),
    (broken(building=[[], [], []]), "exactly 4 building slots"),
    (broken(seats__1__discards=[[], [], []]), "seat 1 must have exactly 4 discard slots"),
    (position(seats=SEATS, building=[[1, 3], [], [], []]), "building pile 0 is out of sequence: card 2 is a 3"),
    (broken(seats__0__hand=[5, 9, 9, 9, 9, 9]), "hand holds 6 cards; a hand holds at most 5"),
    (broken(current_seat=2), r"current_seat=2 is out of range"),
    (broken(dealer=-1), r"dealer=-1 is out of range"),
    (broken(turn=-1), r"turn=-1 is out of range"),
    (broken(turn=1), r"current_seat=0 does not follow from dealer=1 and turn=1"),
    (position(seats=[{"stock": [4, 1]}, {"stock": [4]}]), "empty hand while a card could be drawn"),
    (position(seats=[SEATS[0], {"stock": []}]), "stockpile is empty in a running singles hand"),
    (broken(phase="discard"), "phase='discard' is not allowed"),
    (broken(format="other/2"), "unknown state format"),
    (broken(seats__0__hand=[5, 9, 9, 9, 14]), "which is not a card"),
    (broken(rules={"num_players": 2, "colour": "red"}), "unknown setting"),
    (broken(rng={"bit_generator": "MT19937"}), "rng is not a numpy PCG64 generator state"),
])
def test_loading_refuses_a_broken_state_naming_the_problem(state, message):
    with pytest.raises(ValueError, match=message):
        Game.from_dict(state)


def test_loading_refuses_a_building_pile_of_12_or_more():
    state = position(seats=SEATS, building=[list(range(1, 13)), [], [], []])
    with pytest.raises(ValueError, match="building pile 0 holds 12 cards"):
        Game.from_dict(state)


def test_loading_refuses_completed_cards_that_do_not_form_whole_piles_of_12():
    with pytest.raises(ValueError, match="do not form whole piles of 12"):
        Game.from_dict(position(seats=SEATS, completed=list(range(1, 12))))
    with pytest.raises(ValueError, match="do not form whole piles of 12"):
        Game.from_dict(position(seats=SEATS, completed=[2] * 12))
    assert Game.from_dict(position(seats=SEATS, completed=[1, 13, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13]), seed=0)


def test_loading_refuses_a_team_that_has_already_won():
    rules = {"num_players": 4, "partners": True}
    seats = [{"hand": [9] * 5, "stock": []}, {"stock": [4]}, {"stock": []}, {"stock": [4]}]
    with pytest.raises(ValueError, match="team 0 .* has already won"):
        Game.from_dict(position(rules=rules, seats=seats))


def test_loading_the_same_state_twice_gives_the_same_game():
    state = Game.new(Rules(), seed=4).to_dict()
    del state["rng"]
    first, second = Game.from_dict(copy.deepcopy(state)), Game.from_dict(copy.deepcopy(state))
    assert first.record() == second.record()


def test_a_game_record_replays_to_the_identical_game():
    game = random_midgame(seed=11, steps=40)
    record = json.loads(json.dumps(game.record()))
    assert Game.replay(record).to_dict() == game.to_dict()
    loaded = Game.from_dict(game.to_dict())
    loaded.step(loaded.legal_actions()[0])
    assert Game.replay(loaded.record()).to_dict() == loaded.to_dict()


def test_a_broken_record_is_refused():
    with pytest.raises(ValueError, match="not a game record"):
        Game.replay({"actions": []})
    record = random_midgame(seed=1, steps=5).record()
    record["actions"].append(145)
    with pytest.raises(ValueError, match="action #5 does not replay"):
        Game.replay(record)
