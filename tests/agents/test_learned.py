"""The learned bot: its kernel (agents/batched/learned.py) against its Python twin (agents/learned.py),
the expert's valuation as one setting of its weights, its weights file, and whole games.

Positions are reached on the batched engine by mixed random, greedy, planner and expert play; at
sampled positions the game is converted to a rules-engine ``Game`` and compared.
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from agents import load_policy
from agents.batched import bots
from agents.batched import learned as kernel_learned
from agents.expert import ExpertBot, ExpertTurn
from agents.learned import LearnedBot, LearnedTurn
from agents.learned_parameters import (
    FEATURES, NUM_FEATURES, NUM_PARAMETERS, PARAMETERS, parameter_dict, parameter_vector, read_parameters,
)
from agents.loading import PolicySpecError
from agents.planner import DISCARD_PLAY, HAND_PLAY, PARTNER, STALL_COMPLETE, STALL_FEED, STALL_PLAY, STOCK
from skipbo_env import Rules
from skipbo_env.actions import END_TURN, FIRST_DISCARD, STOCK_SOURCE, play_source
from skipbo_env.encoding import decode_observation, observe
from skipbo_env.vector.engine import VectorGame
from skipbo_env.vector.jit import jit
from tests.agents.test_batched_expert import mixed_play_actions

import agents.expert_weights as python_expert

TABLES = [
    Rules(num_players=2, stock_size=30),
    Rules(num_players=3, stock_size=8, exhausted_draw="draw"),
    Rules(num_players=4, partners=True, stock_size=6),
]
BATCH = 4
STEPS = 150
SAMPLE_EVERY = 10
PLAYERS = ("random", "greedy", "planner", "expert")


def expert_parameters() -> np.ndarray:
    """The weights under which the learned valuation is the expert's (``agents.expert``)."""
    threat, endgame = python_expert.THREAT, python_expert.ENDGAME
    return parameter_vector({
        "stock_cards": 1.0, "hand_numbers": HAND_PLAY / STOCK, "hand_wilds": HAND_PLAY / STOCK,
        "discard_numbers": DISCARD_PLAY / STOCK, "discard_wilds": DISCARD_PLAY / STOCK,
        "idle_wilds": -python_expert.WILD_COST, "emptied_hand": python_expert.DRAW,
        "threat": -threat, "threat_endgame": -threat * endgame,
        "stalled_threat": -threat * (STALL_FEED - 1.0), "stalled_threat_endgame": -threat * endgame * (STALL_FEED - 1.0),
        "prospect": python_expert.PROSPECT, "prospect_endgame": 0.0, "partner": PARTNER / STOCK,
        "stalled_plays": STALL_PLAY / STOCK, "stalled_completed": STALL_COMPLETE / STOCK,
        "discard_shape": python_expert.DISCARD_SHAPE, "discard_coverage": python_expert.COVERAGE, "discard_reach": 1.0,
    })


def weights_file(tmp_path, vector, name="weights.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"parameters": parameter_dict(vector)}))
    return str(path)


def search_states(turn, limit=300):
    """Up to ``limit`` positions a turn's search reaches from its root (depth first, the search's moves)."""
    root = (turn.needs, turn.hand, tuple(len(p) for p in turn.my_piles), tuple(len(p) for p in turn.partner_piles), 0, 0)
    states, stack = [], [root]
    while stack and len(states) < limit:
        state = stack.pop()
        states.append(state)
        for action in turn.moves(state):
            child, _ = turn.apply(state, action)
            if child is not None:
                stack.append(child)
    return states


def sampled_positions(rules, seed):
    """``(batch, row)`` at every few steps of mixed play (one game of the batch after another)."""
    batch = VectorGame(rules, BATCH, seed, observations=False, threads=1)
    streams = bots.seed_streams(np.random.default_rng(seed), BATCH)
    kinds = np.random.default_rng(seed).integers(0, len(PLAYERS), size=(BATCH, 6))
    actions = np.empty(BATCH, dtype=np.int64)
    for step in range(STEPS):
        if step % SAMPLE_EVERY == 0:
            for row in range(BATCH):
                yield batch, row
        mixed_play_actions(batch, streams, kinds, actions)
        batch.step(actions)


@jit
def decide_row(games, legal, cfg, g, parameters, out):
    """``out`` = the kernel learned bot's action in game ``g`` and the positions its search valued."""
    out[0], out[1] = kernel_learned.learned_decision(games[g], legal, g, cfg, parameters)


@pytest.mark.parametrize("rules", TABLES, ids=lambda r: f"{r.num_players}p-stock{r.stock_size}")
def test_the_kernel_learned_bot_decides_as_agents_learned_in_every_position(rules, tmp_path):
    """The same action, and the same count of positions searched (the count sNES training refuses a candidate
    by: ``training.snes.trainer.MAX_POSITIONS``)."""
    rng = np.random.default_rng(rules.num_players)
    settings = [expert_parameters() * rng.uniform(0.2, 3.0, NUM_PARAMETERS) + rng.normal(0, 0.05, NUM_PARAMETERS),
                rng.normal(0, 1.0, NUM_PARAMETERS)]
    python_bots = [LearnedBot(weights=weights_file(tmp_path, vector, f"w{k}.json")) for k, vector in enumerate(settings)]
    coverage: Counter = Counter()
    mismatches = []
    for batch, row in sampled_positions(rules, 11 * rules.num_players):
        game = batch.to_game(row)
        observation = observe(game, game.current_seat)
        for vector, python_bot in zip(settings, python_bots):
            got = np.empty(2, dtype=np.int64)
            decide_row(batch.games, batch.action_mask, batch.cfg, row, vector, got)
            nodes = python_bot.nodes
            expected = (python_bot.act(observation), python_bot.nodes - nodes)
            coverage["play" if expected[0] < FIRST_DISCARD else "other"] += 1
            coverage["searched"] += expected[1] > 0
            if tuple(got) != expected:
                mismatches.append((parameter_dict(vector), tuple(got), expected, game.to_dict()))
    assert not mismatches, f"{len(mismatches)} (action, positions searched) differ; first: {mismatches[0]}"
    assert coverage["play"] and coverage["other"] and coverage["searched"]


@pytest.mark.parametrize("rules", TABLES[:2], ids=lambda r: f"{r.num_players}p-stock{r.stock_size}")
def test_the_kernel_features_of_a_position_are_the_python_references(rules):
    nonzero: Counter = Counter()
    for batch, row in sampled_positions(rules, 5):
        game = batch.to_game(row)
        view = decode_observation(observe(game, game.current_seat)["observation"])
        turn = LearnedTurn(view, LearnedBot())
        root = (turn.needs, turn.hand, tuple(len(p) for p in turn.my_piles), tuple(len(p) for p in turn.partner_piles),
                0, 0)
        got = np.empty(NUM_FEATURES)
        kernel_learned.position_features(batch.games[row], batch.action_mask, row, batch.cfg, got)
        assert got.tolist() == turn.features(root)
        nonzero.update(name for name, value in zip(FEATURES, got) if value)
    assert nonzero["threat"] and nonzero["threat_endgame"] and nonzero["prospect"]


def test_expert_weights_value_every_stop_as_the_expert_does(tmp_path):
    """Under :func:`expert_parameters` the learned valuation is the expert's, up to the rounding of a sum
    taken in another order, and the two bots decide alike."""
    learned = LearnedBot(weights=weights_file(tmp_path, expert_parameters()))
    expert = ExpertBot()
    compared, same = 0, 0
    for batch, row in sampled_positions(TABLES[0], 3):
        game = batch.to_game(row)
        observation = observe(game, game.current_seat)
        view = decode_observation(observation["observation"])
        ours, theirs = LearnedTurn(view, learned), ExpertTurn(view, expert)
        for state in search_states(ours):
            assert ours.stop_value(state) == pytest.approx(theirs.stop_value(state), rel=1e-12, abs=1e-9)
        compared += 1
        same += learned.act(observation) == expert.act(observation)
    assert same == compared


def test_neutral_weights_play_a_stockpile_card_when_they_can_and_else_discard_the_lowest_id(tmp_path):
    """With only ``stock_cards`` weighted (the training's start) a stockpile play beats stopping, and every
    discard ties, so the first legal one is taken."""
    neutral = np.zeros(NUM_PARAMETERS)
    neutral[PARAMETERS.index("stock_cards")] = 1.0
    bot = LearnedBot(weights=weights_file(tmp_path, neutral))
    rules = Rules(num_players=2, stock_size=30)
    batch = VectorGame(rules, 64, 0, observations=False, threads=1)
    checked = Counter()
    for row in range(64):
        game = batch.to_game(row)
        observation = observe(game, game.current_seat)
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        action = bot.act(observation)
        if any(a < FIRST_DISCARD and play_source(a) == STOCK_SOURCE for a in legal):
            assert play_source(action) == STOCK_SOURCE
            checked["stock"] += 1
        elif FIRST_DISCARD <= action < END_TURN:
            assert action == min(a for a in legal if FIRST_DISCARD <= a < END_TURN)
            checked["discard"] += 1
    assert checked["stock"] and checked["discard"]


def games_on_both_engines(agents: list[str], games: int, seed: int) -> dict:
    """Each engine's tournament games of ``agents`` (two players, 5-card stockpiles) as comparable tuples."""
    from evaluation import run_tournament

    played = {}
    for engine in ("python", "vector"):
        result = run_tournament(agents, games=games, seed=seed, rules=Rules(num_players=2, stock_size=5),
                                engine=engine)
        assert result.error is None
        assert len(result.games) == games and all(game.outcome == "win" for game in result.games)
        played[engine] = [(game.seed, game.winners, game.turns, game.seat_actions) for game in result.games]
    return played


def test_the_shipped_bot_plays_legal_actions_through_whole_games():
    """``learned`` on both engines: whole hands to their end, every action legal (the engines refuse others)."""
    played = games_on_both_engines(["learned", "greedy"], games=6, seed=3)
    assert played["python"] == played["vector"]  # the twin and the kernel play the same games, move for move


def test_learned_is_a_kernel_bot_and_a_policy():
    assert bots.kernel_bot_code("learned") == bots.FIRST_CODE["learned"]
    assert bots.kernel_bot_code("l=learned") == bots.FIRST_CODE["learned"]
    assert bots.kernel_bot_code("learned:weights=x.json") is None  # other weights: the rules engine plays them
    assert isinstance(load_policy("learned"), LearnedBot)
    assert kernel_learned.SHIPPED[0].tolist() == read_parameters().tolist()


def test_every_shipped_model_is_the_learned_bot_with_its_weights_in_both_engines():
    from agents.learned_parameters import PRETRAINED_WEIGHTS

    for row, (name, path) in enumerate(PRETRAINED_WEIGHTS.items()):
        policy = load_policy(name)
        assert isinstance(policy, LearnedBot) and policy.weights_file == path
        assert bots.kernel_bot_code(name) == bots.FIRST_CODE["learned"] + row
        assert kernel_learned.SHIPPED[row].tolist() == read_parameters(path).tolist()
    assert kernel_learned.VARIANTS == len(PRETRAINED_WEIGHTS)
    assert max(bots.FIRST_CODE.values()) + len(PRETRAINED_WEIGHTS) <= kernel_learned.TABLE_CODES


def test_the_shipped_two_player_model_plays_the_same_games_on_both_engines():
    played = games_on_both_engines(["pretrained-2p", "planner"], games=4, seed=5)
    assert played["python"] == played["vector"]


def test_a_weights_file_is_read_as_numbers_and_a_bad_one_is_refused(tmp_path):
    good = weights_file(tmp_path, np.arange(NUM_PARAMETERS, dtype=float))
    assert load_policy(f"learned:weights={good}").parameters == list(range(NUM_PARAMETERS))
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps({"parameters": {"stock_cards": 1.0}}))
    with pytest.raises(PolicySpecError, match="missing .*'hand_numbers'"):
        load_policy(f"learned:weights={missing}")
    text = tmp_path / "text.json"
    text.write_text(json.dumps({"parameters": {**parameter_dict(np.zeros(NUM_PARAMETERS)), "threat": "high"}}))
    with pytest.raises(ValueError, match="every weight must be a finite number"):
        read_parameters(str(text))
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match="cannot be read"):
        read_parameters(str(broken))
