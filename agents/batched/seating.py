"""Who plays which seat of each hand of a batch, and the loop that lets them move.

Each seat of each game is played by one of: a kernel bot (``random``, ``greedy``, ``planner``: moved inside
the kernels, many actions per call), an *external* batch policy (a network, a Python policy:
asked for a batch of actions once per round, one forward pass per policy), or the *caller*
(the learner of the VecEnv): :meth:`Seating.advance` stops when the caller is to act.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from skipbo_env.game import IllegalActionError
from skipbo_env.rules import MAX_PLAYERS, Rules
from skipbo_env.vector.engine import SEARCH_ROWS_PER_THREAD, VectorGame
from skipbo_env.vector.layout import CALLER
from agents import registry
from agents.batched import bots, neural
from agents.batched.policies import KernelBot, batch_policy, checked_actions



class Seating:
    """The players of a :class:`VectorGame`'s seats; ``policies`` are batch policies (see ``policies.batch_policy``)."""

    def __init__(self, engine: VectorGame, policies: list) -> None:
        self.engine = engine
        self.policies = list(policies)
        b = engine.batch_size
        self.kernel_bots = np.full((b, MAX_PLAYERS), bots.OTHER, dtype=np.int64)
        self.players = np.full((b, MAX_PLAYERS), CALLER, dtype=np.int64)
        self.streams = bots.new_streams(b)
        self.actions_taken = 0

    def assign(self, rows: np.ndarray, players: np.ndarray, salt=0) -> None:
        """``players[i, seat]`` (an index into ``policies``, or ``CALLER``) plays ``seat`` of game ``rows[i]``.

        The kernel bot in each seat of a hand draws from a generator seeded from the hand's seed,
        ``salt`` (a number, or one per row) and the seat.
        """
        n = self.engine.cfg.num_players
        self.players[rows, :n] = players
        codes = np.array([p.code if isinstance(p, KernelBot) else bots.OTHER for p in self.policies] + [bots.OTHER])
        self.kernel_bots[rows, :n] = codes[players]  # CALLER (-1) picks the trailing OTHER
        bots.seed_rows(self.streams, rows, bots.streams_for(self.engine.seeds[rows], salt))

    def advance(self, rows: np.ndarray) -> None:
        """Play every seat but the caller's in ``rows`` until the caller is to act or the hand is over."""
        engine = self.engine
        games = engine.games
        pending = np.asarray(rows, dtype=np.int64)
        while len(pending):
            steps = np.zeros(len(pending), dtype=np.int64)
            engine.run_rows(bots.play_bots, pending, (games, engine.action_mask, engine.cfg, self.kernel_bots, self.streams),
                        (steps,), min_rows=SEARCH_ROWS_PER_THREAD)
            self.actions_taken += int(steps.sum())
            running = pending[games["outcome"][pending] == 0]
            player = self.players[running, games["seat"][running]]
            moved = []
            for index in np.unique(player[player != CALLER]).tolist():
                chosen = running[player == index]
                self._ask(index, chosen)
                moved.append(chosen)
            pending = np.concatenate(moved) if moved else pending[:0]

    def _ask(self, index: int, rows: np.ndarray) -> None:
        policy = self.policies[index]
        engine = self.engine
        actions = checked_actions(policy.act_batch(engine.observe(rows), engine.action_mask[rows]), len(rows), policy)
        try:
            engine.step_rows(rows, actions)
        except IllegalActionError as error:
            raise IllegalActionError(f"player {index} ({policy!r}) chose an illegal action: {error}") from None
        self.actions_taken += len(rows)


class BatchOpponents:
    """The players of a :class:`~skipbo_env.envs.vec_env.SkipBoVecEnv`'s other seats: batch players
    (see :func:`agents.batched.policies.batch_policy`), seated in an engine by :meth:`seat`."""

    def __init__(self, players: list) -> None:
        self.players = list(players)

    @property
    def count(self) -> int:
        return len(self.players)

    def seat(self, engine: VectorGame) -> Seating:
        return Seating(engine, self.players)

    def __repr__(self) -> str:
        return f"BatchOpponents({self.players!r})"


def batch_opponents(specs, seed: int = 0) -> BatchOpponents:
    """One spec for every other seat, or a list with one per other seat (bot names such as ``"greedy"``
    or ``"planner:avoid_feeding=false"``, networks, SB3 models, batch players, callables)."""
    specs = list(specs) if isinstance(specs, (list, tuple)) else [specs]
    if not specs:
        raise ValueError("batch_opponents needs at least one player: one for all other seats, or one per seat")
    return BatchOpponents([batch_policy(spec, seed=seed + k) for k, spec in enumerate(specs)])


def compile_kernels(decks: int = 1, bots: tuple[str, ...] | None = None, with_neural: bool = True) -> None:
    """Compile (or load from numba's cache) every kernel a batch of ``decks``-deck hands uses: the
    deal, the rules, the mask, the observation, the kernel ``bots`` (all of
    ``agents.registry.KERNEL_BOTS`` by default) and, ``with_neural``, the neural bot's search
    (:func:`agents.batched.neural.warm_up`). A few seconds from a warm
    cache; about a minute of one core from a cold one (``benchmarks/compile_time.py``). The test
    suite calls it once before its workers start, so they load the kernels instead of each
    compiling them."""
    bots = registry.KERNEL_BOTS if bots is None else bots
    engine = VectorGame(Rules(num_players=2, decks=decks, stock_size=3), 4, seed=0, threads=1)
    seating = Seating(engine, [batch_policy(name) for name in bots])
    rows = np.arange(4)
    seating.assign(rows, np.array([[row % len(bots), (row + 1) % len(bots)] for row in rows]))
    seating.advance(rows)
    engine.reset(1)
    engine.observe(rows)
    engine.step(engine.action_mask.argmax(axis=1))
    if with_neural:
        neural.warm_up(engine.observe(rows), engine.action_mask[rows].copy())


def start_compiling_bots(decks: int = 1):
    """Start compiling (or loading) the kernel bots and the engine, as :func:`compile_kernels` without the
    neural bot, in a second process; returns it (``subprocess.Popen``: ``wait()`` for it). The caller compiles
    its own kernels meanwhile, on the other core, and then loads these from numba's cache: on two cores that
    halves the wait of a cold start. Its output is dropped; should it fail, the caller compiles the bots itself
    when it first plays them."""
    code = f"from agents.batched.seating import compile_kernels; compile_kernels(decks={int(decks)}, with_neural=False)"
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
