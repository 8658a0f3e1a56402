"""One test per rule of RULES.md ("Cards" to "Winning a hand"), on small positions."""

from __future__ import annotations

import pytest

from skipbo_env import Game, IllegalActionError, Rules
from skipbo_env.actions import (
    DISCARD_SOURCE,
    END_TURN,
    STOCK_SOURCE,
    discard_action,
    hand_play_action,
    play_action,
)
from skipbo_env.cards import WILD
from tests.positions import all_cards, position

W = WILD


def load(**kwargs) -> Game:
    return Game.from_dict(position(**kwargs), seed=0)


# ---------------------------------------------------------------- Cards
def test_one_deck_is_162_cards_twelve_of_each_number_and_eighteen_skipbo():
    cards = all_cards(Game.new(Rules(), seed=1).to_dict())
    assert len(cards) == 162
    assert all(cards.count(v) == 12 for v in range(1, 13)) and cards.count(W) == 18


def test_decks_setting_multiplies_the_deck():
    cards = all_cards(Game.new(Rules(decks=2, num_players=6, stock_size=40), seed=1).to_dict())
    assert len(cards) == 324 and cards.count(W) == 36


# ---------------------------------------------------------------- Table
def test_turns_pass_to_the_left():
    game = Game.new(Rules(num_players=4), seed=3, dealer=1)
    seats = []
    while len(seats) < 6:
        seats.append(game.current_seat)
        turn = game.turn
        while game.turn == turn:
            game.step(max(game.legal_actions()))  # a discard ends the turn
    assert seats == [2, 3, 0, 1, 2, 3]


# ---------------------------------------------------------------- Deal
def test_the_seat_on_the_dealers_left_plays_first():
    for dealer in range(3):
        assert Game.new(Rules(num_players=3), seed=5, dealer=dealer).current_seat == (dealer + 1) % 3


def test_stockpiles_are_dealt_and_nobody_holds_a_hand_until_their_first_turn():
    game = Game.new(Rules(num_players=4), seed=2)
    state = game.to_dict()
    assert [len(seat["stock"]) for seat in state["seats"]] == [30] * 4
    assert [len(seat["hand"]) for seat in state["seats"]] == [5 if s == game.current_seat else 0 for s in range(4)]
    assert len(state["draw_pile"]) == 162 - 120 - 5


@pytest.mark.parametrize("players, size", [(2, 30), (3, 30), (4, 30), (5, 20), (6, 20)])
def test_default_stock_size_is_30_with_2_to_4_players_and_20_with_5_or_6(players, size):
    assert Rules(num_players=players).stock_size == size


def test_stock_size_setting_deals_that_many_cards():
    state = Game.new(Rules(stock_size=10), seed=0).to_dict()
    assert [len(seat["stock"]) for seat in state["seats"]] == [10, 10]


def test_a_stock_the_deck_cannot_deal_is_refused():
    Rules(num_players=6, stock_size=22)  # 132 + 30 = 162 cards: exactly the deck
    with pytest.raises(ValueError, match="stock_size=23 is too large.*stock_size <= 22"):
        Rules(num_players=6, stock_size=23)


def test_every_hand_starts_from_the_whole_deck_shuffled():
    first = Game.new(Rules(), seed=1).to_dict()
    second = Game.new(Rules(), seed=2).to_dict()
    assert first["seats"][0]["stock"] != second["seats"][0]["stock"]
    assert sorted(all_cards(first)) == sorted(all_cards(second))


# ---------------------------------------------------------------- A turn: draw
def test_draw_refills_the_hand_to_five_at_the_start_of_the_turn():
    state = position(seats=[{"hand": [7, 8], "stock": [9]}, {"stock": [9]}], phase="draw", draw_pile=[3, 4, 5])
    game = Game.from_dict(state)
    assert sorted(game.to_dict()["seats"][0]["hand"]) == [3, 4, 5, 7, 8]


def test_the_next_seat_draws_up_to_five_when_the_turn_passes():
    game = load(seats=[{"hand": [7], "stock": [9]}, {"hand": [10, 10], "stock": [9]}], draw_pile=[1, 2, 3])
    game.step(discard_action(7, 0))
    assert game.current_seat == 1
    assert sorted(game.to_dict()["seats"][1]["hand"]) == [1, 2, 3, 10, 10]


def test_an_empty_hand_mid_turn_draws_five_more_at_once_and_keeps_playing():
    game = load(seats=[{"hand": [1, 2], "stock": [9]}, {"stock": [9]}], draw_pile=[W, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    game.step(hand_play_action(1, 0))
    game.step(hand_play_action(2, 0))  # hand empty: draws 11, 10, 9, 8, 7
    assert sorted(game.to_dict()["seats"][0]["hand"]) == [7, 8, 9, 10, 11]
    assert game.current_seat == 0 and game.plays_this_turn == 2


def test_the_hand_can_empty_and_refill_several_times_in_one_turn():
    game = load(seats=[{"hand": [1, 2, 3, 4, 5], "stock": [12]}, {"stock": [12]}],
                draw_pile=[12, 12, 12, 12, 12, 10, 9, 8, 7, 6])
    for value in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10):
        game.step(hand_play_action(value, 0))
    assert sorted(game.to_dict()["seats"][0]["hand"]) == [12] * 5
    assert game.plays_this_turn == 10


# ---------------------------------------------------------------- A turn: play
def test_a_building_pile_starts_only_with_a_1_or_a_skipbo_card():
    game = load(seats=[{"hand": [1, 2, W, 5, 5], "stock": [3]}, {"stock": [3]}])
    plays = {a for a in game.legal_actions() if a < 92}
    assert plays == {hand_play_action(1, 0), hand_play_action(W, 0)}


def test_each_next_card_on_a_building_pile_is_one_higher():
    game = load(seats=[{"hand": [4, 5, 6, 8, 8], "stock": [3]}, {"stock": [3]}], building=[[1, 2, 3], [], [], []])
    assert {a for a in game.legal_actions() if a < 92} == {hand_play_action(4, 0)}
    game.step(hand_play_action(4, 0))
    game.step(hand_play_action(5, 0))
    game.step(hand_play_action(6, 0))
    assert game.building[0] == [1, 2, 3, 4, 5, 6] and hand_play_action(8, 0) not in game.legal_actions()


def test_wild_card_takes_the_value_the_pile_needs():
    game = load(seats=[{"hand": [W, 8, 2, 2, 2], "stock": [3]}, {"stock": [3]}],
                building=[[1, 2, 3, 4, 5, 6], [], [], []])
    game.step(hand_play_action(W, 0))  # the SKIP-BO card is the 7
    assert len(game.building[0]) == 7
    game.step(hand_play_action(8, 0))
    assert game.building[0] == [1, 2, 3, 4, 5, 6, W, 8]


def test_wild_card_can_start_a_pile_as_the_1():
    game = load(seats=[{"hand": [W, 2, 9, 9, 9], "stock": [3]}, {"stock": [3]}])
    game.step(hand_play_action(W, 0))
    assert hand_play_action(2, 0) in game.legal_actions()


def test_new_building_piles_use_the_lowest_empty_slot_and_at_most_four_exist():
    game = load(seats=[{"hand": [1, 1, 1, 1, 1], "stock": [3]}, {"stock": [3]}])
    for slot in range(4):
        assert [a for a in game.legal_actions() if a < 92] == [hand_play_action(1, slot)]
        game.step(hand_play_action(1, slot))
    assert all(len(pile) == 1 for pile in game.building)
    assert not [a for a in game.legal_actions() if a < 92]


def test_a_pile_reaching_12_is_set_aside_at_once_and_its_slot_is_free_again():
    game = load(seats=[{"hand": [12, 1, 5, 5, 5], "stock": [3]}, {"stock": [3]}],
                building=[[1, 2], list(range(1, 12)), [1], [1]])
    assert hand_play_action(1, 1) not in game.legal_actions()
    game.step(hand_play_action(12, 1))
    assert game.building[1] == [] and game.completed == list(range(1, 13))
    assert hand_play_action(1, 1) in game.legal_actions()


def test_the_next_stockpile_card_is_turned_up_after_the_top_is_played():
    game = load(seats=[{"hand": [9, 9, 9, 9, 9], "stock": [7, 2, 1]}, {"stock": [3]}])
    game.step(play_action(STOCK_SOURCE, 0))
    assert play_action(STOCK_SOURCE, 0) in game.legal_actions()  # the 2 is now on top
    game.step(play_action(STOCK_SOURCE, 0))
    assert game.stocks[0] == [7]


def test_cards_play_from_the_top_of_own_discard_piles():
    game = load(seats=[{"hand": [9, 9, 9, 9, 9], "stock": [7], "discards": [[5, 1], [2], [], []]}, {"stock": [3]}])
    assert play_action(DISCARD_SOURCE, 0) in game.legal_actions()
    assert play_action(DISCARD_SOURCE + 1, 0) not in game.legal_actions()
    game.step(play_action(DISCARD_SOURCE, 0))
    game.step(play_action(DISCARD_SOURCE + 1, 0))
    assert game.building[0] == [1, 2] and game.discards[0][0] == [5]


def test_playing_is_never_compulsory():
    game = load(seats=[{"hand": [1, 9, 9, 9, 9], "stock": [1]}, {"stock": [3]}])
    game.step(discard_action(1, 0))
    assert game.current_seat == 1 and game.building == [[], [], [], []]


def test_a_player_plays_no_opponents_cards():
    game = load(seats=[{"hand": [9, 9, 9, 9, 9], "stock": [7]}, {"stock": [1], "discards": [[1], [], [], []]}])
    assert not [a for a in game.legal_actions() if a < 92]


# ---------------------------------------------------------------- A turn: discard
def test_a_discard_from_the_hand_ends_the_turn():
    game = load(seats=[{"hand": [W, 9, 9, 9, 9], "stock": [7]}, {"stock": [3]}])
    game.step(discard_action(W, 0))  # any card, a SKIP-BO card too
    assert game.discards[0][0] == [W] and game.current_seat == 1 and game.turn == 1


def test_only_hand_cards_can_be_discarded_onto_own_piles_in_the_lowest_new_slot():
    game = load(seats=[{"hand": [4, 9], "stock": [7], "discards": [[2], [], [], []]}, {"stock": [3]}],
                rest=("discard", 1, 3))
    discards = [a for a in game.legal_actions() if 92 <= a < 144]
    assert discards == sorted(discard_action(v, s) for v in (4, 9) for s in (0, 1))
    with pytest.raises(IllegalActionError, match="holds no 7 in hand"):
        game.step(discard_action(7, 0))


def test_discarding_onto_any_started_pile_in_any_order():
    game = load(seats=[{"hand": [3, 9, 9, 9, 9], "stock": [7], "discards": [[12], [1], [5], [W]]}, {"stock": [3]}])
    discards = [a for a in game.legal_actions() if 92 <= a < 144 and (a - 92) // 4 == 2]
    assert discards == [discard_action(3, slot) for slot in range(4)]


# ---------------------------------------------------------------- Running out of cards to draw
def test_completed_piles_are_recycled_only_when_the_draw_pile_is_empty():
    completed = list(range(1, 13))
    game = load(seats=[{"hand": [1], "stock": [7]}, {"stock": [7]}], completed=completed, draw_pile=[2, 3],
                rest=("discard", 1, 0))
    game.step(hand_play_action(1, 0))  # hand empty: draws 3, 2, then the completed pile is shuffled in
    assert game.hand_sizes[0] == 5
    assert len(game.draw_pile) == 12 - 3 and game.completed == []
    game2 = load(seats=[{"hand": [1], "stock": [7]}, {"stock": [7]}], completed=completed,
                 draw_pile=[2, 3, 4, 5, 6, 8], rest=("discard", 1, 0))
    game2.step(hand_play_action(1, 0))
    assert game2.completed == completed + [] and len(game2.draw_pile) == 1


def test_play_on_draws_what_there_is():
    game = load(seats=[{"hand": [1], "stock": [7]}, {"stock": [7]}], draw_pile=[5, 6], rest=("discard", 1, 0))
    game.step(hand_play_action(1, 0))
    assert sorted(game.to_dict()["seats"][0]["hand"]) == [5, 6] and not game.is_over


def test_play_on_with_an_empty_hand_and_nothing_to_draw_ends_the_turn_without_discarding():
    game = load(seats=[{"hand": [1], "stock": [7]}, {"stock": [7]}], rest=("discard", 1, 0))
    game.step(hand_play_action(1, 0))
    assert game.legal_actions() == [END_TURN]
    game.step(END_TURN)
    assert game.current_seat == 1 and game.turn == 1 and not game.is_over


def test_end_turn_is_illegal_while_the_hand_holds_cards():
    game = load(seats=[{"hand": [9], "stock": [7]}, {"stock": [7]}], rest=("discard", 1, 0))
    with pytest.raises(IllegalActionError, match="end turn needs an empty hand"):
        game.step(END_TURN)


def test_play_on_as_many_quiet_turns_in_a_row_as_seats_end_the_hand_as_a_draw():
    game = load(seats=[{"stock": [7]}, {"stock": [7]}], rest=("discard", 1, 0))
    assert game.legal_actions() == [END_TURN]
    game.step(END_TURN)
    assert game.quiet_turns == 1 and not game.is_over
    game.step(END_TURN)
    assert game.outcome == "draw" and game.winners == () and game.points() == (0, 0)


def test_a_turn_with_a_play_is_not_quiet():
    game = load(seats=[{"hand": [1], "stock": [7]}, {"stock": [7]}], rest=("discard", 1, 0), quiet_turns=1)
    game.step(hand_play_action(1, 0))
    game.step(END_TURN)
    assert game.quiet_turns == 0 and not game.is_over


def test_exhausted_draw_mode_draw_ends_the_hand_when_a_card_must_be_drawn_and_none_is_left():
    rules = {"exhausted_draw": "draw"}
    game = load(rules=rules, seats=[{"hand": [1], "stock": [7]}, {"stock": [7]}], draw_pile=[4], rest=("discard", 1, 0))
    game.step(hand_play_action(1, 0))  # must draw 5: one card, then none
    assert game.outcome == "draw" and game.legal_actions() == []


def test_exhausted_draw_mode_draw_does_not_end_the_hand_while_no_card_must_be_drawn():
    rules = {"exhausted_draw": "draw"}
    game = load(rules=rules, seats=[{"hand": [1, 9], "stock": [7]}, {"hand": [9] * 5, "stock": [7]}],
                rest=("discard", 1, 0))
    game.step(hand_play_action(1, 0))
    game.step(discard_action(9, 0))  # seat 1 holds 5 cards: no draw needed
    assert not game.is_over and game.current_seat == 1


def test_the_seat_to_act_follows_from_dealer_and_turn():
    game = Game.new(Rules(num_players=3), seed=4, dealer=2)
    for _ in range(7):
        assert game.current_seat == (game.dealer + 1 + game.turn) % 3
        turn = game.turn
        while game.turn == turn:
            game.step(game.legal_actions()[-1])


def test_max_turns_truncates_the_hand_and_reports_truncated_not_draw():
    game = Game.new(Rules(max_turns=3), seed=0)
    while not game.is_over:
        game.step(game.legal_actions()[-1])
    assert game.outcome == "truncated" and game.turn == 3 and game.points() == (0, 0)


def test_after_max_turn_plays_plays_no_further_play_is_legal_and_the_player_must_discard():
    game = load(rules={"max_turn_plays": 2}, seats=[{"hand": [1, 2, 3, 9], "stock": [7]}, {"stock": [3]}])
    game.step(hand_play_action(1, 0))
    game.step(hand_play_action(2, 0))
    assert game.legal_actions() == sorted(discard_action(v, 0) for v in (3, 9))
    with pytest.raises(IllegalActionError, match=r"played 2 cards this turn.*max_turn_plays=2.*discard"):
        game.step(hand_play_action(3, 0))
    game.step(discard_action(9, 0))
    assert game.current_seat == 1 and game.plays_this_turn == 0
    assert play_action(STOCK_SOURCE, 0) in game.legal_actions()  # the next turn may play again


def test_at_the_turn_play_limit_an_empty_hand_with_nothing_to_draw_may_only_end_the_turn():
    game = load(rules={"max_turn_plays": 2}, seats=[{"hand": [1, 2], "stock": [7], "discards": [[3], [], [], []]},
                                                    {"stock": [7]}], rest=("discard", 1, 0))
    game.step(hand_play_action(1, 0))
    game.step(hand_play_action(2, 0))
    assert game.legal_actions() == [END_TURN]  # the discard top 3 fits, but the limit is reached
    with pytest.raises(IllegalActionError, match=r"max_turn_plays=2.*end the turn \(id 144\)"):
        game.step(play_action(DISCARD_SOURCE, 0))
    game.step(END_TURN)
    assert game.current_seat == 1 and not game.is_over


def test_an_empty_hand_that_can_draw_draws_five_before_the_turn_play_limit_leaves_only_discards():
    game = load(rules={"max_turn_plays": 1}, seats=[{"hand": [1], "stock": [7]}, {"stock": [7]}], draw_pile=[2] * 5)
    game.step(hand_play_action(1, 0))
    assert game.hand_sizes[0] == 5 and game.legal_actions() == [discard_action(2, 0)]


def test_without_a_turn_play_limit_a_turn_may_go_past_100_plays():
    game = Game.new(Rules(max_turn_plays=None), seed=0)
    for _ in range(5000):
        if game.plays_this_turn > 100:
            break
        game.step(game.legal_actions()[0])  # the lowest id: the endless turn of RULES.md
    assert game.plays_this_turn == 101 and any(a < 92 for a in game.legal_actions())


# ---------------------------------------------------------------- Winning a hand
def test_singles_the_last_stockpile_card_wins_on_the_spot_with_no_discard():
    game = load(seats=[{"hand": [9, 9, 9, 9, 9], "stock": [1]}, {"stock": [3, 4]}])
    game.step(play_action(STOCK_SOURCE, 0))
    assert game.outcome == "win" and game.winners == (0,)
    assert game.legal_actions() == [] and game.hand_sizes[0] == 5
    with pytest.raises(IllegalActionError, match="the hand is over"):
        game.step(discard_action(9, 0))


def test_rule_page_example_one_turn_using_every_kind_of_pile():
    """The rule page's worked turn: 5 from hand, 6 from stock, 7 from a discard pile, SKIP-BO as 8,
    9 from stock, 12 finishes the other pile (set aside), then a 3 is discarded."""
    game = load(
        seats=[{"hand": [5, W, 12, 3, 3], "stock": [8, 2, 9, 6], "discards": [[3, 7], [2], [], []]}, {"stock": [8]}],
        building=[[1, 2, 3, 4], list(range(1, 12)), [], []],
    )
    game.step(hand_play_action(5, 0))
    game.step(play_action(STOCK_SOURCE, 0))
    assert game.stocks[0][-1] == 9
    game.step(play_action(DISCARD_SOURCE, 0))
    assert game.discards[0][0] == [3]
    game.step(hand_play_action(W, 0))
    game.step(play_action(STOCK_SOURCE, 0))
    assert game.building[0] == [1, 2, 3, 4, 5, 6, 7, W, 9] and game.stocks[0][-1] == 2
    assert play_action(STOCK_SOURCE, 0) not in game.legal_actions()
    game.step(hand_play_action(12, 1))
    assert game.building[1] == [] and len(game.completed) == 12
    assert not [a for a in game.legal_actions() if a < 92]
    game.step(discard_action(3, 2))
    assert game.current_seat == 1 and game.discards[0][2] == [3]
