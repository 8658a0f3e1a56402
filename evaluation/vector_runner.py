"""The vector runner: the engine choice, and the games of a schedule played on the batched engine.

``python`` plays every game on the rules engine (:mod:`evaluation.python_runner`): any policy
plays. ``vector`` plays the same schedule (the same game seeds, so the same deals, and the same
seatings) on the batched engine of :mod:`skipbo_env.vector`, thousands of games at once:
``random``, ``greedy``, ``planner``, ``expert`` (with any of their options) and ``learned`` move inside its numba kernels
(a whole turn per call), networks (saved ``.zip``/``.pt`` models, any policy with
``logits(observations)``) take one batched forward pass per step, and batch players (an object
with ``act_batch(observations, masks)`` and no ``act``, or a plain callable ``f(observations,
masks)``) are asked once per step for all their games; batch players play only here. ``auto``
(the command's default) picks ``vector`` when every agent plays here and no game records are
asked for, otherwise ``python``. A kernel bot in seat ``s`` of game ``i`` draws from the same
generator as the ``agents`` bot there (``default_rng`` of the seat's policy seed, reproduced in
the kernels, see :mod:`agents.batched.bots`) and decides as it does, so the bots play the same
games, move for move, on both engines (tests/evaluation/test_evaluate_vector.py), as do
deterministic networks (argmax). On ``vector``, ms/action is the agent's share of the calls that
chose its moves: for a kernel bot that includes stepping the engine, for a network its forward
passes. ``workers`` are the threads of its kernels there: the deals and steps, the kernel bots' turns,
and the batches of a batch player that allows it (``concurrent_batches``, see :mod:`agents.batched.policies`). The batched engine keeps no action history, so it cannot save game
records.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.rules import Rules
from skipbo_env.vector import OUTCOME_NAMES, VectorGame
from skipbo_env.vector.engine import SEARCH_ROWS_PER_THREAD
from skipbo_env.vector.layout import RUNNING
from agents.batched import bots
from agents.batched.bots import kernel_bot_code
from agents.batched.policies import KernelBot, batch_policy
from agents.registry import KERNEL_SPECS
from evaluation.errors import POLICY_FAILURES, AgentError, EngineError
from evaluation.results import GameResult, TournamentResult
from evaluation.schedule import NETWORK_KEY, GameSpec, derived_seed

ENGINES = ("auto", "python", "vector")
VECTOR_PLAYERS = (f"the kernel bots ({KERNEL_SPECS}: played inside their kernels), "
                  "networks (saved .zip/.pt models, policies with logits(observations)), played with one batched forward pass "
                  "per step, batch players (act_batch(observations, masks) without act, or a callable "
                  "f(observations, masks)) and record players (act_rows(engine, rows, observations, masks): they "
                  "read the games' records, as the residual bot does)")
VECTOR_BATCH = 2048
"""Games the batched engine plays at once."""


def is_batch_player(agent) -> bool:
    """An agent only the batched engine plays: an object with ``act_batch`` (or ``act_rows``, a player that reads
    the games' records) and no ``act``, or a plain callable
    ``f(observations, masks) -> actions`` (see :mod:`agents.batched.policies`)."""
    if isinstance(agent, str):
        return False
    return not hasattr(agent, "act") and (hasattr(agent, "act_rows") or hasattr(agent, "act_batch")
                                          or callable(agent))


def vector_kind(agent, policy) -> str | None:
    """How the batched engine plays an agent (its spec and its loaded policy): ``"kernel bot"``,
    ``"network"``, ``"batch player"``, or ``None`` when it cannot."""
    if kernel_bot_code(agent) is not None:
        return "kernel bot"
    if callable(getattr(policy, "logits", None)):
        return "network"
    if is_batch_player(policy) or any(callable(getattr(policy, way, None)) for way in ("act_batch", "act_rows")):
        return "batch player"
    return None


def choose_engine(engine: str, names: Sequence[str], agents: Sequence, policies: Sequence,
                  save_dir: str | None = None) -> tuple[str, str]:
    """``(engine, why)``: the engine that plays the tournament; :class:`EngineError` when the engine
    asked for (or, for ``auto``, either engine) cannot play it (see the module docstring)."""
    if engine not in ENGINES:
        raise EngineError(f"engine={engine!r} is not allowed: use one of {', '.join(ENGINES)}")
    if engine == "vector":
        _check_vector(names, agents, policies, save_dir)
        return "vector", "asked for"
    chosen, why = ("python", "asked for") if engine == "python" else _auto(names, agents, policies, save_dir)
    batch_only = [name for name, agent, policy in zip(names, agents, policies)
                  if is_batch_player(agent) or is_batch_player(policy)]
    if chosen == "python" and batch_only:
        way_out = "use engine='vector' (or 'auto')" if engine == "python" else f"but {why.removeprefix('auto: ')}"
        raise EngineError(f"agent {batch_only[0]!r} is a batch player, which plays only on the vector engine; "
                          f"{way_out}")
    return chosen, why


def _unsupported(names: Sequence[str], agents: Sequence, policies: Sequence) -> list[str]:
    return [name for name, agent, policy in zip(names, agents, policies) if vector_kind(agent, policy) is None]


def _check_vector(names: Sequence[str], agents: Sequence, policies: Sequence, save_dir: str | None) -> None:
    """Raise :class:`EngineError` when the vector engine cannot play the tournament."""
    unsupported = _unsupported(names, agents, policies)
    if unsupported:
        raise EngineError(f"agent {unsupported[0]!r} cannot play on the vector engine, which plays "
                          f"{VECTOR_PLAYERS}; use --engine python (or auto)")
    if save_dir is not None:
        raise EngineError("--save-games needs every action of a game, which the vector engine does not keep; "
                          "use --engine python (or auto)")


def _auto(names: Sequence[str], agents: Sequence, policies: Sequence, save_dir: str | None) -> tuple[str, str]:
    unsupported = _unsupported(names, agents, policies)
    if unsupported:
        return "python", f"auto: {unsupported[0]!r} plays only on the python engine"
    if save_dir is not None:
        return "python", "auto: saving game records needs the python engine"
    return "vector", "auto: every agent plays on the batched engine"


class VectorTable:
    """The games of a schedule played on the batched engine, a batch of them at a time.

    Each loop round lets every game move once: a kernel bot to act plays its whole turn inside
    one kernel call, any other agent (a network) takes one action, its batch of games in one
    ``act_batch`` call. The table keeps per game and seat what the harness's game rows hold:
    turns, actions and the agent's seconds.
    """

    def __init__(self, specs: list[GameSpec], names: list[str], agents: Sequence, policies: Sequence,
                 rules: Rules, threads: int, seed: int) -> None:
        self.kernel_bots = bots
        self.search_rows = SEARCH_ROWS_PER_THREAD
        self.specs, self.names = specs, names
        self.players = [batch_policy(agent if vector_kind(agent, policy) == "kernel bot" else policy,
                                     seed=derived_seed(seed, index, NETWORK_KEY))
                        for index, (agent, policy) in enumerate(zip(agents, policies))]
        self.codes = np.array([p.code if isinstance(p, KernelBot) else bots.OTHER for p in self.players])
        self.batch = VectorGame(rules, min(VECTOR_BATCH, len(specs)), auto_reset=False, observations=False,
                                threads=threads)
        b, n = self.batch.batch_size, rules.num_players
        self.game_of_row = np.full(b, -1, dtype=np.int64)
        self.agent_at = np.zeros((b, n), dtype=np.int64)
        self.controllers = np.full((b, n), bots.OTHER, dtype=np.int64)
        self.streams = bots.new_streams(b)
        self.turn_seen = np.zeros(b, dtype=np.int64)
        self.seat_turns = np.zeros((b, n), dtype=np.int64)
        self.seat_actions = np.zeros((b, n), dtype=np.int64)
        self.seat_seconds = np.zeros((b, n), dtype=np.float64)

    def play(self, result: TournamentResult, bar) -> None:
        """Play every game, appending each to ``result.games`` as it ends; raises :class:`AgentError`."""
        games = self.batch.games
        next_spec = 0
        while True:
            idle = np.flatnonzero(self.game_of_row < 0)[:len(self.specs) - next_spec]
            if len(idle):
                self._deal(idle, self.specs[next_spec:next_spec + len(idle)])
                next_spec += len(idle)
            live = np.flatnonzero(self.game_of_row >= 0)
            if not len(live):
                return
            seats = games["seat"][live]
            self._count_turns(live, seats)
            agents = self.agent_at[live, seats]
            for agent in np.unique(agents).tolist():
                chosen = agents == agent
                if self.codes[agent] != self.kernel_bots.OTHER:
                    self._play_bot_turns(agent, live[chosen], seats[chosen])
                else:
                    self._ask(agent, live[chosen], seats[chosen])
            self._collect(live, result, bar)

    def close(self) -> None:
        self.batch.close()

    def _deal(self, rows: np.ndarray, specs: list[GameSpec]) -> None:
        seeds = np.array([spec.seed for spec in specs], dtype=np.int64)
        indices = np.array([spec.index for spec in specs], dtype=np.int64)
        self.batch.deal(rows, seeds)
        self.game_of_row[rows] = indices
        self.agent_at[rows] = [spec.seating for spec in specs]
        self.kernel_bots.seed_rows(self.streams, rows, [spec.policy_seeds for spec in specs])
        self.turn_seen[rows] = -1
        for counts in (self.seat_turns, self.seat_actions, self.seat_seconds):
            counts[rows] = 0

    def _count_turns(self, rows: np.ndarray, seats: np.ndarray) -> None:
        turns = self.batch.games["turn"][rows]
        new = turns != self.turn_seen[rows]
        self.seat_turns[rows[new], seats[new]] += 1
        self.turn_seen[rows[new]] = turns[new]

    def _play_bot_turns(self, agent: int, rows: np.ndarray, seats: np.ndarray) -> None:
        """The kernel bot ``agent`` plays its current turn in each game of ``rows`` (one kernel call)."""
        batch = self.batch
        steps = np.zeros(len(rows), dtype=np.int64)
        self.controllers[rows, seats] = self.codes[agent]
        start = time.perf_counter()
        batch.run_rows(self.kernel_bots.play_bots, rows, (batch.games, batch.action_mask, batch.cfg, self.controllers,
                                                       self.streams), (steps,), min_rows=self.search_rows)
        seconds = time.perf_counter() - start
        self.controllers[rows, seats] = self.kernel_bots.OTHER
        self.seat_actions[rows, seats] += steps
        self.seat_seconds[rows, seats] += seconds * steps / max(int(steps.sum()), 1)

    def _ask(self, agent: int, rows: np.ndarray, seats: np.ndarray) -> None:
        """One action of ``agent`` in each game of ``rows``, chosen in one batched call."""
        batch, player = self.batch, self.players[agent]
        masks = batch.action_mask[rows]
        observations = batch.observe(rows)
        start = time.perf_counter()
        try:
            actions = self._actions_of(player, rows, observations, masks)
        except POLICY_FAILURES as error:  # the agent's own bug: reported with where it happened
            raise AgentError(f"{self._where(agent, rows[0], seats[0])} raised {type(error).__name__}: {error} "
                             f"(asked for {len(rows)} games at once)") from error
        seconds = time.perf_counter() - start
        if actions.shape != rows.shape or not np.issubdtype(actions.dtype, np.integer):
            raise AgentError(f"{self._where(agent, rows[0], seats[0])} returned {actions.shape} {actions.dtype} "
                             f"actions for {len(rows)} games; expected one integer action id per game")
        legal = (actions >= 0) & (actions < NUM_ACTIONS)
        legal[legal] = masks[np.flatnonzero(legal), actions[legal]]
        if not legal.all():
            bad = int(np.flatnonzero(~legal)[0])
            allowed = np.flatnonzero(masks[bad]).tolist()
            raise AgentError(f"{self._where(agent, rows[bad], seats[bad])} returned the illegal action "
                             f"{int(actions[bad])}; legal: {allowed}")
        batch.step_rows(rows, actions)
        self.seat_actions[rows, seats] += 1
        self.seat_seconds[rows, seats] += seconds / len(rows)

    def _actions_of(self, player, rows: np.ndarray, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``player.act_batch`` of the batch (``act_rows`` for a player that reads the games' records): split among
        the kernel threads if the player allows it."""
        if callable(getattr(player, "act_rows", None)):
            return np.asarray(player.act_rows(self.batch, rows, observations, masks))
        if not getattr(player, "concurrent_batches", False):
            return np.asarray(player.act_batch(observations, masks))
        parts = self.batch.run_parts(lambda a, b: np.asarray(player.act_batch(observations[a:b], masks[a:b])),
                                     len(observations))
        return np.concatenate(parts)

    def _where(self, agent: int, row: int, seat: int) -> str:
        spec = self.specs[self.game_of_row[row]]
        turn = int(self.batch.games["turn"][row])
        return (f"agent {self.names[agent]!r} in seat {seat} of game #{spec.index} (game seed {spec.seed}, "
                f"turn {turn}, vector engine)")

    def _collect(self, rows: np.ndarray, result: TournamentResult, bar) -> None:
        """Move the games of ``rows`` that ended into ``result`` and free their rows."""
        over = rows[self.batch.games["outcome"][rows] != RUNNING]
        if not len(over):
            return
        finished = self.batch.finished()
        at = np.searchsorted(finished.rows, over)
        for row, i in zip(over.tolist(), at.tolist()):
            spec = self.specs[self.game_of_row[row]]
            result.games.append(GameResult(
                spec.index, spec.deal, spec.seed, spec.seating, OUTCOME_NAMES[finished.outcome[i]],
                tuple(np.flatnonzero(finished.winners[i]).tolist()), tuple(finished.points[i].tolist()),
                int(finished.turns[i]), self.seat_turns[row].tolist(), self.seat_actions[row].tolist(),
                self.seat_seconds[row].tolist(),
            ))
        self.game_of_row[over] = -1
        bar.update(len(over))


def run_vector(specs, names, agents, policies, rules, threads, seed, result, bar) -> None:
    """Play ``specs`` on the batched engine with ``threads`` kernel threads, into ``result``."""
    table = VectorTable(specs, names, agents, policies, rules, threads, seed)
    try:
        table.play(result, bar)
    except AgentError as error:
        result.error = str(error)
    finally:
        table.close()
