"""The python runner: games of a schedule played on the rules engine, here or in worker processes.

For every decision the runner builds the policy input with ``skipbo_env.encoding.observe(game,
seat)`` and calls ``policy.act``, so any policy (a bot, a saved model, a researcher's class)
plays, and nothing else is in the way. A game's policies are reset with the seat seeds of its
:class:`~evaluation.schedule.GameSpec`, so the results do not depend on where it is played:
here, in worker processes (:func:`run_in_workers`) or in Ray tasks (:mod:`evaluation.ray_runner`,
which plays chunks with :func:`init_worker` and :func:`play_chunk` as the workers do).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Sequence


from skipbo_env.actions import NUM_ACTIONS, action_id, safe_repr
from skipbo_env.encoding import observe
from skipbo_env.files import json_text, write_text_atomically
from skipbo_env.game import Game
from skipbo_env.rules import Rules
from agents.loading import load_policy
from agents.policy import reset_policy
from evaluation.errors import POLICY_FAILURES, AgentError
from evaluation.results import GameResult
from evaluation.schedule import GameSpec


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
        try:
            reset_policy(policy, spec.policy_seeds[seat])
        except POLICY_FAILURES as error:  # the agent's own bug, as in act
            name = table.names[spec.seating[seat]]
            raise AgentError(f"agent {name!r} in seat {seat} of game #{spec.index} (game seed {spec.seed}): its "
                             f"reset() raised {type(error).__name__}: {error}") from error
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
    except POLICY_FAILURES as error:  # the agent's own bug: reported with where it happened
        raise AgentError(f"{where} raised {type(error).__name__}: {error}") from error
    seconds = time.perf_counter() - start
    index = action_id(action)  # by value: the policy's own __eq__ never decides what is legal
    if index is None or not 0 <= index < NUM_ACTIONS:
        raise AgentError(f"{where} returned {safe_repr(action)}, which is not an action id: an int or numpy integer "
                         f"from 0 to {NUM_ACTIONS - 1}")
    if not game.legal_mask()[index]:
        raise AgentError(f"{where} returned the illegal action {index}; legal: {game.legal_actions()}")
    return index, seconds


def _save_game(game: Game, result: GameResult, names: list[str], save_dir: str) -> None:
    """The game's record (``Game.replay`` reads it) plus who sat where and how it ended."""
    record = game.record()
    record["agents"] = [names[agent] for agent in result.seating]
    record["outcome"] = result.outcome
    record["winners"] = list(result.winners)
    record["points"] = list(result.points)
    write_text_atomically(os.path.join(save_dir, f"game-{result.index:06d}.json"), json_text(record))


_WORKER: dict = {}


def init_worker(names, agents, rules_dict, save_dir) -> None:
    """Set up this process (a worker, or a Ray task) to play games with :func:`play_chunk`."""
    _WORKER["table"] = PolicyTable(names, agents)
    _WORKER["rules"] = Rules.from_dict(rules_dict)
    _WORKER["save_dir"] = save_dir


def play_chunk(specs: list[GameSpec]) -> tuple[list[GameResult], str | None]:
    """Games of one chunk in a worker; stops at the first agent error and returns what finished."""
    results = []
    for spec in specs:
        try:
            results.append(play_game(spec, _WORKER["table"], _WORKER["rules"], _WORKER["save_dir"]))
        except AgentError as error:
            return results, str(error)
    return results, None


def chunks(specs: list[GameSpec], size: int) -> list[list[GameSpec]]:
    """The schedule cut into runs of ``size`` games, one per worker task."""
    return [specs[i:i + size] for i in range(0, len(specs), size)]


def run_here(specs, table, rules, save_dir, result, bar) -> None:
    """Play ``specs`` in this process, into ``result`` (the first agent error stops it)."""
    for spec in specs:
        try:
            result.games.append(play_game(spec, table, rules, save_dir))
        except AgentError as error:
            result.error = str(error)
            return
        bar.update(1)


def run_in_workers(specs, names, agents, rules, save_dir, workers, result, bar) -> None:
    """Play ``specs`` in ``workers`` processes (chunks of up to 50 games), into ``result``."""
    size = max(1, min(50, len(specs) // (workers * 8)))
    context = multiprocessing.get_context(start_method())
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=init_worker,
                               initargs=(names, list(agents), rules.to_dict(), save_dir))
    futures = [pool.submit(play_chunk, chunk) for chunk in chunks(specs, size)]
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
