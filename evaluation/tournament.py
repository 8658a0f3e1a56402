"""Tournaments that measure strength honestly: ``skipbo evaluate`` and :func:`run_tournament`.

On the ``python`` engine (the reference) games are played directly on the rules engine: for
every decision the harness builds the policy input with ``skipbo_env.encoding.observe(game, seat)``
and calls ``policy.act``, so any policy (a bot, a saved model, a researcher's class) plays, and
nothing else is in the way. The ``vector`` engine plays the same schedule on the batched engine,
much faster, for the agents it supports (see "Engines" below).

How seats are filled
    A *unit* is a seat in singles and a team in partners (partners sit opposite each other,
    so an agent assigned to a team plays both of its seats). A *lineup* gives every unit an
    agent:

    - as many agents as units: one lineup, every agent once;
    - more agents than units: every combination of agents (so with 2 players, every pairing);
    - fewer agents than units: the agents repeated in turn, one lineup per starting agent
      (``planner greedy`` at 4 seats: planner, greedy, planner, greedy and greedy, planner,
      greedy, planner), so every agent holds as many seats as every other.

    Every lineup is played in every rotation (unit ``k`` gets the lineup's agent ``k + r``), so
    each agent sits in each position equally often.

Duplicate deals (default)
    A *deal* is one game seed, so one shuffle and one dealer. With duplicate deals every deal is
    played by every lineup in every rotation: every agent gets every seat with the same cards,
    and luck of the deal cancels out of the comparison. Without (``duplicate=False``) every game
    gets its own deal, with the same balanced schedule of lineups and rotations. The number of
    games is rounded up to whole schedules (lineups x rotations).

Seeds
    Deal ``d`` of a tournament with seed ``S`` uses game seed ``SeedSequence(S, spawn_key=(d,))``;
    the policy in seat ``s`` of game ``i`` is reset with ``SeedSequence(S, spawn_key=(i, s, 1))``.
    Results do not depend on the number of worker processes.

Engines
    ``python`` plays every game on the rules engine, as above: any policy plays. ``vector``
    plays the same schedule (the same game seeds, so the same deals, and the same seatings) on
    the batched engine of :mod:`skipbo_env.vector`, thousands of games at once: ``random``,
    ``greedy`` and ``planner`` (with any of its options) move inside its numba kernels (a whole
    turn per call), networks (saved ``.zip``/``.pt`` models, any policy with
    ``logits(observations)``) take one batched forward pass per step. ``auto`` (the command's
    default) picks ``vector`` when every agent is one of these and no game records are asked
    for, otherwise ``python``. A kernel bot in seat ``s`` of game ``i`` draws from the same
    generator as the ``agents`` bot there (``default_rng`` of the seat's policy seed, reproduced
    in the kernels, see :mod:`agents.batched.bots`) and decides as it does, so the bots play
    the same games, move for move, on both engines (tests/test_evaluate_vector.py), as do
    deterministic networks (argmax). On ``vector``, ms/action is the agent's share of the calls that chose its
    moves: for a kernel bot that includes stepping the engine, for a network its forward passes.
    ``workers`` are the threads of its deal and step kernels there (the kernel bots' own calls run
    on one thread). The batched engine keeps no action history, so it cannot save game records.

Counting
    An agent *wins* a game when one of its seats is among the winners; a drawn or truncated hand
    is a *draw* for everyone in it. Points per hand are the points the agent's seats scored
    (a team's points once). Turns per hand count the agent's own turns (per seat it held);
    actions per turn are its actions divided by its turns.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import itertools
import json
import math
import multiprocessing
import os
import shlex
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Sequence

import numpy as np

from skipbo_env.provenance import versions
from agents.loading import RUNS_CODE, load_policy
from agents.policy import reset_policy
from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.encoding import observe
from skipbo_env.game import Game
from skipbo_env.rules import Rules
from skipbo_cli import arguments
from skipbo_cli.rule_flags import add_rule_flags, rules_from_args

RESULT_FORMAT = "skipbo-tournament/1"
RATING_METHOD = (
    "openskill PlackettLuce (mu 25, sigma 25/3), one update per game in game order: "
    "the winning agent ranked first, the others tied behind (a draw ties everyone); "
    "ordinal = mu - 3 sigma"
)
Z95 = 1.959963984540054
SEED_DERIVATION = {
    "python": "game seed of deal d: SeedSequence(seed, spawn_key=(d,)); policy seed of seat s in game i: "
              "SeedSequence(seed, spawn_key=(i, s, 1)); 63 bits each",
    "vector": "game seed of deal d: SeedSequence(seed, spawn_key=(d,)), 63 bits (the same deals as the python "
              "engine); the kernel bot in seat s of game i draws from default_rng(SeedSequence(seed, "
              "spawn_key=(i, s, 1))), as on the python engine; a sampling network of agent a from "
              "SeedSequence(seed, spawn_key=(a, 2))",
}
SEATING_RULE = (
    "seatings lists the agent in every seat for each game of one set; with duplicate deals every deal is "
    "played once in each. Units are seats (teams in partners); as many agents as units: one lineup; more: "
    "every combination; fewer: the agents repeated in turn, one lineup per starting agent; each lineup in "
    "every rotation"
)


ENGINES = ("auto", "python", "vector")
VECTOR_PLAYERS = ("random, greedy and planner[:options] (played inside its kernels) and networks (saved .zip/.pt "
                  "models, policies with logits(observations)), played with one batched forward pass per step")
VECTOR_BATCH = 2048
MAX_WORKERS = 256
"""Games the batched engine plays at once."""


class AgentError(RuntimeError):
    """An agent raised or returned an illegal action; names the agent, the seat and the game seed."""


class EngineError(ValueError):
    """The engine asked for cannot play this tournament; the message names the agent or option and the way out."""


# ---------------------------------------------------------------------------- schedule
@dataclasses.dataclass(frozen=True)
class GameSpec:
    """One game to play: its number, its deal, its seed and the agent (index) in every seat."""

    index: int
    deal: int
    seed: int
    seating: tuple[int, ...]
    policy_seeds: tuple[int, ...]


def derived_seed(seed: int, *key: int) -> int:
    """A 63-bit seed derived from the tournament seed and a key (numpy ``SeedSequence``)."""
    state = np.random.SeedSequence(seed, spawn_key=key).generate_state(2, np.uint32)
    return (int(state[0]) << 31) ^ int(state[1])


def lineups(num_agents: int, num_units: int) -> list[tuple[int, ...]]:
    """The agent (index) for every unit (seat, or team in partners) of each lineup; see the module doc."""
    if num_agents < 1:
        raise ValueError("a tournament needs at least one agent")
    if num_agents == num_units:
        return [tuple(range(num_agents))]
    if num_agents > num_units:
        return list(itertools.combinations(range(num_agents), num_units))
    return [tuple((start + k) % num_agents for k in range(num_units)) for start in range(num_agents)]


def seatings(num_agents: int, rules: Rules) -> list[tuple[int, ...]]:
    """Every lineup in every rotation, as the agent index of every seat: one duplicate set."""
    units = rules.num_teams
    result = []
    for lineup in lineups(num_agents, units):
        for rotation in range(units):
            by_unit = [lineup[(unit + rotation) % units] for unit in range(units)]
            result.append(tuple(by_unit[rules.team_of(seat)] for seat in range(rules.num_players)))
    return result


def schedule(num_agents: int, rules: Rules, games: int, seed: int, duplicate: bool = True) -> list[GameSpec]:
    """The games of a tournament, rounded up to whole duplicate sets (see the module docstring)."""
    if not isinstance(games, int) or games < 1:
        raise ValueError(f"games={games!r} is not allowed: use an integer >= 1")
    one_set = seatings(num_agents, rules)
    num_sets = math.ceil(games / len(one_set))
    specs = []
    for index in range(num_sets * len(one_set)):
        deal = index // len(one_set) if duplicate else index
        seating = one_set[index % len(one_set)]
        policy_seeds = tuple(derived_seed(seed, index, seat, 1) for seat in range(rules.num_players))
        specs.append(GameSpec(index, deal, derived_seed(seed, deal), seating, policy_seeds))
    return specs


# ---------------------------------------------------------------------------- playing
@dataclasses.dataclass
class GameResult:
    """What one game produced; ``seat_*`` lists are indexed by seat."""

    index: int
    deal: int
    seed: int
    seating: tuple[int, ...]
    outcome: str
    winners: tuple[int, ...]
    points: tuple[int, ...]
    turns: int
    seat_turns: list[int]
    seat_actions: list[int]
    seat_seconds: list[float]


class PolicyTable:
    """Policies by agent, one instance per seat an agent holds (loaded from specs as needed).

    A policy given as an object (not a spec) is shared by every seat its agent holds.
    """

    def __init__(self, names: Sequence[str], agents: Sequence) -> None:
        self.names = list(names)
        self.agents = list(agents)
        self._instances: dict[tuple[int, int], object] = {}

    def for_seats(self, seating: Sequence[int]) -> list:
        copies: dict[int, int] = defaultdict(int)
        policies = []
        for agent in seating:
            key = (agent, copies[agent])
            copies[agent] += 1
            if key not in self._instances:
                spec = self.agents[agent]
                self._instances[key] = load_policy(spec) if isinstance(spec, str) else spec
            policies.append(self._instances[key])
        return policies


def play_game(spec: GameSpec, table: PolicyTable, rules: Rules, save_dir: str | None = None) -> GameResult:
    """Play one game of the schedule; raises :class:`AgentError` when an agent fails."""
    game = Game.new(rules, seed=spec.seed)
    policies = table.for_seats(spec.seating)
    for seat, policy in enumerate(policies):
        reset_policy(policy, spec.policy_seeds[seat])
    n = rules.num_players
    seat_turns, seat_actions, seat_seconds = [0] * n, [0] * n, [0.0] * n
    turn_seen = -1
    while not game.is_over:
        seat = game.current_seat
        if game.turn != turn_seen:
            turn_seen = game.turn
            seat_turns[seat] += 1
        action, seconds = _decide(policies[seat], game, seat, spec, table)
        seat_actions[seat] += 1
        seat_seconds[seat] += seconds
        game.step(action)
    result = GameResult(spec.index, spec.deal, spec.seed, spec.seating, game.outcome, tuple(game.winners),
                        tuple(game.points()), game.turn, seat_turns, seat_actions, seat_seconds)
    if save_dir is not None:
        _save_game(game, result, table.names, save_dir)
    return result


def _decide(policy, game: Game, seat: int, spec: GameSpec, table: PolicyTable) -> tuple[int, float]:
    name = table.names[spec.seating[seat]]
    where = f"agent {name!r} in seat {seat} of game #{spec.index} (game seed {spec.seed}, turn {game.turn})"
    observation = observe(game, seat)
    start = time.perf_counter()
    try:
        action = policy.act(observation)
    except Exception as error:  # the agent's own bug: reported with where it happened
        raise AgentError(f"{where} raised {type(error).__name__}: {error}") from error
    seconds = time.perf_counter() - start
    if isinstance(action, np.integer):
        action = int(action)
    if not isinstance(action, int) or isinstance(action, bool) or not 0 <= action < NUM_ACTIONS:
        raise AgentError(f"{where} returned {action!r}, which is not an action id (0 to {NUM_ACTIONS - 1})")
    if action not in game.legal_actions():
        raise AgentError(f"{where} returned the illegal action {action}; legal: {game.legal_actions()}")
    return action, seconds


def _save_game(game: Game, result: GameResult, names: list[str], save_dir: str) -> None:
    """The game's record (``Game.replay`` reads it) plus who sat where and how it ended."""
    record = game.record()
    record["agents"] = [names[agent] for agent in result.seating]
    record["outcome"] = result.outcome
    record["winners"] = list(result.winners)
    record["points"] = list(result.points)
    path = os.path.join(save_dir, f"game-{result.index:06d}.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(record, handle)


# ---------------------------------------------------------------------------- workers
_WORKER: dict = {}


def _init_worker(names, agents, rules_dict, save_dir) -> None:
    _WORKER["table"] = PolicyTable(names, agents)
    _WORKER["rules"] = Rules.from_dict(rules_dict)
    _WORKER["save_dir"] = save_dir


def _play_chunk(specs: list[GameSpec]) -> tuple[list[GameResult], str | None]:
    """Games of one chunk in a worker; stops at the first agent error and returns what finished."""
    results = []
    for spec in specs:
        try:
            results.append(play_game(spec, _WORKER["table"], _WORKER["rules"], _WORKER["save_dir"]))
        except AgentError as error:
            return results, str(error)
    return results, None


def _chunks(specs: list[GameSpec], size: int) -> list[list[GameSpec]]:
    return [specs[i:i + size] for i in range(0, len(specs), size)]


# ---------------------------------------------------------------------------- engines
def vector_kind(agent, policy) -> str | None:
    """How the batched engine plays an agent (its spec and its loaded policy): ``"kernel bot"``,
    ``"network"``, or ``None`` when it cannot."""
    from agents.batched.bots import kernel_bot_code

    if kernel_bot_code(agent) is not None:
        return "kernel bot"
    if callable(getattr(policy, "logits", None)):
        return "network"
    return None


def choose_engine(engine: str, names: Sequence[str], agents: Sequence, policies: Sequence,
                  save_dir: str | None = None) -> tuple[str, str]:
    """``(engine, why)``: the engine that plays the tournament; :class:`EngineError` when ``vector``
    is asked for and cannot play it (see the module docstring)."""
    if engine not in ENGINES:
        raise EngineError(f"engine={engine!r} is not allowed: use one of {', '.join(ENGINES)}")
    if engine == "python":
        return "python", "asked for"
    unsupported = [name for name, agent, policy in zip(names, agents, policies) if vector_kind(agent, policy) is None]
    if engine == "vector":
        if unsupported:
            raise EngineError(f"agent {unsupported[0]!r} cannot play on the vector engine, which plays "
                              f"{VECTOR_PLAYERS}; use --engine python (or auto)")
        if save_dir is not None:
            raise EngineError("--save-games needs every action of a game, which the vector engine does not keep; "
                              "use --engine python (or auto)")
        return "vector", "asked for"
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
        from agents.batched import bots
        from skipbo_env.vector import VectorGame
        from agents.batched.policies import KernelBot, batch_policy

        self.kernel_bots = bots  # imported here: numba loads only when the vector engine plays
        self.specs, self.names = specs, names
        self.players = [batch_policy(agent if vector_kind(agent, policy) == "kernel bot" else policy,
                                     seed=derived_seed(seed, index, 2))
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

    def play(self, result: "TournamentResult", bar) -> None:
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
        self.kernel_bots.play_bots(batch.games, batch.action_mask, batch.cfg, self.controllers, self.streams, rows,
                                   steps)
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
            actions = np.asarray(player.act_batch(observations, masks))
        except Exception as error:  # the agent's own bug: reported with where it happened
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

    def _where(self, agent: int, row: int, seat: int) -> str:
        spec = self.specs[self.game_of_row[row]]
        turn = int(self.batch.games["turn"][row])
        return (f"agent {self.names[agent]!r} in seat {seat} of game #{spec.index} (game seed {spec.seed}, "
                f"turn {turn}, vector engine)")

    def _collect(self, rows: np.ndarray, result: "TournamentResult", bar) -> None:
        """Move the games of ``rows`` that ended into ``result`` and free their rows."""
        from skipbo_env.vector import OUTCOME_NAMES
        from skipbo_env.vector.layout import RUNNING

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


# ---------------------------------------------------------------------------- the tournament
@dataclasses.dataclass
class TournamentResult:
    """Every game of a tournament and the figures drawn from them (see :meth:`to_json`)."""

    names: list[str]
    specs: list[str]
    rules: Rules
    seed: int
    duplicate: bool
    games_requested: int
    games_scheduled: int
    seatings: list[tuple[int, ...]]
    games: list[GameResult]
    error: str | None = None
    interrupted: bool = False
    elapsed_s: float = 0.0
    workers: int = 1
    engine: str = "python"
    engine_reason: str = "asked for"

    @property
    def complete(self) -> bool:
        return self.error is None and not self.interrupted and len(self.games) == self.games_scheduled

    def agent_stats(self) -> dict[str, dict]:
        """Per agent: games, wins, draws, losses, win rate with its 95% Wilson interval, and means."""
        stats = {}
        for agent, name in enumerate(self.names):
            games = wins = draws = points = 0
            turns = actions = seat_games = 0
            seconds = 0.0
            for game in self.games:
                seats = [s for s, a in enumerate(game.seating) if a == agent]
                if not seats:
                    continue
                games += 1
                if game.outcome == "win":
                    wins += any(s in game.winners for s in seats)
                else:
                    draws += 1
                points += max(game.points[s] for s in seats)
                seat_games += len(seats)
                turns += sum(game.seat_turns[s] for s in seats)
                actions += sum(game.seat_actions[s] for s in seats)
                seconds += sum(game.seat_seconds[s] for s in seats)
            stats[name] = {
                "spec": self.specs[agent],
                "games": games,
                "wins": wins,
                "draws": draws,
                "losses": games - wins - draws,
                "win_rate": wins / games if games else None,
                "ci95": list(wilson_interval(wins, games)) if games else None,
                "mean_points": points / games if games else None,
                "mean_turns": turns / seat_games if seat_games else None,
                "mean_actions_per_turn": actions / turns if turns else None,
                "ms_per_action": 1000 * seconds / actions if actions else None,
            }
        return stats

    def pairwise(self) -> dict[str, dict[str, dict]]:
        """For every ordered pair: in games with both, how often each won (a win by a third is neither)."""
        table = {a: {b: {"games": 0, "wins": 0, "losses": 0} for b in self.names if b != a} for a in self.names}
        for game in self.games:
            present = sorted(set(game.seating))
            winner = {game.seating[s] for s in game.winners}
            for a, b in itertools.permutations(present, 2):
                cell = table[self.names[a]][self.names[b]]
                cell["games"] += 1
                cell["wins"] += a in winner
                cell["losses"] += b in winner
        for row in table.values():
            for cell in row.values():
                decided = cell["wins"] + cell["losses"]
                cell["win_rate"] = cell["wins"] / decided if decided else None
                cell["ci95"] = list(wilson_interval(cell["wins"], decided)) if decided else None
        return table

    def ratings(self) -> dict:
        """openskill ratings from the games in order (see :data:`RATING_METHOD`)."""
        from openskill.models import PlackettLuce

        model = PlackettLuce()
        ratings = {agent: model.rating(name=name) for agent, name in enumerate(self.names)}
        for game in sorted(self.games, key=lambda g: g.index):
            present = sorted(set(game.seating))
            if len(present) < 2:
                continue
            winner = {game.seating[s] for s in game.winners}
            ranks = [0 if (a in winner or not winner) else 1 for a in present]
            updated = model.rate([[ratings[a]] for a in present], ranks=ranks)
            for a, team in zip(present, updated):
                ratings[a] = team[0]
        return {
            "method": RATING_METHOD,
            "agents": {
                self.names[a]: {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()} for a, r in ratings.items()
            },
        }

    def to_json(self, command: str | None = None) -> dict:
        """Every figure, the rules, the seeds and the versions; ``complete`` is false after an error."""
        games = sorted(self.games, key=lambda g: g.index)
        return {
            "format": RESULT_FORMAT,
            "complete": self.complete,
            "error": self.error,
            "interrupted": self.interrupted,
            "command": command,
            "agents": self.agent_stats(),
            "pairwise": self.pairwise(),
            "ratings": self.ratings() if len(self.names) > 1 else None,
            "rules": self.rules.to_dict(),
            "num_players": self.rules.num_players,
            "duplicate": self.duplicate,
            "seatings": [[self.names[a] for a in seating] for seating in self.seatings],
            "seating_rule": SEATING_RULE,
            "seed": self.seed,
            "seeds": {
                "tournament": self.seed,
                "derivation": SEED_DERIVATION[self.engine],
                "games": [g.seed for g in games],
            },
            "games_requested": self.games_requested,
            "games_scheduled": self.games_scheduled,
            "games_played": len(self.games),
            "engine": self.engine,
            "engine_reason": self.engine_reason,
            "workers": self.workers,
            "elapsed_s": round(self.elapsed_s, 3),
            "versions": versions(),
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "games": [
                {"index": g.index, "deal": g.deal, "seed": g.seed, "seats": [self.names[a] for a in g.seating],
                 "outcome": g.outcome, "winners": list(g.winners), "points": list(g.points), "turns": g.turns,
                 "seat_turns": g.seat_turns, "seat_actions": g.seat_actions}
                for g in games
            ],
        }


def agent_names(agents: Sequence) -> list[str]:
    """Display names: the spec text (or the policy's ``name``/class), made unique with ``#2``, ``#3``."""
    names = []
    for agent in agents:
        base = agent if isinstance(agent, str) else getattr(agent, "name", None) or type(agent).__name__
        name, copy = base, 1
        while name in names:
            copy += 1
            name = f"{base}#{copy}"
        names.append(name)
    return names


def run_tournament(
    agents: Sequence,
    rules: Rules | None = None,
    games: int = 200,
    seed: int = 0,
    *,
    duplicate: bool = True,
    workers: int = 1,
    progress: bool = False,
    save_dir: str | None = None,
    names: Sequence[str] | None = None,
    engine: str = "python",
    ray_address: str | None = None,
) -> TournamentResult:
    """Play a tournament and return every game; importable without torch.

    ``agents`` are policy specs (see ``agents.load_policy``) or policy objects. With
    ``workers > 1`` games run in that many processes (see :func:`start_method`; policy objects
    must pickle); on the vector engine they are the threads of its deal and step kernels.
    ``engine``: ``"python"`` (the default here: the reference, and the results seeded calls had
    before), ``"vector"`` or ``"auto"`` (see the module docstring; ``skipbo evaluate`` defaults to
    ``auto``); :class:`EngineError` when ``vector`` cannot play the agents. An agent
    that raises or returns an illegal action stops the tournament: the result keeps every
    finished game, ``complete`` is false and ``error`` names the agent, seat and game seed.
    A bad spec raises :class:`agents.loading.PolicySpecError` before any game is played.
    ``ray_address`` (``"local"``, ``"auto"`` or ``HOST:PORT``) plays the games as Ray tasks on
    the python engine (:mod:`evaluation.ray_runner`), game for game the same result.
    """
    rules = rules if rules is not None else Rules()
    if not agents:
        raise ValueError("a tournament needs at least one agent")
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers={workers!r} is not allowed: use an integer >= 1")
    names = list(names) if names is not None else agent_names(agents)
    if len(names) != len(agents) or len(set(names)) != len(names):
        raise ValueError(f"names={names!r} must give {len(agents)} distinct names, one per agent")
    policies = [load_policy(agent) for agent in agents]  # a bad spec fails here, before any game
    if ray_address is not None:
        engine = _ray_engine(engine, save_dir)
    engine, engine_reason = choose_engine(engine, names, agents, policies, save_dir)
    if ray_address is not None:
        engine_reason = f"games as Ray tasks ({ray_address})"
    specs = schedule(len(agents), rules, games, seed, duplicate)
    if save_dir is not None:
        os.makedirs(save_dir, exist_ok=True)
    result = TournamentResult(
        names=names, specs=[a if isinstance(a, str) else repr(a) for a in agents], rules=rules, seed=seed,
        duplicate=duplicate, games_requested=games, games_scheduled=len(specs),
        seatings=seatings(len(agents), rules), games=[], workers=workers, engine=engine,
        engine_reason=engine_reason,
    )
    start = time.perf_counter()
    bar = _progress_bar(len(specs), progress)
    try:
        if engine == "vector":
            _run_vector(specs, names, agents, policies, rules, workers, seed, result, bar)
        elif ray_address is not None:
            from evaluation.ray_runner import run_on_ray

            run_on_ray(specs, names, agents, rules, ray_address, workers, result, bar)
        elif workers == 1:
            _run_here(specs, PolicyTable(names, agents), rules, save_dir, result, bar)
        else:
            _run_in_workers(specs, names, agents, rules, save_dir, workers, result, bar)
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        bar.close()
        result.elapsed_s = time.perf_counter() - start
    result.games.sort(key=lambda g: g.index)
    return result


def _ray_engine(engine: str, save_dir: str | None) -> str:
    """Ray tasks play on the python engine; ``vector`` or saved game records cannot go with them."""
    if engine == "vector":
        raise EngineError("--ray plays every game on the python engine in Ray tasks: drop --engine vector")
    if save_dir is not None:
        raise EngineError("--ray cannot save game records (each would land on the machine that played it): "
                          "drop --save-games or --ray")
    return "python"


def _progress_bar(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, unit="game", disable=None if enabled else True, file=sys.stderr, dynamic_ncols=True)


def _run_here(specs, table, rules, save_dir, result, bar) -> None:
    for spec in specs:
        try:
            result.games.append(play_game(spec, table, rules, save_dir))
        except AgentError as error:
            result.error = str(error)
            return
        bar.update(1)


def _run_vector(specs, names, agents, policies, rules, threads, seed, result, bar) -> None:
    table = VectorTable(specs, names, agents, policies, rules, threads, seed)
    try:
        table.play(result, bar)
    except AgentError as error:
        result.error = str(error)
    finally:
        table.close()


def _run_in_workers(specs, names, agents, rules, save_dir, workers, result, bar) -> None:
    size = max(1, min(50, len(specs) // (workers * 8)))
    context = multiprocessing.get_context(start_method())
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker,
                               initargs=(names, list(agents), rules.to_dict(), save_dir))
    futures = [pool.submit(_play_chunk, chunk) for chunk in _chunks(specs, size)]
    try:
        for future in as_completed(futures):
            games, error = future.result()
            result.games.extend(games)
            bar.update(len(games))
            if error is not None:
                result.error = error
                return
    except BrokenProcessPool as error:
        result.error = (f"a worker process died ({error}); with the {context.get_start_method()!r} start method "
                        "a script that calls run_tournament needs an `if __name__ == '__main__':` guard")
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def start_method() -> str:
    """``fork`` where the platform has it and torch is not loaded yet (fast, no import guard needed);
    otherwise ``spawn`` (safe with torch's threads; the calling script needs a ``__main__`` guard)."""
    if "fork" in multiprocessing.get_all_start_methods() and "torch" not in sys.modules:
        return "fork"
    return "spawn"


# ---------------------------------------------------------------------------- statistics
def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% with the default ``z``)."""
    if trials <= 0:
        raise ValueError("the Wilson interval needs at least one trial")
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


# ---------------------------------------------------------------------------- reporting
def print_report(result: TournamentResult, command: str, file=None) -> None:
    """The tables of a tournament (rich), preceded by the command, seed, rules and versions."""
    from rich.console import Console
    from rich.table import Table

    out = file or sys.stdout
    console = Console(file=out)
    if not console.is_terminal:
        console = Console(file=out, width=130)
    rules = result.rules
    deals = len({g.deal for g in result.games})
    lines = [
        f"$ {command}",
        f"seed {result.seed}; versions {json.dumps(versions())}",
        f"rules: {json.dumps(rules.to_dict())}",
        f"{len(result.games)} games ("
        + (f"duplicate deals: {deals} deals" if result.duplicate else "one deal each")
        + f", {len(result.seatings)} seatings per set) in {result.elapsed_s:.1f} s "
        + f"({len(result.games) / max(result.elapsed_s, 1e-9):,.0f} games/s) with {result.workers} "
        + ("kernel thread(s)" if result.engine == "vector" else "worker(s)"),
        f"engine: {result.engine} ({result.engine_reason})",
    ]
    if result.games_scheduled != result.games_requested:
        lines.append(f"note: {result.games_requested} games requested, rounded up to {result.games_scheduled} "
                     f"(whole sets of {len(result.seatings)} seatings)")
    print("\n".join(lines), file=out, flush=True)
    table = Table(title="results per agent (win rate with 95% Wilson interval)")
    for column in ("agent", "games", "wins", "draws", "win rate", "95% CI", "points/hand", "turns/hand",
                   "actions/turn", "ms/action"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    for name, s in result.agent_stats().items():
        if not s["games"]:
            table.add_row(name, "0", "", "", "", "", "", "", "", "")
            continue
        lo, hi = s["ci95"]
        table.add_row(name, str(s["games"]), str(s["wins"]), str(s["draws"]), f"{s['win_rate']:.1%}",
                      f"{lo:.1%} - {hi:.1%}", f"{s['mean_points']:.1f}", f"{s['mean_turns']:.1f}",
                      f"{s['mean_actions_per_turn']:.2f}", _milliseconds(s["ms_per_action"]))
    console.print(table)
    if len(result.names) > 2:
        _print_pairwise(console, result)
    if len(result.names) > 2 and result.games:
        _print_ratings(console, result)
    if result.error:
        console.print(f"[bold red]tournament stopped:[/] {result.error}")
    elif result.interrupted:
        console.print("[bold red]tournament interrupted[/]")


def _milliseconds(value: float | None) -> str:
    """Three decimals, five below 0.001 (the vector engine's kernel bots take microseconds)."""
    if value is None:
        return ""
    return f"{value:.3f}" if value >= 0.001 else f"{value:.5f}"


def _print_pairwise(console, result: TournamentResult) -> None:
    from rich.table import Table

    pairwise = result.pairwise()
    table = Table(title="pairwise: row agent's share of the games won by row or column agent (games together)")
    table.add_column("")
    for name in result.names:
        table.add_column(name, justify="right")
    for row in result.names:
        cells = []
        for column in result.names:
            cell = pairwise[row].get(column)
            if cell is None or cell["win_rate"] is None:
                cells.append("-")
            else:
                cells.append(f"{cell['win_rate']:.1%} ({cell['games']})")
        table.add_row(row, *cells)
    console.print(table)


def _print_ratings(console, result: TournamentResult) -> None:
    from rich.table import Table

    ratings = result.ratings()
    table = Table(title="ratings")
    for column in ("agent", "mu", "sigma", "ordinal"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    ordered = sorted(ratings["agents"].items(), key=lambda item: -item[1]["ordinal"])
    for name, r in ordered:
        table.add_row(name, f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['ordinal']:.2f}")
    console.print(table)
    console.print(f"rating method: {ratings['method']}", soft_wrap=True)


def write_plot(result: TournamentResult, path: str) -> None:
    """A bar chart of the win rates with their 95% Wilson intervals as error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stats = [(name, s) for name, s in result.agent_stats().items() if s["games"]]
    rates = [s["win_rate"] for _, s in stats]
    errors = [[max(0.0, r - s["ci95"][0]) for r, (_, s) in zip(rates, stats)],
              [max(0.0, s["ci95"][1] - r) for r, (_, s) in zip(rates, stats)]]
    figure, axes = plt.subplots(figsize=(max(4.0, 1.4 * len(stats) + 2), 4))
    axes.bar([name for name, _ in stats], rates, yerr=errors, capsize=6, color="#4C72B0")
    axes.set_ylim(0, 1.1)
    axes.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    axes.set_ylabel("win rate (95% Wilson interval)")
    rules = result.rules
    variant = "partners" if rules.partners else "singles"
    axes.set_title(f"{len(result.games)} games, {rules.num_players} players ({variant}), "
                   f"stockpiles of {rules.stock_size}, seed {result.seed}", fontsize=9)
    for x, (rate, (_, s)) in enumerate(zip(rates, stats)):
        axes.text(x, s["ci95"][1] + 0.02, f"{rate:.1%}", ha="center", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


# ---------------------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help="policies to compare: bot names (random, greedy, planner), saved model files, "
                             f"package.module:Class or path/to/file.py:Class; {RUNS_CODE}")
    parser.add_argument("--games", type=arguments.bounded_int(1, arguments.MAX_GAMES), default=200, metavar="G",
                        help=f"games to play, 1 to {arguments.MAX_GAMES:,}, rounded up to whole sets of seatings "
                             "(default 200)")
    parser.add_argument("--seed", type=arguments.seed, default=0, help="tournament seed, >= 0 (default 0)")
    parser.add_argument("--workers", type=arguments.bounded_int(1, MAX_WORKERS), default=1, metavar="K",
                        help=f"processes, 1 to {MAX_WORKERS} (default 1)")
    parser.add_argument("--no-duplicate", dest="duplicate", action="store_false",
                        help="give every game its own deal instead of replaying each deal in every seating")
    parser.add_argument("--json", metavar="PATH", type=arguments.output_file(".json"),
                        help="write every figure, the rules, seeds and versions to PATH (.json)")
    parser.add_argument("--plot", metavar="PATH", type=arguments.output_file(*arguments.PLOT_SUFFIXES),
                        help=f"write a bar chart of the win rates ({', '.join(arguments.PLOT_SUFFIXES)})")
    parser.add_argument("--save-games", metavar="DIR", type=arguments.output_folder,
                        help="write each game's record as DIR/game-NNNNNN.json")
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="python: the rules engine, any policy; vector: the batched engine, for random, greedy, "
                             "planner and saved networks (--workers are then the threads of its deal and step kernels; "
                             "no --save-games); auto (default): vector when every agent plays there and no records "
                             "are saved, else python")
    parser.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                        help="play the games as Ray tasks (pip install -e '.[rllib]'): without ADDRESS a Ray instance "
                             "on this machine (--workers CPUs), 'auto' the cluster this machine joined, HOST:PORT "
                             "a cluster's head; the same result, game for game, as a local run")
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="hide the progress bar")
    add_rule_flags(parser)


def run(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    command = "skipbo evaluate " + _describe_args(args)
    result = run_tournament(args.agents, rules, args.games, args.seed, duplicate=args.duplicate,
                            workers=args.workers, progress=args.progress, save_dir=args.save_games,
                            engine=args.engine, ray_address=args.ray)
    print_report(result, command)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result.to_json(command), handle, indent=1)
        print(f"wrote {args.json}{'' if result.complete else ' (incomplete)'}")
    if args.plot and result.games:
        write_plot(result, args.plot)
        print(f"wrote {args.plot}")
    if result.error:
        print(f"skipbo evaluate: error: {result.error}", file=sys.stderr)
        return 1
    return 130 if result.interrupted else 0


def _describe_args(args: argparse.Namespace) -> str:
    parts = ["--agents", *map(shlex.quote, args.agents), "--games", str(args.games), "--seed", str(args.seed)]
    for flag, value in (("--workers", args.workers), ("--json", args.json), ("--plot", args.plot),
                        ("--save-games", args.save_games)):
        if value not in (None, 1):
            parts += [flag, shlex.quote(str(value))]
    if not args.duplicate:
        parts.append("--no-duplicate")
    if args.engine != "auto":
        parts += ["--engine", args.engine]
    if args.ray is not None:
        parts += ["--ray", shlex.quote(args.ray)]
    from skipbo_cli.rule_flags import rule_settings

    for name, value in rule_settings(args).items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            parts.append(flag)
        elif isinstance(value, dict):
            key, item = next(iter(value.items()))
            parts += [flag, "single_hand" if key == "single_hand" else f"{key}:{item}"]
        else:
            parts += [flag, str(value)]
    return " ".join(parts)
