"""The batched expert (agents/batched/expert.py) against ``agents.expert``: the same action in every
position, for the default, for each switch turned off and for all of them off, on every kind of table.

Positions are reached on the batched engine by random, greedy, planner and expert play (each seat
of each game plays one of them); at every few steps each game is converted to a rules-engine
``Game`` and ``ExpertBot(**switches).act(observe(game, seat))`` is compared with the kernel's
action. The kernels compile once (a minute or two cold, cached on disk afterwards).
"""

from __future__ import annotations

import inspect
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

import agents.expert as python_expert
import agents.planner as python_planner
from agents.batched import bots
from agents.batched import expert as kernel_expert
from agents.batched import planner as kernel_planner
from agents.expert import ExpertBot
from skipbo_env import Rules
from skipbo_env.actions import END_TURN, FIRST_DISCARD, PARTNER_DISCARD_SOURCE, PARTNER_STOCK_SOURCE
from skipbo_env.encoding import observe
from skipbo_env.game import Game
from skipbo_env.vector.engine import VectorGame
from tests.agents.test_batched_planner import TABLES

VARIANTS = [{}] + [{name: False} for name in kernel_expert.SWITCHES] + [
    {name: False for name in kernel_expert.SWITCHES}]
PLAYERS = ("random", "greedy", "planner", "expert")
BATCH = 6
STEPS = 240
SAMPLE_EVERY = 9


def mixed_play_actions(batch, streams, kinds, out):
    """Each game's next action by the bot (one of :data:`PLAYERS`) of the seat to act."""
    rows = np.arange(batch.batch_size)
    seat_kind = kinds[rows, batch.games["seat"]]
    chosen = np.empty(batch.batch_size, dtype=np.int64)
    for kind, name in enumerate(PLAYERS):
        bots.bot_actions(batch.games, batch.action_mask, batch.cfg, rows, streams, bots.kernel_bot_code(name), chosen)
        out[seat_kind == kind] = chosen[seat_kind == kind]


def compare_position(batch, row, coverage):
    """Every variant's kernel action in game ``row`` against ``ExpertBot``'s; returns the mismatches."""
    game = batch.to_game(row)
    observation = observe(game, game.current_seat)
    rows = np.array([row])
    streams = bots.new_streams(batch.batch_size)
    mismatches = []
    coverage["positions"] += 1
    coverage["stalled"] += not game.draw_pile and not game.completed
    coverage["deep discard pile"] += max(len(pile) for seat in game.discards for pile in seat) > 8
    for variant in VARIANTS:
        got = np.empty(1, dtype=np.int64)
        kernel_expert.expert_actions(batch.games, batch.action_mask, batch.cfg, rows, streams,
                                     kernel_expert.switch_mask(variant), got)
        expected = ExpertBot(**variant).act(observation)
        coverage["decisions"] += 1
        coverage["discard" if FIRST_DISCARD <= expected < END_TURN else "play" if expected < FIRST_DISCARD
                 else "end_turn"] += 1
        coverage["partner_play"] += PARTNER_STOCK_SOURCE * 4 <= expected < (PARTNER_DISCARD_SOURCE + 4) * 4
        if int(got[0]) != expected:
            mismatches.append((variant, int(got[0]), expected, game.to_dict()))
    return mismatches


@pytest.mark.parametrize("rules", TABLES, ids=lambda r: f"{r.num_players}p-{'partners-' + r.team_stock + '-' + r.team_win if r.partners else 'singles'}-stock{r.stock_size}-decks{r.decks}-{r.exhausted_draw}")
def test_the_kernel_expert_decides_as_agents_expert_in_every_position(rules):
    seed = rules.num_players * 100 + rules.stock_size
    batch = VectorGame(rules, BATCH, seed, observations=False, threads=1)
    streams = bots.seed_streams(np.random.default_rng(seed), BATCH)
    kinds = np.random.default_rng(seed).integers(0, len(PLAYERS), size=(BATCH, 6))
    kinds[:, 0] = PLAYERS.index("expert")  # an expert in every game
    actions = np.empty(BATCH, dtype=np.int64)
    coverage: Counter = Counter()
    mismatches = []
    for step in range(STEPS):
        if step % SAMPLE_EVERY == 0:
            for row in range(BATCH):
                mismatches += compare_position(batch, row, coverage)
        mixed_play_actions(batch, streams, kinds, actions)
        coverage["hands"] += batch.step(actions).num_hands
    assert not mismatches, f"{len(mismatches)} of {coverage['decisions']} decisions differ; first: {mismatches[0]}"
    assert coverage["positions"] == BATCH * len(range(0, STEPS, SAMPLE_EVERY))
    assert coverage["play"] and coverage["discard"]
    if rules.stock_size <= 8:
        assert coverage["hands"]  # positions of new deals too
    if rules.partners and rules.team_stock == "own":
        assert coverage["partner_play"]


def test_the_kernel_expert_decides_as_agents_expert_when_nothing_can_be_drawn_and_piles_run_deep():
    """Stalled hands (nothing left to draw: every play counts) and discard piles deeper than the
    observation shows: random play of a big deal gets there."""
    rules = Rules(num_players=2, stock_size=30)
    batch = VectorGame(rules, BATCH, 3, observations=False, threads=1)
    streams = bots.seed_streams(np.random.default_rng(3), BATCH)
    actions = np.empty(BATCH, dtype=np.int64)
    coverage: Counter = Counter()
    mismatches = []
    for step in range(2500):
        stalled = np.flatnonzero((batch.games["draw_len"] == 0) & (batch.games["completed_len"] == 0))
        if step % 7 == 0:
            for row in stalled.tolist():
                mismatches += compare_position(batch, row, coverage)
        if coverage["stalled"] >= 40:
            break
        bots.random_actions(batch.games, batch.action_mask, streams, np.arange(BATCH), actions)
        batch.step(actions)
    assert coverage["stalled"] >= 40 and coverage["deep discard pile"]
    assert not mismatches, f"{len(mismatches)} of {coverage['decisions']} decisions differ; first: {mismatches[0]}"


def test_the_kernel_expert_reads_only_what_the_seat_may_see():
    """Other hands, the cards under the stockpile tops and the draw pile's order change nothing (the
    unseen counts the expert's chances come from are the same)."""
    rules = Rules(num_players=3, stock_size=8)
    batch = VectorGame(rules, 1, 0, observations=False, threads=1)
    streams = bots.seed_streams(np.random.default_rng(0), 1)
    rows = np.arange(1)
    rng = np.random.default_rng(1)
    mask = kernel_expert.switch_mask({})
    compared = 0
    for _ in range(300):
        state = batch.to_dict(0)
        before = np.empty(1, dtype=np.int64)
        kernel_expert.expert_actions(batch.games, batch.action_mask, batch.cfg, rows, streams, mask, before)
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
        kernel_expert.expert_actions(other.games, other.action_mask, other.cfg, rows, streams, mask, after)
        assert after[0] == before[0]
        compared += 1
        batch.step(before)
    assert compared == 300


# ---------------------------------------------------------------------------- the arithmetic of the chances
def tie_prone_chances() -> list[float]:
    """Shares ``c / t`` and their means, many of them a hair from a half of ``10**-4`` (``t`` = 160: every odd ``c``)."""
    shares = [c / t for t in range(1, 200) for c in range(t + 1)]
    means = [(a + b) / 2 for a, b in zip(shares[::7], shares[3::7])]
    return shares + means + [0.00015, 0.00025, 0.08125, 0.11250, 0.5, 1.0, 0.0]


def test_the_kernel_rounds_the_chances_as_pythons_round():
    values = tie_prone_chances() + np.random.default_rng(0).random(20000).tolist()
    got = [kernel_expert.rounded(x) for x in values]
    expected = [round(x, python_expert.ODDS_DIGITS) for x in values]
    assert got == expected
    halves = sum(Fraction(x) * 10**python_expert.ODDS_DIGITS % 1 != Fraction(1, 2) and
                 math.floor(x * 10**python_expert.ODDS_DIGITS) + 0.5 == x * 10**python_expert.ODDS_DIGITS
                 for x in values)
    assert halves > 50  # the float product is a half where the exact one is not: the case a plain round misses


def test_the_kernel_fill_chance_is_agents_experts_float_for_float():
    for cards in range(6):
        for missing in range(6):
            for per_value in (0.0, 0.0741, 0.0813, 0.25, 1.0):
                for per_wild in (0.0, 0.1111, 0.5):
                    assert kernel_expert.fill_chance(cards, missing, per_value, per_wild) == \
                           python_expert.fill_chance(cards, missing, per_value, per_wild)


# ---------------------------------------------------------------------------- weights and names
def test_the_kernel_weights_and_switches_are_agents_experts():
    for name in ("THREAT", "PROSPECT", "DRAW", "WILD_COST", "ENDGAME", "DISCARD_MARGIN", "ODDS_DIGITS"):
        assert getattr(kernel_expert, name) == getattr(python_expert, name), name
    assert tuple(kernel_expert.DISCARD_WEIGHTS) == python_expert.DISCARD_WEIGHTS  # shape, coverage, reach
    for name in ("STOCK", "HAND_PLAY", "DISCARD_PLAY", "PARTNER", "STALL_PLAY", "STALL_COMPLETE", "STALL_FEED"):
        assert getattr(kernel_expert, name) == getattr(python_planner, name), name
    parameters = inspect.signature(ExpertBot).parameters
    assert {name: parameters[name].default for name in kernel_expert.SWITCHES} == kernel_expert.DEFAULTS
    assert set(parameters) == {"seed", *kernel_expert.SWITCHES}


def test_expert_specs_name_their_kernel_bot_and_bad_options_are_refused():
    first = bots.FIRST_CODE["expert"]
    assert bots.kernel_bot_code("expert") == first + kernel_expert.switch_mask({})
    assert bots.kernel_bot_code("e=expert:threat=false,card_counting=FALSE") == first + \
        kernel_expert.switch_mask({"threat": False, "card_counting": False})
    assert bots.kernel_bot_of(bots.kernel_bot_code("expert:threat=false")) == \
        ("expert", kernel_expert.switch_mask({"threat": False}))
    with pytest.raises(ValueError, match="the expert has no option 'search'; its options: card_counting, threat"):
        bots.kernel_bot_code("expert:search=true")
    with pytest.raises(ValueError, match="option threat takes true or false, not 'no'"):
        bots.kernel_bot_code("expert:threat=no")


def test_every_kernel_bot_labels_positions_through_bot_actions():
    """``bot_actions`` gives, for any kernel bot code, the action its own kernel gives."""
    rules = Rules(num_players=2, stock_size=10)
    batch = VectorGame(rules, 8, 5, observations=False, threads=1)
    streams = bots.seed_streams(np.random.default_rng(5), 8)
    rows = np.arange(8)
    labels, direct = np.empty(8, dtype=np.int64), np.empty(8, dtype=np.int64)
    for _ in range(30):
        for spec, kernel in (("expert:own_prospects=false", kernel_expert.expert_actions),
                             ("planner:smart_discard=false", kernel_planner.planner_actions)):
            code = bots.kernel_bot_code(spec)
            before = streams.copy()
            bots.bot_actions(batch.games, batch.action_mask, batch.cfg, rows, streams, code, labels)
            kernel(batch.games, batch.action_mask, batch.cfg, rows, before, bots.kernel_bot_of(code)[1], direct)
            assert labels.tolist() == direct.tolist()
        batch.step(labels)
