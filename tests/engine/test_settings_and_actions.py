"""RULES.md settings (``Rules``) and "Action ids" (layout, descriptions, illegal actions)."""

from __future__ import annotations

import pytest

from skipbo_env import Game, IllegalActionError, Rules, describe_action
from skipbo_env.actions import (DISCARD_SOURCE, END_TURN, NUM_ACTIONS, STOCK_SOURCE, discard_action, hand_play_action,
                                play_action)
from skipbo_env.cards import CARDS_PER_DECK
from skipbo_env.rules import MAX_COUNTER, MAX_DECKS, MAX_STOCK_CARD_POINTS, MAX_WIN_POINTS
from tests.positions import position


def test_every_setting_has_its_rules_md_default():
    assert Rules().to_dict() == {
        "num_players": 2, "stock_size": 30, "decks": 1, "partners": False, "team_win": "both",
        "team_stock": "own", "exhausted_draw": "play_on", "max_turn_plays": 100, "max_turns": None, "win_points": 25,
        "stock_card_points": 5, "match_end": {"target": 500},
    }


def test_rules_round_trip_through_a_dict():
    rules = Rules(num_players=6, partners=True, team_win="either", team_stock="shared", decks=2,
                  exhausted_draw="draw", max_turn_plays=7, max_turns=50, match_end={"rounds": 3})
    assert Rules.from_dict(rules.to_dict()) == rules


@pytest.mark.parametrize("settings, message", [
    ({"num_players": 7}, r"num_players=7 is not allowed: use an integer from 2 to 6"),
    ({"num_players": 1}, r"num_players=1"),
    ({"num_players": 3, "partners": True}, r"partners=True needs 4 or 6 players"),
    ({"stock_size": 0}, r"stock_size=0 is not allowed: use an integer >= 1"),
    ({"decks": 0}, r"decks=0"),
    ({"team_win": "all", "partners": True, "num_players": 4}, r"team_win='all' is not allowed: use one of 'both', 'either'"),
    ({"team_stock": "pooled"}, r"team_stock='pooled' is not allowed"),
    ({"exhausted_draw": "stop"}, r"exhausted_draw='stop' is not allowed: use one of 'play_on', 'draw'"),
    ({"max_turns": 0}, r"max_turns=0"),
    ({"max_turn_plays": 0}, r"max_turn_plays=0 is not allowed: use an integer from 1 to 2147483647, or None for no limit"),
    ({"max_turn_plays": 2.5}, r"max_turn_plays=2.5 is not allowed"),
    ({"win_points": -1}, r"win_points=-1"),
    ({"match_end": {"target": 0}}, r"match_end"),
    ({"match_end": {"goal": 500}}, r'use \{"target": N\}'),
    ({"num_players": 2, "stock_size": 77}, r"stock_size=77 is too large for 2 players"),
    ({"decks": 201}, r"^decks=201 is not allowed: use an integer from 1 to 200$"),
    ({"win_points": 1_000_001}, r"^win_points=1000001 is not allowed: use an integer from 0 to 1000000$"),
    ({"stock_card_points": 10_001}, r"^stock_card_points=10001 is not allowed: use an integer from 0 to 10000$"),
    ({"max_turns": 2**31}, r"^max_turns=2147483648 is not allowed: use an integer from 1 to 2147483647, or None"),
    ({"max_turn_plays": 2**31}, r"^max_turn_plays=2147483648 is not allowed: use an integer from 1 to 2147483647"),
])
def test_invalid_settings_raise_value_error_naming_the_setting_and_what_is_allowed(settings, message):
    with pytest.raises(ValueError, match=message):
        Rules(**settings)


def test_unknown_setting_is_refused_with_the_list_of_settings():
    with pytest.raises(ValueError, match="unknown setting.*hand_size.*the settings are num_players"):
        Rules.from_dict({"hand_size": 6})


def test_more_decks_allow_longer_stockpiles():
    assert Rules(num_players=2, stock_size=77, decks=2).stock_size == 77


def test_the_largest_allowed_settings_are_accepted():
    rules = Rules(decks=MAX_DECKS, max_turns=MAX_COUNTER, max_turn_plays=MAX_COUNTER,
                  win_points=MAX_WIN_POINTS, stock_card_points=MAX_STOCK_CARD_POINTS)
    assert rules.deck_size == CARDS_PER_DECK * MAX_DECKS


# ---------------------------------------------------------------- Action ids
def test_action_id_layout():
    assert NUM_ACTIONS == 145
    assert hand_play_action(5, 0) == 16 and hand_play_action(13, 3) == 51
    assert play_action(13, 0) == 52 and play_action(17, 3) == 71 and play_action(22, 3) == 91
    assert discard_action(1, 0) == 92 and discard_action(13, 3) == 143 and END_TURN == 144


@pytest.mark.parametrize("action, text", [
    (16, "play hand 5 on building pile 1"),
    (49, "play hand SKIP-BO on building pile 2"),
    (54, "play stockpile top on building pile 3"),
    (61, "play discard pile 2 top on building pile 2"),
    (72, "play partner's stockpile top on building pile 1"),
    (91, "play partner's discard pile 4 top on building pile 4"),
    (92, "discard 1 onto discard pile 1"),
    (143, "discard SKIP-BO onto discard pile 4"),
    (144, "end turn (empty hand, nothing to draw)"),
])
def test_describe_action_reads_like_a_move(action, text):
    assert describe_action(action) == text


def test_describe_action_refuses_a_number_that_is_no_id():
    with pytest.raises(ValueError, match="use an integer from 0 to 144"):
        describe_action(145)


def test_an_illegal_action_says_what_it_means_and_why_and_leaves_the_game_unchanged():
    game = Game.from_dict(position(seats=[{"hand": [3, 9, 9, 9, 9], "stock": [4]}, {"stock": [4]}],
                                   building=[[1], [], [], []]), seed=0)
    before = game.to_dict()
    with pytest.raises(IllegalActionError, match=r"action 8 \(play hand 3 on building pile 1\) is not legal: "
                                                 r"building pile 1 needs a 2"):
        game.step(hand_play_action(3, 0))
    with pytest.raises(IllegalActionError, match="new building pile must use the lowest empty slot, building pile 2"):
        game.step(hand_play_action(9, 2))
    with pytest.raises(IllegalActionError, match="not an action id"):
        game.step(145)
    with pytest.raises(IllegalActionError, match="new discard pile must use the lowest empty slot"):
        game.step(discard_action(9, 2))
    assert game.to_dict() == before


def test_numpy_integer_actions_are_accepted():
    import numpy as np

    game = Game.new(Rules(), seed=0)
    game.step(np.int64(game.legal_actions()[0]))
    assert all(type(a) is int for a in game.record()["actions"])


def test_describe_action_accepts_numpy_integers_as_np_flatnonzero_returns_them():
    import numpy as np

    assert describe_action(np.flatnonzero(np.arange(145) == 116)[0]) == "discard 7 onto discard pile 1"


def test_a_misspelt_setting_is_a_value_error_naming_the_settings_and_the_closest():
    with pytest.raises(ValueError, match=r"unknown setting\(s\) 'stocksize' \(did you mean stock_size\?\); "
                                         r"the settings are num_players, stock_size"):
        Rules(stocksize=5)
    assert Rules(**{"num_players": 3, "stock_size": 5}).stock_size == 5


def test_every_play_source_is_a_kind_and_an_index_and_back():
    from skipbo_env.actions import NUM_SOURCES, SOURCE_KINDS, source_kind, source_of

    parts = [source_kind(source) for source in range(NUM_SOURCES)]
    assert [source_of(kind, index) for kind, index in parts] == list(range(NUM_SOURCES))
    assert {kind for kind, _ in parts} == set(SOURCE_KINDS)
    assert parts[12] == ("hand", 13) and parts[16] == ("discard", 2) and parts[18] == ("partner_stock", 0)


def test_a_move_in_words_names_its_cards_for_the_player_or_for_anyone():
    from skipbo_env.explain import move_words

    game = Game.from_dict(position(seats=[{"hand": [13, 5, 9, 9, 9], "stock": [12], "discards": [[3, 12], [], [], []]},
                                          {"stock": [4]}], building=[[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [], [], []]),
                          seed=0)
    assert move_words(game, play_action(STOCK_SOURCE, 0)) == "play the 12 from your stockpile on building pile 1 (completes it)"
    assert move_words(game, hand_play_action(13, 1), "You") == "You play a SKIP-BO as the 1 from your hand on building pile 2 (new pile)"
    assert move_words(game, play_action(DISCARD_SOURCE, 0), "seat 0 (greedy)", you=False) == (
        "seat 0 (greedy) plays the 12 from discard pile 1 on building pile 1 (completes it)")
    assert move_words(game, discard_action(9, 1), you=False) == "discard the 9 onto discard pile 2"
