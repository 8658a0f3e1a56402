"""The batched engine (skipbo_env.vector) is the rules engine, state for state.

The differential runs here are sized for CI (a few hundred hands over every table size and
variant); ``python benchmarks/vector_speed.py --verify 10000`` runs the same check at scale.
The numba kernels compile once per session (about 15 s cold, cached on disk afterwards).
"""

from __future__ import annotations

import numpy as np
import pytest

from skipbo_env import Game, IllegalActionError, Rules
from skipbo_env.actions import FIRST_DISCARD, PARTNER_STOCK_SOURCE, STOCK_SOURCE, play_action
from skipbo_env.cards import CARDS_PER_DECK
from skipbo_env.encoding import encode_observation
from agents.batched import bots
from skipbo_env.rules import MAX_COUNTER, MAX_DECKS, MAX_STOCK_CARD_POINTS, MAX_WIN_POINTS
from skipbo_env.vector import VectorGame, pcg
from agents.batched.bots import mixed_chooser
from skipbo_env.vector.check import differential_run
from skipbo_env.vector.layout import game_dtype
from tests.positions import position


@pytest.fixture(scope="module")
def batch() -> VectorGame:
    """A small default batch; building it compiles the kernels once for the module."""
    return VectorGame(Rules(), batch_size=8, seed=100)


# ---------------------------------------------------------------------------------- randomness
@pytest.mark.parametrize("seed", [0, 1, 12345, 2**32 - 1, 2**32, 2**40 + 7, 2**63 - 1])
def test_in_kernel_generator_reproduces_numpy_default_rng(seed):
    words = np.zeros(4, dtype=np.uint64)
    pcg.seed_pcg64(words, seed)
    generator = np.random.default_rng(seed)
    assert pcg.to_numpy_state(words) == generator.bit_generator.state
    floats = np.empty(500)
    pcg.fill_doubles(words, floats)
    assert np.array_equal(floats, generator.random(500))
    assert pcg.to_numpy_state(words) == generator.bit_generator.state


def test_generator_state_round_trips_through_numpys_state_dict():
    generator = np.random.default_rng(99)
    generator.random(17)
    words = pcg.from_numpy_state(generator.bit_generator.state)
    assert pcg.to_numpy_state(words) == generator.bit_generator.state


# ---------------------------------------------------------------------------------- differential runs
VARIANTS = {
    "2p-default": (dict(), 40, 0.7),
    "2p-long-stock-play-on": (dict(stock_size=40), 25, 0.3),
    "3p-short": (dict(num_players=3, stock_size=5), 40, 0.7),
    "4p-singles": (dict(num_players=4, stock_size=10), 25, 0.7),
    "4p-partners-both": (dict(num_players=4, partners=True, stock_size=8), 30, 0.7),
    "4p-partners-either": (dict(num_players=4, partners=True, team_win="either", stock_size=8), 30, 0.7),
    "6p-partners-shared": (dict(num_players=6, partners=True, team_stock="shared", stock_size=5), 30, 0.7),
    "5p-exhausted-draw": (dict(num_players=5, exhausted_draw="draw", stock_size=10), 30, 0.5),
    "3p-random-draws": (dict(num_players=3), 25, 0.0),
    "2p-max-turns": (dict(max_turns=40, stock_size=10), 30, 0.7),
    "6p-singles": (dict(num_players=6, stock_size=3), 30, 0.7),
    "2p-turn-play-limit": (dict(max_turn_plays=3, stock_size=10), 30, 0.7),
    "4p-partners-turn-play-limit": (dict(num_players=4, partners=True, stock_size=8, max_turn_plays=3), 20, 0.9),
    "3p-no-limits": (dict(num_players=3, stock_size=8, max_turn_plays=None), 25, 0.7),
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_batched_engine_matches_rules_engine_after_every_step(batch, name):
    settings, hands, greedy_share = VARIANTS[name]
    coverage = differential_run(Rules(**settings), mixed_chooser(16, greedy_share), hands=hands, seed=1000)
    assert coverage["hands"] >= hands


@pytest.mark.parametrize("name, covered", [
    ("2p-default", ["win", "recycle"]),
    ("2p-long-stock-play-on", ["draw", "end_turn", "recycle"]),
    ("4p-partners-both", ["win", "partner_play"]),
    ("2p-max-turns", ["truncated"]),
    ("2p-turn-play-limit", ["turn_play_limit", "win"]),
    ("4p-partners-turn-play-limit", ["turn_play_limit", "partner_play"]),
])
def test_differential_runs_reach_the_rules_they_check(batch, name, covered):
    settings, hands, greedy_share = VARIANTS[name]
    coverage = differential_run(Rules(**settings), mixed_chooser(16, greedy_share), hands=hands, seed=1000)
    for what in covered:
        assert coverage[what] > 0, what


def test_two_decks_match_the_rules_engine():
    coverage = differential_run(Rules(decks=2, stock_size=20), mixed_chooser(8, 0.6), hands=8, seed=5, batch_size=8)
    assert coverage["win"] > 0


# ---------------------------------------------------------------------------------- dealing and resets
def test_the_largest_deck_count_matches_the_rules_engine():
    coverage = differential_run(Rules(decks=MAX_DECKS, stock_size=3), mixed_chooser(2), hands=2, batch_size=2)
    assert coverage["win"] == 2


def test_row_i_is_the_rules_engine_hand_with_seed_plus_i(batch):
    batch.reset(500)
    for row in range(batch.batch_size):
        game = Game.new(Rules(), seed=500 + row)
        assert batch.to_dict(row) == game.to_dict()
        assert np.array_equal(batch.obs[row], encode_observation(game, game.current_seat))


def test_finished_hands_are_dealt_again_with_the_next_unused_seeds():
    rules = Rules(stock_size=1)
    engine = VectorGame(rules, batch_size=4, seed=0)
    finished = None
    for _ in range(400):
        first_stock_plays = [_stock_play_or_any(mask) for mask in engine.action_mask]
        finished = engine.step(np.array(first_stock_plays))
        if finished.num_hands:
            break
    assert finished is not None and finished.num_hands
    assert sorted(engine.seeds[finished.rows].tolist()) == list(range(4, 4 + finished.num_hands))
    for row in finished.rows.tolist():
        assert engine.to_dict(row) == Game.new(rules, seed=int(engine.seeds[row])).to_dict()


def _stock_play_or_any(mask: np.ndarray) -> int:
    legal = np.flatnonzero(mask)
    stock = legal[(legal // 4 == STOCK_SOURCE) & (legal < FIRST_DISCARD)]
    return int(stock[0] if len(stock) else legal[0])


def test_a_rules_engine_position_loaded_into_a_row_plays_on_identically(batch):
    game = Game.new(Rules(), seed=77)
    rng = np.random.default_rng(3)
    for _ in range(60):
        game.step(int(rng.choice(game.legal_actions())))
    batch.set_game(2, game)
    assert batch.to_dict(2) == game.to_dict()
    assert np.array_equal(batch.obs[2], encode_observation(game, game.current_seat))
    for _ in range(40):
        if game.is_over:
            break
        action = int(rng.choice(game.legal_actions()))
        game.step(action)
        batch.step_rows(np.array([2]), np.array([action]))
        assert batch.to_dict(2) == game.to_dict()
    assert batch.to_game(2).to_dict() == game.to_dict()


def test_an_illegal_action_is_refused_naming_the_game_and_changes_nothing(batch):
    batch.reset(0)
    before = batch.to_dict(3)
    illegal = int(np.flatnonzero(~batch.action_mask[3])[0])
    actions = np.array([int(np.flatnonzero(m)[0]) for m in batch.action_mask])
    actions[3] = illegal
    with pytest.raises(IllegalActionError, match=r"game 3 \(seed 3"):
        batch.step(actions)
    assert batch.to_dict(3) == before


def test_bad_settings_and_shapes_are_refused_with_the_allowed_values():
    with pytest.raises(ValueError, match="batch_size"):
        VectorGame(Rules(), batch_size=0)
    engine = VectorGame(Rules(), batch_size=2)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        engine.step(np.array([0, 0, 0]))


def test_setting_limits_keep_every_count_and_score_within_the_records_integers():
    record = game_dtype(MAX_DECKS)
    for pile_length in ("stock_len", "draw_len", "completed_len", "discard_len"):
        assert CARDS_PER_DECK * MAX_DECKS <= np.iinfo(record[pile_length].base).max
    for counter in ("turn", "plays"):
        assert MAX_COUNTER <= np.iinfo(record[counter].base).max
    largest_hand_score = MAX_WIN_POINTS + MAX_STOCK_CARD_POINTS * CARDS_PER_DECK * MAX_DECKS
    assert largest_hand_score <= np.iinfo(np.int32).max


def test_a_hand_won_at_the_largest_point_settings_scores_what_the_rules_engine_scores():
    rules = {"decks": 2, "stock_size": 150, "win_points": MAX_WIN_POINTS, "stock_card_points": MAX_STOCK_CARD_POINTS}
    opponent_stock = [value for value in range(1, 13) for _ in range(12)]
    game = Game.from_dict(position(rules, seats=[{"stock": [1], "hand": [2, 3, 4, 5, 6]}, {"stock": opponent_stock}]))
    batch = VectorGame(game.rules, batch_size=1, observations=False, auto_reset=False)
    batch.set_game(0, game)
    winning_play = play_action(STOCK_SOURCE, 0)
    game.step(winning_play)
    finished = batch.step(np.array([winning_play]))
    assert game.points() == (MAX_WIN_POINTS + MAX_STOCK_CARD_POINTS * len(opponent_stock), 0)
    assert finished.points.tolist() == [list(game.points())]


# ---------------------------------------------------------------------------------- bots
def test_kernel_greedy_plays_a_stockpile_top_whenever_one_fits(batch):
    batch.reset(40)
    rows = np.arange(batch.batch_size)
    streams = bots.seed_streams(np.random.default_rng(0), batch.batch_size)
    chosen = np.empty(batch.batch_size, dtype=np.int64)
    seen_stock_play = False
    for _ in range(300):
        bots.greedy_actions(batch.games, batch.action_mask, streams, rows, chosen)
        for row in rows:
            legal = np.flatnonzero(batch.action_mask[row])
            plays = legal[legal < FIRST_DISCARD]
            stock_plays = plays[np.isin(plays // 4, (STOCK_SOURCE, PARTNER_STOCK_SOURCE))]
            if len(stock_plays):
                assert chosen[row] in stock_plays
                seen_stock_play = True
            elif len(plays):
                assert chosen[row] in plays
        batch.step(chosen)
    assert seen_stock_play
