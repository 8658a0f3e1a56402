"""Invariants over random play in every table size and variant (hypothesis and long runs).

Every card of the deck always in exactly one place; the mask equal to the set of actions that
``step`` accepts; every game ending; the same seed and actions giving the same game;
``to_dict``/``from_dict`` round trips mid-game.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skipbo_env import Game, IllegalActionError, Rules
from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.cards import deck_counts

CONFIGS = [
    {"num_players": 2},
    {"num_players": 2, "stock_size": 10},
    {"num_players": 3, "exhausted_draw": "draw"},
    {"num_players": 4},
    {"num_players": 5, "stock_size": 5},
    {"num_players": 6},
    {"num_players": 2, "decks": 2, "stock_size": 40},
    {"num_players": 4, "partners": True},
    {"num_players": 4, "partners": True, "team_win": "either", "stock_size": 8},
    {"num_players": 6, "partners": True, "team_stock": "shared"},
    {"num_players": 6, "partners": True, "team_win": "either", "exhausted_draw": "draw"},
    {"num_players": 3, "max_turns": 40},
]
STEP_LIMIT = 50_000


def cards_in_play(game: Game) -> Counter:
    counts = Counter()
    for seat in range(game.num_players):
        for value, count in enumerate(game.hand_counts[seat]):
            counts[value] += count
        for pile in game.discards[seat]:
            counts.update(pile)
    stock_owners = {id(stock): stock for stock in game.stocks}
    for stock in stock_owners.values():
        counts.update(stock)
    for pile in game.building:
        counts.update(pile)
    counts.update(game.completed)
    counts.update(game.draw_pile)
    return +counts


def assert_every_card_in_exactly_one_place(game: Game) -> None:
    expected = deck_counts(game.rules.decks)
    assert cards_in_play(game) == Counter({v: expected[v] for v in range(1, 14)})
    assert all(0 <= size <= 5 for size in game.hand_sizes)


def assert_mask_equals_accepted_actions(game: Game) -> None:
    accepted = set()
    before = game.to_dict()
    for action in range(NUM_ACTIONS):
        trial = game.copy()
        try:
            trial.step(action)
        except IllegalActionError:
            assert trial.to_dict() == before
        else:
            accepted.add(action)
    assert accepted == set(game.legal_actions()) == set(np.flatnonzero(game.action_mask()).tolist())


def choose(game: Game, rng: np.random.Generator, stock_bias: bool) -> int:
    legal = game.legal_actions()
    if stock_bias:
        stock_plays = [a for a in legal if 52 <= a < 56 or 72 <= a < 76]
        legal = stock_plays or legal
    return legal[int(rng.integers(len(legal)))]


def play_random_game(rules: Rules, seed: int, check_every: int = 0, stock_bias: bool = False) -> Game:
    game = Game.new(rules, seed=seed)
    rng = np.random.default_rng(seed)
    for step in range(STEP_LIMIT):
        if game.is_over:
            return game
        assert_every_card_in_exactly_one_place(game)
        if check_every and step % check_every == 0:
            assert_mask_equals_accepted_actions(game)
        game.step(choose(game, rng, stock_bias))
    raise AssertionError(f"game {rules.to_dict()} seed {seed} did not end in {STEP_LIMIT} steps")


@settings(max_examples=40, deadline=None)
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 2**32), stock_bias=st.booleans())
def test_random_games_keep_every_card_in_one_place_offer_only_legal_moves_and_end(config, seed, stock_bias):
    game = play_random_game(Rules(**config), seed, check_every=25, stock_bias=stock_bias)
    assert game.outcome in ("win", "draw", "truncated")
    assert (game.outcome == "win") == bool(game.winners)
    assert_every_card_in_exactly_one_place(game)


@settings(max_examples=25, deadline=None)
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 2**32), cut=st.integers(0, 400))
def test_the_same_seed_and_actions_give_the_same_game_and_saves_round_trip(config, seed, cut):
    game = play_random_game(Rules(**config), seed, stock_bias=True)
    again = Game.replay(game.record())
    assert again.to_dict() == game.to_dict()
    record = game.record()
    midway = Game.new(Rules(**config), seed=seed)
    for action in record["actions"][: min(cut, len(record["actions"]))]:
        midway.step(action)
    state = midway.to_dict()
    loaded = Game.from_dict(state)
    assert loaded.to_dict() == state
    for action in record["actions"][min(cut, len(record["actions"])):]:
        loaded.step(action)
    assert loaded.to_dict()["seats"] == game.to_dict()["seats"]
    assert loaded.outcome == game.outcome


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_long_random_play_in_every_table_size_and_variant(config):
    outcomes = Counter()
    for seed in range(12):
        game = play_random_game(Rules(**config), seed, stock_bias=seed % 2 == 0)
        outcomes[game.outcome] += 1
        points = game.points()
        if game.outcome == "win":
            assert all(points[s] > 0 for s in game.winners)
            assert all(points[s] == 0 for s in range(game.num_players) if s not in game.winners)
    assert sum(outcomes.values()) == 12
