"""The differential check: the batched engine against the rules engine, state by state.

:func:`differential_run` plays hands in both engines with the same seeds and the same actions
(a mix of the batched ``greedy`` bot, which completes building piles and wins, and uniformly
random moves, which exhaust the draw pile) and after every step compares, for every game, the
full state (``to_dict()``, which includes the generator's state), the action mask and the
observation vectors. The first difference raises :class:`Mismatch` naming the game, its seed,
the step and the fields that differ. tests/test_vector_engine.py runs it at a size that keeps
the suite fast; ``benchmarks/vector_speed.py --verify N`` runs it at any size.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from skipbo_env.actions import END_TURN, PARTNER_STOCK_SOURCE, is_play, play_source
from skipbo_env.encoding import encode_observation
from skipbo_env.game import Game
from skipbo_env.rules import Rules
from skipbo_env.vector.engine import VectorGame
from skipbo_env.vector.layout import OUTCOME_NAMES


class Mismatch(AssertionError):
    """The two engines disagree."""


def differential_run(rules: Rules, choose, hands: int = 100, seed: int = 0, batch_size: int = 16) -> Counter:
    """Play ``hands`` hands in both engines and compare after every step; returns what was covered.

    ``choose(engine, rows) -> actions`` picks the next action of every game of the batch (the same
    action is then played in both engines): any legal chooser will do, and one that plays well
    (``agents.batched.bots.mixed_chooser``: greedy and random play) reaches wins and reshuffles.

    The counter holds ``steps`` (game-steps compared), ``hands`` and, per hand or action, ``win``,
    ``draw``, ``truncated``, ``recycle`` (hands whose completed piles were reshuffled),
    ``end_turn`` and ``partner_play`` (actions taken) and ``turn_play_limit`` (positions in which
    ``max_turn_plays`` forbids further plays), so a caller can check that the run reached the
    rules it means to test.
    """
    engine = VectorGame(rules, batch_size, seed, threads=1)
    games = [Game.new(rules, seed=seed + row) for row in range(batch_size)]
    dealt_rng = [game.to_dict()["rng"] for game in games]
    rows = np.arange(batch_size)
    coverage: Counter = Counter()
    step = 0
    n = rules.num_players
    while coverage["hands"] < hands:
        _compare(engine, games, step, n)
        coverage["steps"] += batch_size
        actions = np.asarray(choose(engine, rows), dtype=np.int64)
        for row, action in enumerate(actions.tolist()):
            games[row].step(action)
            coverage["end_turn"] += action == END_TURN
            coverage["partner_play"] += is_play(action) and play_source(action) >= PARTNER_STOCK_SOURCE
            coverage["turn_play_limit"] += games[row].plays_this_turn == rules.max_turn_plays
        finished = engine.step(actions)
        for i, row in enumerate(finished.rows.tolist()):
            game = games[row]
            _check_finished(finished, i, game, step)
            coverage["hands"] += 1
            coverage[game.outcome] += 1
            coverage["recycle"] += game.to_dict()["rng"] != dealt_rng[row]
            games[row] = Game.new(rules, seed=int(engine.seeds[row]))
            dealt_rng[row] = games[row].to_dict()["rng"]
        step += 1
    return coverage


def _compare(engine: VectorGame, games: list[Game], step: int, n: int) -> None:
    others = (engine.current_seat + 1 + step % max(n - 1, 1)) % n
    other_views = engine.observe(seats=others)
    for row, game in enumerate(games):
        where = f"game {row} (seed {game.seed}) after {step} steps"
        mine, theirs = engine.to_dict(row), game.to_dict()
        if mine != theirs:
            fields = [key for key in sorted(set(mine) | set(theirs)) if mine.get(key) != theirs.get(key)]
            raise Mismatch(f"{where}: states differ in {fields}: batched {[mine.get(k) for k in fields]} "
                           f"vs rules engine {[theirs.get(k) for k in fields]}")
        if not np.array_equal(engine.action_mask[row], game.action_mask()):
            raise Mismatch(f"{where}: masks differ: batched {np.flatnonzero(engine.action_mask[row]).tolist()} "
                           f"vs rules engine {game.legal_actions()}")
        for seat, vector in ((game.current_seat, engine.obs[row]), (int(others[row]), other_views[row])):
            expected = encode_observation(game, seat)
            if not np.array_equal(vector, expected):
                where_diff = np.flatnonzero(vector != expected).tolist()
                raise Mismatch(f"{where}: observations for seat {seat} differ at {where_diff}: batched "
                               f"{vector[where_diff].tolist()} vs {expected[where_diff].tolist()}")


def _check_finished(finished, i: int, game: Game, step: int) -> None:
    where = f"hand with seed {game.seed}, ended at step {step}"
    if not game.is_over:
        raise Mismatch(f"{where}: the batched engine ended it, the rules engine did not")
    reported = (OUTCOME_NAMES[finished.outcome[i]], np.flatnonzero(finished.winners[i]).tolist(),
                finished.points[i].tolist(), int(finished.seeds[i]), int(finished.turns[i]))
    expected = (game.outcome, list(game.winners), list(game.points()), game.seed, game.turn)
    if reported != expected:
        raise Mismatch(f"{where}: reported (outcome, winners, points, seed, turns) {reported}, expected {expected}")
