"""``backend: snes``: the learned bot's weights trained by self-play with a separable natural evolution
strategy (sNES).

The learned bot (:mod:`agents.batched.learned`) values a stop as ``w . features`` and a discard as
``d . (shape, coverage, reach)``. Its decisions are an argmax over stops, so only the ranking the
weights induce matters, and the features are measured from the decision's root (what this
sequence plays), not from the state: there is no state value to regress, and the quantity we
care about, the win rate, is what the search optimises directly. Each generation:

1. draws ``snes.population`` candidates ``theta = mu + sigma * z`` (mirrored pairs ``+z``, ``-z``) from
   the search distribution (a diagonal Gaussian; ``stock_cards`` stays 1, the unit of the scale);
2. plays every candidate on the same duplicate deals, once in every seat, at each table of
   ``snes.tables`` (the other seats: kernel bots, ``self``, the current mean, or ``past``, a mean of an
   earlier generation); fitness: the mean of the win rates, a hand nobody wins ``1 / players``;
3. updates ``mu`` and ``sigma`` with the sNES rule (Wierstra et al. 2014, rank-based utilities):
   ``mu += eta_mu * sigma * sum(u z)``, ``sigma *= exp(eta_sigma / 2 * sum(u (z^2 - 1)))``.

All candidates meet the same deals (common random numbers), so the ranking compares
candidates, not luck. Each candidate's games are one work item of :mod:`training.distributed`
(:func:`play_candidate`): played in this process, or as Ray tasks on a local instance or a cluster
when ``ray.address`` names one; the deals come from the driver's generator, so a generation is
the same wherever its games ran. A candidate whose search explodes (:data:`MAX_POSITIONS`) is refused. Every
``snes.curve_every`` generations the mean plays the ``snes.curve_tables`` on held-out deals (the
training curve); at the end it plays them on ``snes.final_deals`` other deals (the evaluation).
Every random choice comes from one seeded ``numpy`` Generator whose state is saved in each
checkpoint (after every generation, atomically), so ``skipbo train --resume RUN`` continues where a
run stopped. ``skipbo train snes_2p`` (``configs/snes_2p.yaml``) trains the shipped weights.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from typing import TextIO

import numpy as np

from agents.batched import bots
from agents.batched.learned import TABLE_CODES, learned_decision
from agents.learned_parameters import NUM_PARAMETERS, PARAMETERS, parameter_dict, read_parameters
from evaluation.results import wilson_interval
from skipbo_env.files import json_text, write_json_atomically
from skipbo_env.provenance import versions
from skipbo_env.rules import Rules
from skipbo_env.vector import VectorGame
from skipbo_env.vector.jit import jit
from skipbo_env.vector.kernels import step_game
from skipbo_env.vector.layout import RUNNING
from training.common import RunLog, TrainResult, clock, print_summary, write_evaluation
from training.checkpoint import RESULTS, CheckpointError, RunFolder, check_step
from training.config import TrainConfig
from training.schema import PAST, SELF, ConfigError
from training.snes.config import generation_limit
from training.distributed import WorkPool
from training.state_checks import (COUNT, MAPPING, SECONDS, finite_numbers, generator_state, list_of, optional,
                                   read_json_object, read_state, record)
from evaluation.ray_runner import RayConnectionError
from training.learning_curve import draw_learning_curve

FIXED = PARAMETERS.index("stock_cards")
"""The parameter held at 1 (the unit the others are measured in)."""
MAX_POSITIONS = 1000
"""Positions the learned seats' searches value per action (every seat's actions counted) above which a
candidate is refused. Weights that never play from the discard piles pile up runs there, and the whole-turn
search over them then values far more positions a decision; such a candidate ranks last and its games stop.
A count of the search's work, not a time, so the refusals (the log counts them) depend on the seed alone,
never on the machine or its load. 1000 is about 1.2 ms of CPU an action on a 2-core machine (1.2 us a
position); ``pretrained-2p`` against ``planner`` values about 45 an action (100 games, 41,112 at most in one
decision)."""
CHUNK = 8
"""Deals played per call while a candidate's search is watched (:data:`MAX_POSITIONS`)."""
MODEL_FILE = "model.json"
"""The run's weights (``agents.load_policy("learned:weights=RUN/model.json")`` plays them)."""
MAX_WEIGHT = 1e6
"""The largest weight or spread a resumed run accepts (the weights are measured in ``stock_cards``, 1)."""
WEIGHTS = finite_numbers(NUM_PARAMETERS, -MAX_WEIGHT, MAX_WEIGHT)
STATE_FIELDS = {
    "generation": COUNT, "games": COUNT, "wall_seconds": SECONDS, "mu": WEIGHTS,
    "sigma": finite_numbers(NUM_PARAMETERS, 0, MAX_WEIGHT), "archive": list_of(WEIGHTS, min_length=1),
    "history": list_of(record({"timesteps": COUNT, "generation": COUNT, "results": RESULTS})),
    "log": list_of(MAPPING), "evaluation": optional(RESULTS), "rng": generator_state(),
}
"""What every value of an sNES checkpoint's ``state.json`` must be (:mod:`training.state_checks`)."""
STREAMS = {"curve": 2, "final": 3}
"""Salt of each held-out use of deals (training draws its deals from the run's generator), so the curve's and
the final evaluation's deals are never trained on and never the same."""


@jit
def play_table(games, legal, cfg, controllers, streams, rows, steps, positions, table):
    """Play the hands of ``rows`` to their end: ``controllers[g, seat]`` a kernel bot code, or
    ``TABLE_CODES + k`` for the learned bot with parameters ``table[k]``; ``steps[i]``: the actions of hand
    ``rows[i]``, ``positions[i]``: the positions the learned seats' searches valued in it."""
    for i in range(rows.shape[0]):
        g = rows[i]
        r = games[g]
        taken = 0
        valued = 0
        while r.outcome == RUNNING:
            bot = controllers[g, r.seat]
            if bot >= TABLE_CODES:
                action, searched = learned_decision(r, legal, g, cfg, table[bot - TABLE_CODES])
                valued += searched
            else:
                action = bots.bot_action(r, legal, g, cfg, streams, bot)
            step_game(r, legal, cfg, g, action)
            taken += 1
        steps[i] = taken
        positions[i] = valued


class Arena:
    """Hands on the batched engine, every seat a kernel bot or a row of a parameter table."""

    def __init__(self, rules: Rules, batch: int = 1024, threads: int | None = None) -> None:
        self.players = rules.num_players
        self.engine = VectorGame(rules, batch, auto_reset=False, observations=False, threads=threads)
        self.controllers = np.full((batch, self.players), bots.OTHER, dtype=np.int64)
        self.streams = bots.new_streams(batch)
        self.games_played = 0

    def play(self, codes: np.ndarray, seeds: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, float]:
        """float[n, players]: the winners (1 for each winning seat) of hand ``i`` dealt from ``seeds[i]`` with
        seat ``s`` played by ``codes[i, s]``, and the positions the learned seats' searches valued per action
        (every seat's actions counted)."""
        engine = self.engine
        out = np.zeros((len(seeds), self.players))
        actions = valued = 0
        for start in range(0, len(seeds), engine.batch_size):
            rows = np.arange(min(engine.batch_size, len(seeds) - start))
            chunk = slice(start, start + len(rows))
            engine.deal(rows, seeds[chunk])
            self.controllers[rows] = codes[chunk]
            bots.seed_rows(self.streams, rows, bots.streams_for(seeds[chunk]))
            steps = np.zeros(len(rows), dtype=np.int64)
            positions = np.zeros(len(rows), dtype=np.int64)
            engine.run_rows(play_table, rows, (engine.games, engine.action_mask, engine.cfg, self.controllers,
                                           self.streams), (steps, positions), (table,))
            out[chunk] = engine.games["winners"][rows, :self.players]
            actions += int(steps.sum())
            valued += int(positions.sum())
        self.games_played += len(seeds)
        return out, valued / max(actions, 1)

    def rotations(self, roles: list[int], seeds: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, float]:
        """float[players, len(seeds), players]: ``[s, i, k]`` is 1 when role ``k`` (played by ``roles[k]``) won
        deal ``i`` with role 0 in seat ``s`` and the others after it in turn order; and the positions valued per
        action (:meth:`play`)."""
        n, players = len(seeds), self.players
        codes = np.empty((players * n, players), dtype=np.int64)
        for shift in range(players):
            for role, code in enumerate(roles):
                codes[shift * n:(shift + 1) * n, (shift + role) % players] = code
        winners, positions = self.play(codes, np.tile(seeds, players), table)
        by_role = np.empty((players, n, players))
        for shift in range(players):
            seats = [(shift + role) % players for role in range(players)]
            by_role[shift] = winners[shift * n:(shift + 1) * n][:, seats]
        return by_role, positions

    def fitness(self, roles_of_tables: list[list[int]], seeds: np.ndarray, table: np.ndarray,
                max_positions: float) -> list[float] | None:
        """Role 0's mean score (a win 1, a hand nobody wins ``1 / players``) at each table, ``CHUNK`` deals at a
        time; ``None`` as soon as its games' searches value more than ``max_positions`` positions an action."""
        rates = []
        for roles in roles_of_tables:
            total = 0.0
            for start in range(0, len(seeds), CHUNK):
                by_role, positions = self.rotations(roles, seeds[start:start + CHUNK], table)
                if positions > max_positions:
                    return None
                undecided = by_role.sum(axis=2) == 0
                total += (by_role[:, :, 0] + undecided / self.players).sum()
            rates.append(total / (len(seeds) * self.players))
        return rates

    def close(self) -> None:
        self.engine.close()


def play_candidate(shared: tuple[dict, np.ndarray, float, int | None], item: tuple[list[list[int]], np.ndarray]):
    """The work function of a generation (:mod:`training.distributed`): one candidate's games.

    ``shared``: the rules (as a dict), the parameter table, the positions valued per action above which the
    candidate is refused (:data:`MAX_POSITIONS`) and the engine's threads (``None``: the machine's cores; 1 in a Ray task, which
    reserves one CPU); ``item``: the seat codes of each table (the candidate's row first) and the deal
    seeds. Returns role 0's score at each table (``None``: refused) and the games played. Its arena is
    its own (20 ms to build, a fraction of a percent of a candidate's games)."""
    rules, table, max_positions, threads = shared
    roles_of_tables, seeds = item
    arena = Arena(Rules.from_dict(rules), threads=threads)
    try:
        return arena.fitness(roles_of_tables, seeds, table, max_positions), arena.games_played
    finally:
        arena.close()


def utilities(count: int) -> np.ndarray:
    """sNES's rank-based utilities, best first: ``max(0, log(n/2 + 1) - log(rank))`` normalised, less 1/n."""
    ranks = np.arange(1, count + 1)
    raw = np.maximum(0.0, math.log(count / 2 + 1) - np.log(ranks))
    return raw / raw.sum() - 1.0 / count


def mirrored_noise(rng: np.random.Generator, population: int, dimensions: int) -> np.ndarray:
    """sNES's search directions: ``population // 2`` standard normal draws, then each negated (mirrored pairs)."""
    z = rng.standard_normal((population // 2, dimensions))
    return np.concatenate([z, -z])


def snes_step(mu: np.ndarray, sigma: np.ndarray, z: np.ndarray, fitness: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One sNES update of the mean ``mu`` and the spreads ``sigma`` from the candidates ``mu + sigma * z`` and their
    ``fitness`` (higher is better; ties keep the candidates' order): the rank-based utilities move the mean by
    ``sigma * (u @ z)`` and the spreads by ``exp(eta / 2 * u @ (z**2 - 1))``, ``eta = (3 + ln d) / (5 sqrt d)``."""
    order = np.argsort(-fitness, kind="stable")
    u = np.zeros(len(z))
    u[order] = utilities(len(z))
    eta_sigma = (3 + math.log(z.shape[1])) / (5 * math.sqrt(z.shape[1]))
    return mu + sigma * (u @ z), sigma * np.exp(eta_sigma / 2 * (u @ (z ** 2 - 1)))


def table_name(table: list[str]) -> str:
    """How reports name a table: its other seats in turn order, ``planner+greedy+greedy``."""
    return "+".join(table)


def deal_seeds(seed: int, use: str, count: int) -> np.ndarray:
    """``count`` held-out deal seeds for one use (:data:`STREAMS`), the same at every curve point."""
    return np.random.default_rng([seed, STREAMS[use]]).integers(0, 2**62, size=count)


class SNESTrainer:
    """One ``backend: snes`` run in its run folder: generations, checkpoints, curve, evaluation, summary."""

    def __init__(self, config: TrainConfig, folder: RunFolder, progress: bool, out: TextIO) -> None:
        self.config, self.folder, self.progress, self.log = config, folder, progress, RunLog(out)
        self.settings = config.snes
        self.rules = config.make_rules()
        self.kernel_codes = {spec: bots.kernel_bot_code(spec) for tables in (self.settings.tables,
                                                                            self.settings.curve_tables)
                             for table in tables for spec in table if spec not in (SELF, PAST)}

    # ------------------------------------------------------------------ state
    def fresh_state(self) -> dict:
        """The neutral start (``stock_cards`` 1, the rest 0) or ``snes.start``'s weights, a uniform spread."""
        if self.settings.start is None:
            mu = np.zeros(NUM_PARAMETERS)
            mu[FIXED] = 1.0
        else:
            mu = read_parameters(self.settings.start)  # checked with the config
            mu = mu / mu[FIXED] if mu[FIXED] > 0 else mu
            mu[FIXED] = 1.0
        spread = np.full(NUM_PARAMETERS, self.settings.sigma)
        spread[FIXED] = 0.0
        return {"generation": 0, "games": 0, "wall_seconds": 0.0, "mu": mu.tolist(), "sigma": spread.tolist(),
                "archive": [mu.tolist()], "history": [], "log": [], "evaluation": None,
                "rng": np.random.default_rng(self.config.seed).bit_generator.state}

    def load_state(self) -> dict:
        """The last checkpoint's state (``--resume``), every value checked (:data:`STATE_FIELDS`), or a fresh one."""
        checkpoint = self.folder.latest_checkpoint()
        if checkpoint is None:
            return self.fresh_state()
        path = checkpoint / "state.json"
        state = read_state(path, STATE_FIELDS)
        check_step(state["generation"], checkpoint, "generation")
        problems = {
            "mu": state["mu"][FIXED] != 1.0 and "'stock_cards' must be 1 (the unit of the others)",
            "sigma": state["sigma"][FIXED] != 0.0 and "'stock_cards' must have spread 0 (it stays 1)",
            "archive": len(state["archive"]) != state["generation"] + 1
            and f"it must hold generation + 1 = {state['generation'] + 1} means, not {len(state['archive'])}",
            "history": any(point["generation"] > state["generation"] for point in state["history"])
            and f"it holds a point after generation {state['generation']}",
        }
        for key, problem in problems.items():
            if problem:
                raise CheckpointError(f"cannot resume from {path}: {key!r}: {problem}")
        return state

    def finished(self, state: dict) -> bool:
        """Whether the run ended: its final evaluation in the state and the weights file of that state's mean
        written (a kill after the final checkpoint leaves the weights file of an earlier end, or none)."""
        if state["evaluation"] is None:
            return False
        try:
            written = read_json_object(self.folder.path / MODEL_FILE)
        except CheckpointError:
            return False
        return written.get("generation") == state["generation"] and written.get("parameters") == parameter_dict(
            state["mu"])

    def budget_left(self, state: dict, deadline: float) -> bool:
        return time.perf_counter() < deadline and state["generation"] < generation_limit(self.settings)

    # ------------------------------------------------------------------ the run
    def run(self):
        state = self.load_state()
        minutes, generations = self.config.budget.max_minutes, self.settings.generations
        left = math.inf if minutes is None else 60 * minutes - state["wall_seconds"]
        spent = f"{self.folder.path} already trained {state['generation']} generations in " \
                f"{state['wall_seconds'] / 60:.1f} minutes, its whole budget: give more, e.g. skipbo train --resume " \
                f"{self.folder.path} "
        if state["generation"] >= generation_limit(self.settings) and self.finished(state):
            if generations is None:
                raise ConfigError(f"{self.folder.path} already trained {state['generation']} generations, the most "
                                  "a run may (snes.generations): start a new run from its weights (snes.start)")
            raise ConfigError(spent + f"snes.generations={2 * generations}")
        if left <= 0 and self.finished(state):
            raise ConfigError(spent + f"budget.max_minutes={2 * minutes:g}")
        rng = np.random.default_rng()
        rng.bit_generator.state = state["rng"]
        self.pool = self.candidate_pool()
        arena = Arena(self.rules)
        self.log.print(f"sNES self-play: {self.settings.population} candidates a generation, each at "
                       f"{len(self.settings.tables)} tables ({', '.join(map(table_name, self.settings.tables))}) on "
                       f"{self.settings.deals} deals x {self.rules.num_players} seats; budget "
                       f"{'no time limit' if minutes is None else f'{minutes:g} minutes'}"
                       f"{'' if self.settings.generations is None else f', {self.settings.generations} generations'}")
        self.log.print(f"candidate games: {self.pool.describe()}")
        try:
            if not state["history"]:
                self._curve_point(arena, state)  # compiles the kernels first: not counted in the budget
            deadline = time.perf_counter() + left
            while self.budget_left(state, deadline):
                start = time.perf_counter()
                entry = self.generation(state, rng)
                state["evaluation"] = None  # the final evaluation is of a later mean
                state["wall_seconds"] += time.perf_counter() - start
                entry["seconds"] = round(time.perf_counter() - start, 1)
                state["log"].append(entry)
                self._print_generation(entry, state)
                if state["generation"] % self.settings.curve_every == 0:
                    start = time.perf_counter()
                    self._curve_point(arena, state)
                    state["wall_seconds"] += time.perf_counter() - start
                self._checkpoint(state, rng)
            if state["evaluation"] is None:  # else a kill came after the final checkpoint: only the files are left
                if state["history"][-1]["generation"] != state["generation"]:
                    self._curve_point(arena, state)
                state["evaluation"] = self.final_evaluation(arena, state)
                self._checkpoint(state, rng)
        except KeyboardInterrupt:
            self.log.print(f"interrupted: resume with skipbo train --resume {self.folder.path}")
            raise
        finally:
            arena.close()
            self.pool.close()
        write_json_atomically(self.folder.path / MODEL_FILE, self.weights_document(state))
        self._finish(state)
        return TrainResult(self.folder.path, self.folder.path / MODEL_FILE, state["games"], state["evaluation"],
                           state["history"])

    def candidate_pool(self) -> WorkPool:
        """Where the candidates' games run: this process, or the Ray instance or cluster of ``ray.address``."""
        try:
            return WorkPool(self.config.ray.address, self.config.ray.workers)
        except RayConnectionError as error:
            raise ConfigError(f"ray.address: {error}") from None

    def generation(self, state: dict, rng: np.random.Generator) -> dict:
        """One sNES generation (see the module docstring); returns its log entry and updates ``state``."""
        settings = self.settings
        mu, sigma = np.array(state["mu"]), np.array(state["sigma"])
        z = mirrored_noise(rng, settings.population, NUM_PARAMETERS)
        z[:, FIXED] = 0.0
        candidates = mu + sigma * z
        past = np.array(state["archive"][rng.integers(len(state["archive"]))])
        table = np.vstack([candidates, mu, past])
        extra = {SELF: TABLE_CODES + len(candidates), PAST: TABLE_CODES + len(candidates) + 1}
        seeds = rng.integers(0, 2**62, size=settings.deals)
        fitness = np.full(len(candidates), -1.0)  # a refused candidate (its search too big) ranks last
        by_table = {table_name(seats): [] for seats in settings.tables}
        items = [([[TABLE_CODES + k] + [extra.get(spec, self.kernel_codes.get(spec)) for spec in seats]
                   for seats in settings.tables], seeds) for k in range(len(candidates))]
        threads = 1 if self.pool.on_ray else None
        played = self.pool.map(play_candidate, items, shared=(self.rules.to_dict(), table, MAX_POSITIONS, threads))
        state["games"] += sum(games for _, games in played)
        for k, (rates, _) in enumerate(played):
            if rates is not None:
                fitness[k] = float(np.mean(rates))
                for seats, rate in zip(settings.tables, rates):
                    by_table[table_name(seats)].append(rate)
        state["generation"] += 1
        placement = {"nodes": dict(Counter(self.pool.last_nodes))} if self.pool.on_ray else {}
        feasible = fitness >= 0
        if not feasible.any():  # nothing to rank: the distribution stays
            state["archive"].append(mu.tolist())
            return {"generation": state["generation"], "refused": len(candidates), **placement}
        mu, sigma = snes_step(mu, sigma, z, fitness)
        state["mu"], state["sigma"] = mu.tolist(), sigma.tolist()
        state["archive"].append(mu.tolist())
        return {"generation": state["generation"], "best_fitness": float(fitness.max()),
                "mean_fitness": float(fitness[feasible].mean()), "refused": int((~feasible).sum()),
                "mean_by_table": {name: float(np.mean(rates)) if rates else None for name, rates in by_table.items()},
                **placement}

    # ------------------------------------------------------------------ measuring the mean
    def play_mean(self, arena: Arena, state: dict, use: str, deals: int) -> dict:
        """The mean's results at every curve table on ``deals`` held-out deals, each in every seat: per table
        the stats of ``skipbo evaluate`` (games, wins, draws, losses, win rate, 95% interval) and each other
        seat's win rate (``others``)."""
        seeds = deal_seeds(self.config.seed, use, deals)
        table = np.array([state["mu"]])
        results = {}
        for seats in self.settings.curve_tables:
            by_role, _ = arena.rotations([TABLE_CODES] + [self.kernel_codes[spec] for spec in seats], seeds, table)
            games = by_role.shape[0] * by_role.shape[1]
            wins = int(by_role[:, :, 0].sum())
            draws = int((by_role.sum(axis=2) == 0).sum())
            results[table_name(seats)] = {
                "games": games, "wins": wins, "draws": draws, "losses": games - wins - draws,
                "win_rate": wins / games, "ci95": list(wilson_interval(wins, games)),
                "others": {f"{role}:{spec}": float(by_role[:, :, role].sum() / games)
                           for role, spec in enumerate(seats, start=1)}}
        return results

    def _curve_point(self, arena: Arena, state: dict) -> None:
        games = arena.games_played
        results = self.play_mean(arena, state, "curve", self.settings.curve_deals)
        arena.games_played = games  # the curve's games are not training games
        record = {"timesteps": state["games"], "generation": state["generation"],
                  "wall_seconds": round(state["wall_seconds"], 1), "results": results}
        state["history"].append(record)
        rates = ", ".join(f"vs {name} {stats['win_rate']:.1%} [{stats['ci95'][0]:.1%}, {stats['ci95'][1]:.1%}]"
                          for name, stats in results.items())
        self.log.print(f"generation {state['generation']:>4} ({clock(state['wall_seconds'])}, {state['games']:,} "
                       f"games): the mean on {self.settings.curve_deals} held-out deals: {rates}")

    def final_evaluation(self, arena: Arena, state: dict) -> dict:
        self.log.print(f"final evaluation: {self.settings.final_deals} held-out deals x {self.rules.num_players} seats "
                       f"at each of {', '.join(map(table_name, self.settings.curve_tables))}")
        games = arena.games_played
        results = self.play_mean(arena, state, "final", self.settings.final_deals)
        arena.games_played = games
        write_evaluation(self.folder.evaluation_path, self.folder.path / MODEL_FILE, self.config.seed, self.rules,
                         results, state["history"], generation=state["generation"])
        return results

    # ------------------------------------------------------------------ files
    def weights_document(self, state: dict) -> dict:
        """The JSON of a weights file for the current mean (``agents.learned.read_parameters`` reads it)."""
        return {"parameters": parameter_dict(state["mu"]), "method": "sNES self-play (training/snes/trainer.py)",
                "rules": self.rules.to_dict(), "generation": state["generation"], "games": state["games"],
                "wall_seconds": round(state["wall_seconds"], 1), "seed": self.config.seed,
                "command": self.folder.run_info().get("command"), "versions": versions()}

    def _checkpoint(self, state: dict, rng: np.random.Generator) -> None:
        state["rng"] = rng.bit_generator.state
        weights = json_text(self.weights_document(state), indent=1).encode()
        self.folder.save_checkpoint(state["generation"], {MODEL_FILE: weights}, state, self.config.checkpoint.keep)

    def _finish(self, state: dict) -> None:
        draw_learning_curve(state["history"], state["evaluation"], state["games"], self.folder.curve_path,
                            title=f"{self.config.name}: the sNES mean's win rate (95% intervals)",
                            x_label="training games (wall time in minutes on top)")
        model = self.folder.path / MODEL_FILE
        notes = [f"at {opponent}: the other seats won " + ", ".join(f"{name} {rate:.1%}"
                                                                    for name, rate in stats["others"].items())
                 for opponent, stats in state["evaluation"].items() if stats["others"]]
        print_summary(self.log, state["evaluation"], f"{self.config.name}: the mean after {state['generation']} "
                      f"generations ({clock(state['wall_seconds'])})", [
                          ("weights", model),
                          ("", f"play them: skipbo play --opponents learned:weights={model}; measure them: "
                               f"skipbo evaluate --agents learned:weights={model} planner --games 2000"),
                          ("evaluation", self.folder.evaluation_path), ("curve", self.folder.curve_path)], notes)

    def _print_generation(self, entry: dict, state: dict) -> None:
        if not self.progress:
            return
        if "best_fitness" not in entry:
            self.log.print(f"generation {entry['generation']:>4}: every candidate's search was too big (refused); the "
                           "distribution stays")
            return
        tables = ", ".join(f"{name} {rate:.2f}" for name, rate in entry["mean_by_table"].items() if rate is not None)
        placement = f", on {len(entry['nodes'])} Ray node(s)" if "nodes" in entry else ""
        self.log.print(f"generation {entry['generation']:>4} ({entry['seconds']:.0f} s, total "
                       f"{clock(state['wall_seconds'])}): fitness best {entry['best_fitness']:.3f}, mean "
                       f"{entry['mean_fitness']:.3f} ({tables}), {entry['refused']} refused{placement}")

