"""RULES.md, "Partners" and "Scoring and matches" (the hand's points)."""

from __future__ import annotations

import pytest

from skipbo_env import Game, IllegalActionError, Rules
from skipbo_env.actions import (
    PARTNER_DISCARD_SOURCE,
    PARTNER_STOCK_SOURCE,
    STOCK_SOURCE,
    discard_action,
    play_action,
)
from tests.positions import position

PARTNERS = {"num_players": 4, "partners": True}


def four_seats(stocks, hands=None, discards=None):
    hands = hands or [[9] * 5, [], [], []]
    discards = discards or [[[], [], [], []]] * 4
    return [{"hand": h, "stock": s, "discards": d} for h, s, d in zip(hands, stocks, discards)]


def test_partners_sit_opposite_each_other():
    rules = Rules(num_players=6, partners=True)
    assert [rules.partner_of(seat) for seat in range(6)] == [3, 4, 5, 0, 1, 2]
    assert [rules.team_of(seat) for seat in range(6)] == [0, 1, 2, 0, 1, 2]


@pytest.mark.parametrize("players", [2, 3, 5])
def test_partners_needs_4_or_6_players(players):
    with pytest.raises(ValueError, match="partners=True needs 4 or 6 players"):
        Rules(num_players=players, partners=True)


def test_partners_play_from_the_partners_stockpile_top_and_discard_tops():
    seats = four_seats([[5], [5], [1], [5]], discards=[[[], [], [], []]] * 2 + [[[2], [], [], []]] + [[[], [], [], []]])
    game = Game.from_dict(position(rules=PARTNERS, seats=seats), seed=0)
    assert play_action(PARTNER_STOCK_SOURCE, 0) in game.legal_actions()
    game.step(play_action(PARTNER_STOCK_SOURCE, 0))
    game.step(play_action(PARTNER_DISCARD_SOURCE, 0))
    assert game.building[0] == [1, 2]


def test_partner_actions_are_illegal_in_singles():
    game = Game.from_dict(position(seats=[{"hand": [9] * 5, "stock": [1]}, {"stock": [1]}]), seed=0)
    with pytest.raises(IllegalActionError, match="only in partners games"):
        game.step(play_action(PARTNER_STOCK_SOURCE, 0))


def test_partners_discard_only_onto_their_own_piles():
    game = Game.from_dict(position(rules=PARTNERS, seats=four_seats([[5]] * 4)), seed=0)
    discards = [a for a in game.legal_actions() if 92 <= a < 144]
    assert discards == [discard_action(9, 0)]
    game.step(discard_action(9, 0))
    assert game.discards[0][0] == [9] and game.discards[2] == [[], [], [], []]


def test_team_win_both_needs_both_stockpiles_empty_and_an_empty_stock_keeps_playing():
    game = Game.from_dict(position(rules=PARTNERS, seats=four_seats([[1], [5], [7], [5]])), seed=0)
    game.step(play_action(STOCK_SOURCE, 0))
    assert not game.is_over and game.stocks[0] == []
    game.step(discard_action(9, 0))
    for _ in range(3):  # the others discard; seat 0 takes its turn again with an empty stockpile
        game.step(max(game.legal_actions()))
    assert game.current_seat == 0 and not game.is_over


def test_team_win_both_the_team_wins_when_its_second_stockpile_empties():
    seats = four_seats([[], [5], [2], [5]])
    game = Game.from_dict(position(rules=PARTNERS, seats=seats, building=[[1], [], [], []]), seed=0)
    game.step(play_action(PARTNER_STOCK_SOURCE, 0))
    assert game.outcome == "win" and game.winners == (0, 2)


def test_team_win_either_wins_as_soon_as_either_partner_empties():
    rules = {**PARTNERS, "team_win": "either"}
    game = Game.from_dict(position(rules=rules, seats=four_seats([[1], [5], [7, 7], [5]])), seed=0)
    game.step(play_action(STOCK_SOURCE, 0))
    assert game.outcome == "win" and game.winners == (0, 2)


def test_team_stock_shared_one_stockpile_per_team_played_as_the_own_stockpile():
    rules = {**PARTNERS, "team_stock": "shared"}
    game = Game.new(Rules(**rules), seed=3, dealer=3)
    state = game.to_dict()
    assert [len(seat["stock"]) for seat in state["seats"]] == [30, 30, 0, 0]
    assert game.stocks[0] is game.stocks[2]
    loaded = Game.from_dict(position(rules=rules, seats=four_seats([[2, 1], [5], [], []])), seed=0)
    assert play_action(PARTNER_STOCK_SOURCE, 0) not in loaded.legal_actions()
    loaded.step(play_action(STOCK_SOURCE, 0))
    loaded.step(play_action(STOCK_SOURCE, 0))
    assert loaded.outcome == "win" and loaded.winners == (0, 2)


def test_team_settings_need_partners():
    with pytest.raises(ValueError, match="team_stock='shared' needs partners=True"):
        Rules(team_stock="shared")


# ---------------------------------------------------------------- Scoring
def test_worked_example_three_players_others_hold_4_and_7_scores_80():
    seats = [{"hand": [9] * 5, "stock": [1]}, {"stock": [5] * 4}, {"stock": [6] * 7}]
    game = Game.from_dict(position(rules={"num_players": 3}, seats=seats), seed=0)
    game.step(play_action(STOCK_SOURCE, 0))
    assert game.points() == (80, 0, 0)


def test_worked_example_four_players_others_hold_11_4_and_20_scores_200():
    seats = [{"hand": [9] * 5, "stock": [1]}, {"stock": [5] * 11}, {"stock": [6] * 4}, {"stock": [7] * 10 + [8] * 10}]
    game = Game.from_dict(position(rules={"num_players": 4}, seats=seats), seed=0)
    game.step(play_action(STOCK_SOURCE, 0))
    assert game.points() == (200, 0, 0, 0)


def test_partners_each_winning_seat_is_shown_the_teams_points_from_the_other_teams_stockpiles():
    seats = four_seats([[], [5] * 3, [1], [6] * 2])
    game = Game.from_dict(position(rules=PARTNERS, seats=seats), seed=0)
    game.step(play_action(PARTNER_STOCK_SOURCE, 0))
    assert game.points() == (50, 0, 50, 0)


def test_win_points_and_stock_card_points_settings():
    seats = [{"hand": [9] * 5, "stock": [1]}, {"stock": [5] * 4}]
    game = Game.from_dict(position(rules={"win_points": 10, "stock_card_points": 1}, seats=seats), seed=0)
    game.step(play_action(STOCK_SOURCE, 0))
    assert game.points() == (14, 0)
