"""The expert: legal moves at every table, deterministic, every switch matters, stronger than the planner."""

from __future__ import annotations

import pytest

from agents import ExpertBot, load_policy
from agents.expert import fill_chance, run_length
from agents.planner import chain_gaps
from evaluation.tournament import run_tournament
from skipbo_env import Game, Rules
from skipbo_env.actions import (
    FIRST_DISCARD,
    STOCK_SOURCE,
    hand_play_action,
    play_action,
)
from skipbo_env.cards import WILD
from skipbo_env.encoding import observe
from tests.agents.test_bots import TABLES, first_action, play_to_the_end, play_turn
from tests.positions import position

ALL_OFF = {name: False for name in ExpertBot.SWITCHES}


@pytest.mark.parametrize("settings", TABLES, ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()))
def test_the_expert_only_plays_legal_actions_at_every_table(settings):
    rules = Rules(**settings)
    for seed in range(2):
        bots = [ExpertBot(seed=seat) if (seat + seed) % 2 == 0 else load_policy("planner", seed=seat)
                for seat in range(rules.num_players)]
        game = Game.new(rules, seed=seed)
        play_to_the_end(game, bots)
        assert game.outcome in ("win", "draw")


@pytest.mark.parametrize("settings", [{"num_players": 2, "stock_size": 8},
                                      {"num_players": 4, "stock_size": 5, "partners": True}])
def test_the_expert_with_every_switch_off_still_plays_legally(settings):
    rules = Rules(**settings)
    bots = [ExpertBot(seed=seat, **ALL_OFF) for seat in range(rules.num_players)]
    game = Game.new(rules, seed=3)
    play_to_the_end(game, bots)
    assert game.outcome in ("win", "draw")


def test_the_expert_seeded_alike_plays_alike():
    rules = Rules(num_players=3, stock_size=8)

    def actions(seed):
        return play_to_the_end(Game.new(rules, seed=11), [ExpertBot(seed=seed + seat) for seat in range(3)])

    assert actions(5) == actions(5)


def test_the_expert_is_a_named_bot_with_switches():
    bot = load_policy("expert:threat=false,plan_discards=false")
    assert isinstance(bot, ExpertBot) and not bot.threat and not bot.plan_discards and bot.card_counting


# ---------------------------------------------------------------------------- chances
def test_fill_chance_is_certain_with_nothing_missing_and_impossible_with_too_few_cards():
    assert fill_chance(0, 0, 0.07, 0.11) == 1.0
    assert fill_chance(2, 3, 0.07, 0.11) == 0.0


def test_fill_chance_of_one_missing_value_is_one_minus_missing_it_with_every_card():
    assert fill_chance(5, 1, 0.1, 0.1) == pytest.approx(1 - 0.8 ** 5)


def test_chain_gaps_fill_the_chain_from_the_hand_the_discard_tops_and_a_wild():
    hand = [0] * (WILD + 1)
    hand[3] = 1
    hand[WILD] = 1
    assert chain_gaps(3, 9, hand, [[6, 5], [4]]) == [8]  # 3 hand, 4 pile, 5 and 6 pile, 7 wild, 8 missing


# ---------------------------------------------------------------------------- the switches
def test_the_expert_finds_the_hand_cards_that_reach_its_stockpile():
    state = position(seats=[{"hand": [3, 4, 9, 10, 11], "stock": [8, 5], "discards": [[], [], [], []]},
                            {"hand": [], "stock": [8, 9, 12]}],
                     building=[[1, 2], [], [], []])
    _, actions = play_turn(ExpertBot(), state)
    assert actions[:3] == [hand_play_action(3, 0), hand_play_action(4, 0), play_action(STOCK_SOURCE, 0)]


def test_threat_keeps_the_expert_from_handing_the_opponent_its_stockpile_card():
    state = position(seats=[{"hand": [5, 9, 9, 11, 11], "stock": [8, 12], "discards": [[], [], [], []]},
                            {"hand": [], "stock": [8, 9, 6]}],
                     building=[[1, 2, 3, 4], [], [], []])
    assert first_action(ExpertBot(), state) >= FIRST_DISCARD
    assert first_action(ExpertBot(threat=False), state) == hand_play_action(5, 0)


def test_hold_wilds_keeps_a_wild_that_cannot_reach_the_stockpile():
    state = position(seats=[{"hand": [13, 7, 8, 9, 10], "stock": [8, 6], "discards": [[], [], [], []]},
                            {"hand": [], "stock": [8, 9, 12]}],
                     building=[[], [], [], []])
    game, _ = play_turn(ExpertBot(), state)
    assert game.hand_counts[0][WILD] == 1
    _, careless = play_turn(ExpertBot(hold_wilds=False), state)
    assert careless[0] == hand_play_action(WILD, 0)


def test_planned_discards_continue_a_descending_run_and_keep_the_wild():
    piles = [[8], [4], [10], [9]]
    state = position(seats=[{"hand": [7, 10, 11, 13, 12], "stock": [8, 3], "discards": piles},
                            {"hand": [], "stock": [8, 9, 12]}],
                     building=[[1, 2, 3, 4], [], [], []])
    action = first_action(ExpertBot(), state)
    assert action >= FIRST_DISCARD
    value, slot = divmod(action - FIRST_DISCARD, 4)
    assert value + 1 != WILD and piles[slot][-1] in (value + 1, value + 2)


def test_run_length_follows_the_hand_and_the_discard_tops_until_a_value_is_missing():
    hand = [0] * (WILD + 1)
    hand[5] = 1
    assert run_length(5, hand, [[9, 8, 7, 6]]) == 5
    assert run_length(5, hand, [[6, 9]]) == 1  # the 6 is buried under the 9


def decisions_that_change(switch: str, games: int = 3) -> int:
    """How many expert decisions in seeded two-player games against the planner change with ``switch`` off."""
    rules = Rules(num_players=2, stock_size=10)
    changed = 0
    for seed in range(games):
        game = Game.new(rules, seed=seed)
        bots = [ExpertBot(seed=0), load_policy("planner", seed=1)]
        while not game.is_over:
            seat = game.current_seat
            observation = observe(game, seat)
            action = bots[seat].act(observation)
            if seat == 0:
                changed += action != ExpertBot(seed=0, **{switch: False}).act(observation)
            game.step(action)
    return changed


@pytest.mark.parametrize("switch", ExpertBot.SWITCHES)
def test_every_switch_changes_some_decision(switch):
    assert decisions_that_change(switch) > 0


# ---------------------------------------------------------------------------- strength
def test_the_expert_beats_greedy_by_a_wide_margin():
    result = run_tournament(["expert", "greedy"], Rules(stock_size=10), games=60, seed=1)
    assert result.agent_stats()["expert"]["win_rate"] >= 0.8
