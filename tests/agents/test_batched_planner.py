"""The batched planner (agents/batched/planner.py) against ``agents.planner``: the same action in every
position, for the default and for each switch turned the other way, on every kind of table.

Positions are reached on the batched engine by random, greedy and planner play (each seat of each
game plays one of them); at every few steps each game is converted to a rules-engine ``Game`` and
``PlannerBot(seed, **switches).act(observe(game, seat))`` is compared with the kernel's action,
the kernel seat's generator seeded with the same seed. The kernels compile once (about a minute
cold, cached on disk afterwards).
"""

from __future__ import annotations

import inspect
from collections import Counter

import numpy as np
import pytest

import agents.planner as python_planner
from agents.planner import PlannerBot
from skipbo_env import Rules
from skipbo_env.actions import FIRST_DISCARD, PARTNER_DISCARD_SOURCE, PARTNER_STOCK_SOURCE, END_TURN
from skipbo_env.encoding import observe
from skipbo_env.game import Game
from agents.batched import bots
from agents.batched import planner as kernel_planner
from agents.batched import search as kernel_search
from skipbo_env.vector.engine import VectorGame

VARIANTS = [{}] + [{name: not kernel_planner.DEFAULTS[name]} for name in kernel_planner.SWITCHES]
TABLES = [
    Rules(num_players=2, stock_size=5),
    Rules(num_players=2, stock_size=30),
    Rules(num_players=3, stock_size=8, exhausted_draw="draw"),
    Rules(num_players=4, partners=True, stock_size=6),
    Rules(num_players=4, partners=True, team_stock="shared", stock_size=6),
    Rules(num_players=6, partners=True, team_win="either", stock_size=4),
    Rules(num_players=5, stock_size=12),  # the record of other deck counts: tests/vector (a compile each)
    Rules(num_players=6, stock_size=3),
]
BATCH = 6
STEPS = 150
SAMPLE_EVERY = 11


def mixed_play_actions(batch, streams, kinds, out):
    """Each game's next action by the bot (random, greedy or default planner) of the seat to act."""
    rows = np.arange(batch.batch_size)
    chosen = {kind: np.empty(batch.batch_size, dtype=np.int64) for kind in range(3)}
    bots.random_actions(batch.games, batch.action_mask, streams, rows, chosen[0])
    bots.greedy_actions(batch.games, batch.action_mask, streams, rows, chosen[1])
    kernel_planner.planner_actions(batch.games, batch.action_mask, batch.cfg, rows, streams,
                                   kernel_planner.switch_mask({}), chosen[2])
    seat_kind = kinds[rows, batch.games["seat"]]
    for kind, actions in chosen.items():
        out[seat_kind == kind] = actions[seat_kind == kind]


def compare_position(batch, row, probe, seed, coverage):
    """Every variant's kernel action in game ``row`` against ``PlannerBot``'s; returns the mismatches."""
    game = batch.to_game(row)
    observation = observe(game, game.current_seat)
    rows = np.array([row])
    mismatches = []
    coverage["positions"] += 1
    coverage["stalled"] += not game.draw_pile and not game.completed
    for variant in VARIANTS:
        bots.seed_rows(probe, rows, np.full((1, 6), seed))
        got = np.empty(1, dtype=np.int64)
        kernel_planner.planner_actions(batch.games, batch.action_mask, batch.cfg, rows, probe,
                                       kernel_planner.switch_mask(variant), got)
        expected = PlannerBot(seed=seed, **variant).act(observation)
        coverage["decisions"] += 1
        coverage["discard" if FIRST_DISCARD <= expected < END_TURN else "play" if expected < FIRST_DISCARD
                 else "end_turn"] += 1
        coverage["partner_play"] += PARTNER_STOCK_SOURCE * 4 <= expected < (PARTNER_DISCARD_SOURCE + 4) * 4
        if int(got[0]) != expected:
            mismatches.append((variant, int(got[0]), expected, game.to_dict()))
    return mismatches


@pytest.mark.parametrize("rules", TABLES, ids=lambda r: f"{r.num_players}p-{'partners-' + r.team_stock + '-' + r.team_win if r.partners else 'singles'}-stock{r.stock_size}-decks{r.decks}-{r.exhausted_draw}")
def test_the_kernel_planner_decides_as_agents_planner_in_every_position(rules):
    seed = rules.num_players * 100 + rules.stock_size
    batch = VectorGame(rules, BATCH, seed, observations=False, threads=1)
    streams = bots.seed_streams(np.random.default_rng(seed), BATCH)
    probe = bots.new_streams(BATCH)
    kinds = np.random.default_rng(seed).integers(0, 3, size=(BATCH, 6))
    kinds[:, 0] = 2  # a planner in every game
    actions = np.empty(BATCH, dtype=np.int64)
    coverage: Counter = Counter()
    mismatches = []
    for step in range(STEPS):
        if step % SAMPLE_EVERY == 0:
            for row in range(BATCH):
                mismatches += compare_position(batch, row, probe, seed + 1000 * step + row, coverage)
        mixed_play_actions(batch, streams, kinds, actions)
        coverage["hands"] += batch.step(actions).num_hands
    assert not mismatches, f"{len(mismatches)} of {coverage['decisions']} decisions differ; first: {mismatches[0]}"
    assert coverage["positions"] == BATCH * len(range(0, STEPS, SAMPLE_EVERY))
    assert coverage["play"] and coverage["discard"]
    if rules.stock_size <= 8:
        assert coverage["hands"]  # positions of new deals too
    if rules.partners and rules.team_stock == "own":
        assert coverage["partner_play"]


def test_the_kernel_planner_searches_stalled_hands_as_agents_planner():
    """Nothing left to draw (break_stalemate's case): random play of a big deal empties the draw pile."""
    rules = Rules(num_players=2, stock_size=30)
    batch = VectorGame(rules, BATCH, 3, observations=False, threads=1)
    streams = bots.seed_streams(np.random.default_rng(3), BATCH)
    probe = bots.new_streams(BATCH)
    actions = np.empty(BATCH, dtype=np.int64)
    coverage: Counter = Counter()
    mismatches = []
    for step in range(2500):
        stalled = np.flatnonzero((batch.games["draw_len"] == 0) & (batch.games["completed_len"] == 0))
        if step % 7 == 0:
            for row in stalled.tolist():
                mismatches += compare_position(batch, row, probe, step + row, coverage)
        if coverage["stalled"] >= 40:
            break
        bots.random_actions(batch.games, batch.action_mask, streams, np.arange(BATCH), actions)
        batch.step(actions)
    assert coverage["stalled"] >= 40
    assert not mismatches, f"{len(mismatches)} of {coverage['decisions']} decisions differ; first: {mismatches[0]}"


def test_the_kernel_planner_reads_only_what_the_seat_may_see():
    """Other hands, the cards under the stockpile tops and the draw pile's order change nothing."""
    rules = Rules(num_players=3, stock_size=8)
    batch = VectorGame(rules, 1, 0, observations=False, threads=1)
    streams = bots.seed_streams(np.random.default_rng(0), 1)
    rows = np.arange(1)
    rng = np.random.default_rng(1)
    compared = 0
    for _ in range(300):
        state = batch.to_dict(0)
        before = np.empty(1, dtype=np.int64)
        kernel_planner.planner_actions(batch.games, batch.action_mask, batch.cfg, rows, streams,
                                       kernel_planner.switch_mask({}), before)
        hidden = [card for s, seat in enumerate(state["seats"]) if s != state["current_seat"] for card in seat["hand"]]
        hidden += [card for seat in state["seats"] for card in seat["stock"][:-1]] + state["draw_pile"]
        rng.shuffle(hidden)
        for s, seat in enumerate(state["seats"]):
            if s != state["current_seat"]:
                seat["hand"], hidden = hidden[:len(seat["hand"])], hidden[len(seat["hand"]):]
        for seat in state["seats"]:
            if seat["stock"]:
                cut = len(seat["stock"]) - 1
                seat["stock"], hidden = hidden[:cut] + seat["stock"][-1:], hidden[cut:]
        state["draw_pile"] = hidden
        other = VectorGame(rules, 1, 0, observations=False, threads=1)
        other.set_game(0, Game.from_dict(state))
        after = np.empty(1, dtype=np.int64)
        kernel_planner.planner_actions(other.games, other.action_mask, other.cfg, rows, streams,
                                       kernel_planner.switch_mask({}), after)
        assert after[0] == before[0]
        compared += 1
        batch.step(before)
    assert compared == 300


def test_the_kernel_weights_and_switches_are_agents_planners():
    for name in ("STOCK", "WILD_COST", "DRAW", "HAND_PLAY", "DISCARD_PLAY", "FEED", "BLOCK", "GAP", "PARTNER",
                 "STALL_PLAY", "STALL_COMPLETE", "STALL_FEED", "ENDGAME"):
        assert getattr(kernel_planner, name) == getattr(python_planner, name), name
    assert kernel_search.WIN == python_planner.WIN  # the search's, shared by every searching kernel bot
    assert tuple(kernel_search.SEAT_WEIGHTS) == python_planner.SEAT_WEIGHTS
    assert kernel_planner.REACH.tolist() == python_planner.REACH
    parameters = inspect.signature(PlannerBot).parameters
    assert {name: parameters[name].default for name in kernel_planner.SWITCHES} == kernel_planner.DEFAULTS
    assert set(parameters) == {"seed", *kernel_planner.SWITCHES}


def test_planner_specs_name_their_kernel_bot_and_bad_options_are_refused():
    first = bots.FIRST_CODE["planner"]
    assert bots.kernel_bot_code("planner") == first + kernel_planner.switch_mask({})
    assert bots.kernel_bot_code("planner:avoid_feeding=false,always_block=TRUE") == first + \
        kernel_planner.switch_mask({"avoid_feeding": False, "always_block": True})
    assert bots.kernel_bot_code("greedy") == bots.FIRST_CODE["greedy"] and bots.kernel_bot_code("model.zip") is None
    with pytest.raises(ValueError, match="no option 'depth'; its options: search, hold_wilds"):
        bots.kernel_bot_code("planner:depth=true")
    with pytest.raises(ValueError, match="option search takes true or false, not '3'"):
        bots.kernel_bot_code("planner:search=3")


@pytest.mark.parametrize("values", [np.arange(8, dtype=np.float64) / 4, np.arange(8, dtype=np.int64) * 3])
def test_a_grown_memo_holds_the_same_entries_for_the_searches_values_and_the_neural_searchs_stop_rows(values):
    keys = np.full(8, kernel_search.EMPTY, dtype=np.int64)
    stored = {}
    for key, value in zip([11, 4, 27, 90, 3], values[:5]):
        slot = kernel_search.memo_slot(keys, key)
        keys[slot], values[slot] = key, value
        stored[key] = value
    grown_keys, grown_values = kernel_search.memo_grown(keys, values)
    assert len(grown_keys) == 16 and grown_values.dtype == values.dtype
    assert (grown_keys != kernel_search.EMPTY).sum() == len(stored)
    for key, value in stored.items():
        slot = kernel_search.memo_slot(grown_keys, key)
        assert grown_keys[slot] == key and grown_values[slot] == value
