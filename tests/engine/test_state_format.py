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


# ---------------------------------------------------------------- the loading checks, one per rule
WON = [{"hand": [9] * 4, "stock": []}, {"stock": [4]}]
PARTNERS = {"num_players": 4, "partners": True}


def four_seats(stocks, hand=(9, 9, 9, 9, 9)):
    return [{"hand": list(hand) if seat == 0 else [], "stock": stock} for seat, stock in enumerate(stocks)]


def test_loading_refuses_a_stockpile_larger_than_stock_size():
    state = position(rules={"stock_size": 3}, seats=[{"hand": [9] * 5, "stock": [4, 4, 4, 1]}, {"stock": [4]}])
    with pytest.raises(ValueError, match="seat 0's stockpile holds 4 cards, more than stock_size=3"):
        Game.from_dict(state)


def test_loading_refuses_plays_this_turn_above_max_turn_plays():
    state = position(rules={"max_turn_plays": 5}, seats=SEATS, plays_this_turn=6)
    with pytest.raises(ValueError, match="plays_this_turn=6 is above max_turn_plays=5"):
        Game.from_dict(state)
    assert Game.from_dict(position(rules={"max_turn_plays": 5}, seats=SEATS, plays_this_turn=5)).plays_this_turn == 5


def test_loading_refuses_turn_at_max_turns_in_a_running_hand():
    state = position(rules={"max_turns": 12}, seats=SEATS, turn=12)
    with pytest.raises(ValueError, match="turn=12 in a running hand: the hand is truncated when turn reaches max_turns=12"):
        Game.from_dict(state)
    assert Game.from_dict(position(rules={"max_turns": 12}, seats=SEATS, turn=12, outcome="truncated", winners=[]))


def test_loading_refuses_quiet_turns_at_the_number_of_seats_in_a_running_hand():
    with pytest.raises(ValueError, match="quiet_turns=2 with 2 seats"):
        Game.from_dict(position(seats=SEATS, quiet_turns=2))
    with pytest.raises(ValueError, match="quiet_turns=7 with 2 seats"):
        Game.from_dict(position(seats=SEATS, quiet_turns=7))
    finished = Game.from_dict(position(seats=SEATS, quiet_turns=2, outcome="draw", winners=[]))
    assert finished.outcome == "draw" and finished.points() == (0, 0)


def test_loading_refuses_truncated_without_max_turns():
    with pytest.raises(ValueError, match="outcome='truncated' needs max_turns"):
        Game.from_dict(position(seats=SEATS, turn=12, outcome="truncated", winners=[]))


def test_loading_refuses_truncated_before_max_turns_is_reached():
    state = position(rules={"max_turns": 20}, seats=SEATS, turn=12, outcome="truncated", winners=[])
    with pytest.raises(ValueError, match="outcome='truncated' at turn=12: a hand is truncated when turn reaches max_turns=20"):
        Game.from_dict(state)


def test_loading_refuses_a_singles_winner_whose_stockpile_is_not_empty():
    with pytest.raises(ValueError, match=r"winners=\[1\], but seat 1 did not meet the winning condition"):
        Game.from_dict(position(seats=WON, outcome="win", winners=[1]))
    assert Game.from_dict(position(seats=WON, outcome="win", winners=[0])).points() == (30, 0)


def test_loading_refuses_a_singles_win_by_more_than_one_seat():
    with pytest.raises(ValueError, match="a singles hand is won by one seat"):
        Game.from_dict(position(seats=WON, outcome="win", winners=[0, 1]))


def test_loading_refuses_a_partners_win_that_names_one_seat_of_a_team():
    state = position(rules=PARTNERS, seats=four_seats([[], [4], [], [4]]), outcome="win", winners=[0])
    with pytest.raises(ValueError, match="a partners hand is won by both seats of one team"):
        Game.from_dict(state)
    assert Game.from_dict(position(rules=PARTNERS, seats=four_seats([[], [4], [], [4]]), outcome="win",
                                   winners=[0, 2])).points() == (35, 0, 35, 0)


def test_loading_refuses_a_partners_team_whose_stockpiles_are_not_both_empty():
    state = position(rules=PARTNERS, seats=four_seats([[], [4], [7], [4]]), outcome="win", winners=[0, 2])
    with pytest.raises(ValueError, match="seats 0 and 2 did not meet the winning condition .*both stockpiles"):
        Game.from_dict(state)


def test_loading_refuses_a_team_win_either_team_with_neither_stockpile_empty():
    rules = {**PARTNERS, "team_win": "either"}
    state = position(rules=rules, seats=four_seats([[5], [], [7], [4]]), outcome="win", winners=[0, 2])
    with pytest.raises(ValueError, match="seats 0 and 2 did not meet the winning condition .*either stockpile"):
        Game.from_dict(state)
    state = position(rules=rules, seats=four_seats([[5], [4], [], [4]]), outcome="win", winners=[0, 2])
    assert Game.from_dict(state).winners == (0, 2)


def test_loading_refuses_a_shared_stockpile_team_win_while_the_team_stockpile_holds_cards():
    rules = {**PARTNERS, "team_stock": "shared"}
    state = position(rules=rules, seats=four_seats([[4], [5], [], []]), outcome="win", winners=[1, 3])
    with pytest.raises(ValueError, match="seats 1 and 3 did not meet the winning condition .*shared stockpile"):
        Game.from_dict(state)


def test_loading_refuses_a_winner_listed_twice():
    with pytest.raises(ValueError, match=r"winners=\[0, 0\] lists a seat twice"):
        Game.from_dict(position(seats=WON, outcome="win", winners=[0, 0]))


def test_loading_refuses_a_drawn_or_truncated_hand_that_was_won():
    with pytest.raises(ValueError, match="outcome='draw', but seat 0 met the winning condition"):
        Game.from_dict(position(seats=WON, outcome="draw", winners=[]))
    with pytest.raises(ValueError, match="outcome='truncated', but seat 0 met the winning condition"):
        Game.from_dict(position(rules={"max_turns": 5}, seats=WON, turn=5, outcome="truncated", winners=[]))


def test_loading_refuses_winners_without_an_outcome():
    with pytest.raises(ValueError, match="winners are listed but the state has no outcome"):
        Game.from_dict(position(seats=SEATS, winners=[]))


def test_loading_refuses_an_outcome_that_is_not_one_of_the_three():
    with pytest.raises(ValueError, match="outcome=None is not allowed"):
        Game.from_dict(position(seats=SEATS, outcome=None))


@pytest.mark.parametrize("key, value, message", [
    ("state", -1, r"rng.state.state=-1 is not allowed: use an integer from 0 to 3402"),
    ("state", 2**128, r"rng.state.state=3402.* is not allowed"),
    ("inc", 2**200, r"rng.state.inc=1606.* is not allowed"),
    ("state", 12345.0, r"rng.state.state=12345.0 is not allowed"),
    ("state", True, r"rng.state.state=True is not allowed"),
    ("inc", "7", r"rng.state.inc='7' is not allowed"),
    ("inc", 8, r"rng.state.inc=8 is even; a PCG64 increment is always odd"),
])
def test_loading_refuses_a_generator_state_pcg64_cannot_be_in(key, value, message):
    state = Game.new(Rules(), seed=2).to_dict()
    state["rng"]["state"][key] = value
    with pytest.raises(ValueError, match=message):
        Game.from_dict(state)


@pytest.mark.parametrize("key, value", [("has_uint32", 2), ("has_uint32", True), ("uinteger", 2**32),
                                        ("uinteger", -1), ("uinteger", None)])
def test_loading_refuses_a_generator_state_with_a_bad_buffered_word(key, value):
    state = Game.new(Rules(), seed=2).to_dict()
    state["rng"][key] = value
    with pytest.raises(ValueError, match=f"rng.{key}=.* is not allowed"):
        Game.from_dict(state)


def test_loading_checks_the_generator_state_even_when_a_seed_is_given():
    state = Game.new(Rules(), seed=2).to_dict()
    state["rng"]["state"]["state"] = -1
    with pytest.raises(ValueError, match="rng.state.state=-1"):
        Game.from_dict(state, seed=5)


@pytest.mark.parametrize("key, value", [("turn", 0.0), ("turn", True), ("current_seat", 0.0),
                                        ("dealer", False), ("plays_this_turn", "0"), ("quiet_turns", None)])
def test_booleans_and_floats_are_not_integers_in_a_state(key, value):
    with pytest.raises(ValueError, match=f"{key}=.* is out of range"):
        Game.from_dict(broken(**{key: value}))


def test_a_card_that_is_a_float_is_not_a_card():
    with pytest.raises(ValueError, match="seat 0's hand holds 9.0, which is not a card"):
        Game.from_dict(broken(seats__0__hand=[5, 9, 9, 9, 9.0]))


def deeply_nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("path", ["seats__0__hand", "turn", "rules", "rng", "notes"])
def test_a_deeply_nested_state_is_refused_with_value_error(path):
    with pytest.raises(ValueError, match="the state nests deeper than 16 levels"):
        Game.from_dict(broken(**{path: deeply_nested(100_000)}))


@pytest.mark.parametrize("value, message", [
    ({1, 2}, "holds {1, 2}, a set, which is not a JSON value"),
    ((1, 2), "holds (1, 2), a tuple"),
    ({1: "a"}, "has the key 1: JSON object keys are strings"),
    (2**300, "holds an integer of 301 bits"),
])
def test_a_state_that_is_not_plain_json_is_refused(value, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Game.from_dict(broken(notes=value))


@pytest.mark.parametrize("path", ["turn", "phase", "outcome", "rules__num_players", "rules__team_win",
                                  "rules__match_end", "seats__0__hand__0", "format"])
def test_a_refusal_quotes_only_a_short_excerpt_of_the_input(path):
    with pytest.raises(ValueError) as refused:
        Game.from_dict(broken(**{path: [[7] * 10_000] * 50}))
    assert len(str(refused.value)) < 200 and "\n" not in str(refused.value)


def test_loading_refuses_a_seed_that_is_not_a_non_negative_integer():
    for seed in (1.5, -1, True, "3"):
        with pytest.raises(ValueError, match="seed=.* is not allowed"):
            Game.from_dict(position(seats=SEATS), seed=seed)


# ---------------------------------------------------------------- records
@pytest.mark.parametrize("key", ["seed", "rules", "dealer", "actions"])
def test_a_record_missing_a_key_is_refused(key):
    record = random_midgame(seed=1, steps=5).record()
    del record[key]
    with pytest.raises(ValueError, match=f"game record lacks {key}"):
        Game.replay(record)


def test_a_record_from_a_start_state_needs_the_start():
    record = Game.from_dict(position(seats=SEATS), seed=0).record()
    del record["start"]
    with pytest.raises(ValueError, match="game record lacks rules, dealer"):
        Game.replay(record)


@pytest.mark.parametrize("action", [3.0, True, "3", None, [3], -1])
def test_a_record_action_that_is_not_an_integer_id_is_refused(action):
    game = random_midgame(seed=1, steps=5)
    record = game.record()
    record["actions"][2] = action
    with pytest.raises(ValueError, match="game record action #2 does not replay: .* is not an action id"):
        Game.replay(record)


@pytest.mark.parametrize("key, value, message", [
    ("seed", 1.5, "the game record's seed=1.5 is not allowed"),
    ("seed", None, "the game record's seed=None is not allowed"),
    ("seed", -3, "the game record's seed=-3 is not allowed"),
    ("dealer", True, "the game record's dealer=True is not allowed"),
    ("dealer", 2, "dealer=2 is not a seat"),
    ("actions", {"0": 3}, "actions must be a list of action ids"),
    ("rules", [2], "rules must be a mapping of settings"),
    ("rules", {"num_players": 2.0}, "num_players=2.0 is not allowed"),
    ("format", None, "not a game record"),
])
def test_a_record_with_a_wrong_type_is_refused(key, value, message):
    record = random_midgame(seed=1, steps=5).record()
    record[key] = value
    with pytest.raises(ValueError, match=message):
        Game.replay(record)


def test_a_deeply_nested_record_is_refused_with_value_error():
    record = random_midgame(seed=1, steps=5).record()
    record["actions"].append(deeply_nested(100_000))
    with pytest.raises(ValueError, match="the game record nests deeper than 16 levels"):
        Game.replay(record)


def test_a_card_count_refusal_names_three_values_and_counts_the_rest():
    state = position(seats=SEATS)
    state["rules"]["decks"] = 200
    with pytest.raises(ValueError, match=r"12 x 3 \(the deck has 2400\); and 10 more values$"):
        Game.from_dict(state)
