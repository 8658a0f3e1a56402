"""The bots: legal moves at every table, reproducible randomness, the plays each one is built to make."""

from __future__ import annotations

import pytest

from agents import GreedyBot, PlannerBot, RandomBot
from skipbo_env import Game, Rules
from skipbo_env.actions import FIRST_DISCARD, STOCK_SOURCE, discard_action, hand_play_action, play_action
from skipbo_env.cards import WILD
from skipbo_env.encoding import observe
from tests.positions import position
from evaluation import run_tournament

TABLES = [
    dict(num_players=2, stock_size=8),
    dict(num_players=3, stock_size=6),
    dict(num_players=4, stock_size=5),
    dict(num_players=5, stock_size=4),
    dict(num_players=6, stock_size=4),
    dict(num_players=4, stock_size=5, partners=True),
    dict(num_players=6, stock_size=4, partners=True, team_win="either"),
    dict(num_players=4, stock_size=5, partners=True, team_stock="shared"),
    dict(num_players=2, stock_size=40, exhausted_draw="draw"),
    dict(num_players=3, stock_size=60, decks=2),
]


def play_to_the_end(game: Game, bots: list) -> list[int]:
    """Every action the bots take, checking each against the engine's legal actions."""
    actions = []
    while not game.is_over:
        seat = game.current_seat
        action = bots[seat].act(observe(game, seat))
        assert action in game.legal_actions(), f"seat {seat} ({bots[seat]!r}) chose illegal {action}"
        actions.append(action)
        game.step(action)
    return actions


@pytest.mark.parametrize("settings", TABLES, ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()))
def test_every_bot_only_plays_legal_actions_at_every_table(settings):
    rules = Rules(**settings)
    makers = [PlannerBot, GreedyBot, RandomBot, PlannerBot, GreedyBot, RandomBot]
    for seed in range(2):
        bots = [makers[(seat + seed) % 3](seed=seat) for seat in range(rules.num_players)]
        game = Game.new(rules, seed=seed)
        play_to_the_end(game, bots)
        assert game.outcome in ("win", "draw")


def test_the_planner_with_every_switch_off_still_plays_legally():
    rules = Rules(num_players=4, stock_size=5, partners=True)
    off = dict(search=False, hold_wilds=False, draw_bonus=False, avoid_feeding=False, own_stock_gap=False,
               partner_help=False, smart_discard=False, always_block=True)
    bots = [PlannerBot(seed=seat, **off) for seat in range(4)]
    play_to_the_end(Game.new(rules, seed=3), bots)


@pytest.mark.parametrize("bot_class", [RandomBot, GreedyBot, PlannerBot])
def test_a_bot_seeded_alike_plays_alike(bot_class):
    rules = Rules(num_players=3, stock_size=6)

    def actions(seed):
        bots = [bot_class(seed=seed + seat) for seat in range(3)]
        return play_to_the_end(Game.new(rules, seed=11), bots)

    assert actions(5) == actions(5)
    if bot_class is not PlannerBot:  # the planner only draws at random when discarding like greedy
        assert actions(5) != actions(6)


def test_reset_renews_the_generator():
    bot = RandomBot(seed=1)
    game = Game.new(Rules(), seed=2)
    observation = observe(game, game.current_seat)
    first = [bot.act(observation) for _ in range(20)]
    bot.reset(1)
    assert [bot.act(observation) for _ in range(20)] == first


def first_action(bot, state: dict) -> int:
    game = Game.from_dict(state)
    return bot.act(observe(game, game.current_seat))


def play_turn(bot, state: dict) -> tuple[Game, list[int]]:
    """Seat 0 plays one whole turn (until it discards or the hand ends)."""
    game = Game.from_dict(state)
    actions = []
    while not game.is_over and game.current_seat == 0 and game.turn == state["turn"]:
        action = bot.act(observe(game, 0))
        actions.append(action)
        game.step(action)
    return game, actions


# ---------------------------------------------------------------------------- greedy
def test_greedy_plays_its_stockpile_before_a_discard_top_or_a_hand_card():
    state = position(seats=[{"hand": [4, 4, 9, 10, 11], "stock": [7, 4], "discards": [[4], [], [], []]},
                            {"hand": [], "stock": [8, 9, 12]}],
                     building=[[1, 2, 3], [], [], []])
    assert first_action(GreedyBot(seed=0), state) == play_action(STOCK_SOURCE, 0)


def test_greedy_plays_a_discard_top_before_a_hand_card():
    state = position(seats=[{"hand": [4, 9, 9, 10, 11], "stock": [7, 8], "discards": [[4], [], [], []]},
                            {"hand": [], "stock": [8, 9, 12]}],
                     building=[[1, 2, 3], [], [], []])
    assert first_action(GreedyBot(seed=0), state) == play_action(14, 0)


def test_greedy_discards_a_hand_card_when_nothing_fits():
    state = position(seats=[{"hand": [5, 9, 9, 10, 11], "stock": [7, 8], "discards": [[4], [], [], []]},
                            {"hand": [], "stock": [8, 9, 12]}],
                     building=[[1, 2], [], [], []])
    action = first_action(GreedyBot(seed=0), state)
    assert action >= FIRST_DISCARD and (action - FIRST_DISCARD) // 4 + 1 in (5, 9, 10, 11)


# ---------------------------------------------------------------------------- planner
def test_planner_finds_the_hand_cards_that_reach_its_stockpile():
    state = position(seats=[{"hand": [3, 4, 9, 10, 11], "stock": [8, 5], "discards": [[], [], [], []]},
                            {"hand": [], "stock": [8, 9, 12]}],
                     building=[[1, 2], [], [], []])
    game, actions = play_turn(PlannerBot(), state)
    assert actions[:3] == [hand_play_action(3, 0), hand_play_action(4, 0), play_action(STOCK_SOURCE, 0)]


def test_planner_reaches_its_stockpile_through_a_discard_pile_and_a_wild():
    state = position(seats=[{"hand": [13, 9, 9, 10, 11], "stock": [8, 6], "discards": [[5, 4], [], [], []]},
                            {"hand": [], "stock": [8, 9, 12]}],
                     building=[[1, 2], [], [], []])
    game, actions = play_turn(PlannerBot(), state)
    assert play_action(STOCK_SOURCE, 0) in actions
    assert game.building[0][:6] == [1, 2, 13, 4, 5, 6]


def test_planner_holds_a_wild_that_cannot_reach_its_stockpile():
    state = position(seats=[{"hand": [13, 7, 8, 9, 10], "stock": [8, 6], "discards": [[], [], [], []]},
                            {"hand": [], "stock": [8, 9, 12]}],
                     building=[[], [], [], []])
    game, actions = play_turn(PlannerBot(), state)
    assert game.hand_counts[0][WILD] == 1
    assert not any(a < FIRST_DISCARD for a in actions)
    _, careless = play_turn(PlannerBot(hold_wilds=False), state)
    assert careless[0] == hand_play_action(WILD, 0)


def test_planner_does_not_hand_the_opponent_its_stockpile_card():
    state = position(seats=[{"hand": [5, 9, 9, 11, 11], "stock": [8, 12], "discards": [[], [], [], []]},
                            {"hand": [], "stock": [8, 9, 6]}],
                     building=[[1, 2, 3, 4], [], [], []])
    assert first_action(PlannerBot(), state) >= FIRST_DISCARD
    assert first_action(PlannerBot(avoid_feeding=False), state) == hand_play_action(5, 0)


def test_planner_discards_onto_a_pile_one_higher():
    state = position(seats=[{"hand": [7, 10, 11, 11, 12], "stock": [8, 6],
                             "discards": [[8], [3], [2], [9]]},
                            {"hand": [], "stock": [8, 9, 12]}],
                     building=[[1, 2, 3, 4], [], [], []])
    assert first_action(PlannerBot(), state) == discard_action(7, 0)


def test_planner_plays_its_partners_stockpile():
    rules = {"num_players": 4, "partners": True}
    state = position(rules=rules,
                     seats=[{"hand": [9, 9, 10, 11, 11], "stock": [8, 12]}, {"hand": [], "stock": [8, 12]},
                            {"hand": [], "stock": [8, 5]}, {"hand": [], "stock": [8, 12]}],
                     building=[[1, 2, 3, 4], [], [], []])
    assert first_action(PlannerBot(), state) == play_action(18, 0)


def test_planner_takes_the_winning_play():
    state = position(seats=[{"hand": [13, 9, 9, 10, 11], "stock": [5], "discards": [[], [], [], []]},
                            {"hand": [], "stock": [8, 9, 6]}],
                     building=[[1, 2, 3], [], [], []])
    game, _ = play_turn(PlannerBot(), state)
    assert game.outcome == "win" and game.winners == (0,)


# ---------------------------------------------------------------------------- strength
def test_greedy_beats_random_by_a_wide_margin():
    result = run_tournament(["greedy", "random"], Rules(stock_size=10), games=40, seed=1)
    assert result.agent_stats()["greedy"]["win_rate"] >= 0.8


def test_planner_beats_greedy_by_a_wide_margin():
    result = run_tournament(["planner", "greedy"], Rules(stock_size=10), games=60, seed=1)
    assert result.agent_stats()["planner"]["win_rate"] >= 0.8
