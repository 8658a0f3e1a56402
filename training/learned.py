"""Training the learned bot's weights by self-play: a separable natural evolution strategy (sNES).

The learned bot (:mod:`agents.batched.learned`) values a stop as ``w . features`` and a discard as
``d . (shape, coverage, reach)``. Its decisions are an argmax over stops, so only the ranking the
weights induce matters, and the features are measured from the decision's root (what this
sequence plays), not from the state: there is no state value to regress, and the quantity we
care about, the win rate, is what the search optimises directly. Each generation:

1. draws ``population`` candidates ``theta = mu + sigma * z`` (mirrored pairs ``+z``, ``-z``) from
   the search distribution (a diagonal Gaussian; ``stock_cards`` stays 1, the unit of the scale);
2. plays every candidate on the same duplicate deals (each deal in both seats) against a pool:
   ``greedy``, ``planner``, the current mean (self-play) and a mean of an earlier generation,
   the pool weighted alike (fitness: the mean of the four win rates, a draw half a win);
3. updates ``mu`` and ``sigma`` with the sNES rule (Wierstra et al. 2014, rank-based utilities):
   ``mu += eta_mu * sigma * sum(u z)``, ``sigma *= exp(eta_sigma / 2 * sum(u (z^2 - 1)))``.

All candidates meet the same deals (common random numbers), so the ranking compares
candidates, not luck. A candidate too slow to play (:data:`SLOW`) is refused. Every few
generations the mean plays ``planner`` on held-out deals (the training curve). Every random
choice comes from one seeded ``numpy`` Generator whose state is saved with the run
(``state.json``, written atomically after every generation), so ``--resume`` continues where a
run stopped. Start: ``stock_cards`` 1, everything else 0.

``python -m training.learned --out runs/learned --minutes 50 --seed 0`` (``--resume`` to continue).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from skipbo_env.files import OutputPathError, check_creatable, write_json_atomically
from skipbo_env.rules import Rules
from skipbo_env.vector import VectorGame
from skipbo_env.vector.jit import jit
from skipbo_env.vector.kernels import step_game
from skipbo_env.vector.layout import RUNNING
from agents.batched import bots
from agents.batched.learned import LEARNED_CODE, learned_action
from agents.learned import NUM_PARAMETERS, PARAMETERS, parameter_dict

TABLE_CODES = LEARNED_CODE + 1
"""``controllers`` code ``TABLE_CODES + k``: the learned bot with the parameters of row ``k`` of the table."""
FIXED = PARAMETERS.index("stock_cards")
"""The parameter held at 1 (the unit the others are measured in)."""
SLOW = 1e-3
"""CPU seconds per action (both seats' actions, stepping included, the training thread's own CPU time, so
other processes on the machine do not count) above which a candidate is refused: the expert takes 4e-5.
Weights that never play from the discard piles pile up runs there, and the whole-turn search over them
then takes seconds per decision; such a candidate ranks last and its games stop. This is the one choice
of a run that depends on the machine, not the seed (the log counts the refused candidates)."""
CHUNK = 8
"""Deals played per call while a candidate's speed is watched."""
MAX_TURNS = 400
"""A hand of the training is cut after this many turns (a draw): two candidates that both avoid playing
would otherwise never finish one. A 30-card hand between the bots takes about 110 turns."""


@jit
def play_table(games, legal, cfg, controllers, streams, rows, steps, table):
    """Play the hands of ``rows`` to their end: ``controllers[g, seat]`` a kernel bot code, or
    ``TABLE_CODES + k`` for the learned bot with parameters ``table[k]``."""
    for i in range(rows.shape[0]):
        g = rows[i]
        r = games[g]
        taken = 0
        while r.outcome == RUNNING:
            bot = controllers[g, r.seat]
            if bot >= TABLE_CODES:
                action = learned_action(r, legal, g, cfg, table[bot - TABLE_CODES])
            else:
                action = bots.bot_action(r, legal, g, cfg, streams, bot)
            step_game(r, legal, cfg, g, action)
            taken += 1
        steps[i] = taken


class Arena:
    """Two-player hands on the batched engine, every seat a kernel bot or a row of a parameter table."""

    def __init__(self, stock_size: int = 30, batch: int = 1024, threads: int = 1) -> None:
        self.rules = Rules(num_players=2, stock_size=stock_size, max_turns=MAX_TURNS)
        self.engine = VectorGame(self.rules, batch, auto_reset=False, observations=False, threads=threads)
        self.controllers = np.full((batch, 6), bots.OTHER, dtype=np.int64)
        self.streams = bots.new_streams(batch)
        self.games_played = 0

    def scores(self, codes: np.ndarray, seeds: np.ndarray, table: np.ndarray) -> np.ndarray:
        """See :meth:`timed_scores` (the scores alone)."""
        return self.timed_scores(codes, seeds, table)[0]

    def timed_scores(self, codes: np.ndarray, seeds: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, float]:
        """float[n, 2]: each seat's score (1 win, 0.5 draw, 0 loss) of hand ``i`` dealt from ``seeds[i]`` with
        seat ``s`` played by ``codes[i, s]``, and the CPU seconds per action it took."""
        engine = self.engine
        out = np.zeros((len(seeds), 2))
        began, actions = time.thread_time(), 0
        for start in range(0, len(seeds), engine.batch_size):
            rows = np.arange(min(engine.batch_size, len(seeds) - start))
            chunk = slice(start, start + len(rows))
            engine.deal(rows, seeds[chunk])
            self.controllers[rows, :2] = codes[chunk]
            bots.seed_rows(self.streams, rows, bots.streams_for(seeds[chunk]))
            steps = np.zeros(len(rows), dtype=np.int64)
            engine._run(play_table, rows, (engine.games, engine.action_mask, engine.cfg, self.controllers,
                                           self.streams), (steps,), (table,))
            winners = engine.games["winners"][rows, :2].astype(np.float64)
            decided = winners.sum(axis=1) > 0
            out[chunk] = np.where(decided[:, None], winners, 0.5)
            actions += int(steps.sum())
        self.games_played += len(seeds)
        return out, (time.thread_time() - began) / max(actions, 1)

    def duel(self, code: int, opponent: int, seeds: np.ndarray, table: np.ndarray) -> np.ndarray:
        """float[len(seeds)]: ``code``'s mean score on each deal, played in both seats against ``opponent``."""
        return self.timed_duel(code, opponent, seeds, table)[0]

    def timed_duel(self, code: int, opponent: int, seeds: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, float]:
        """:meth:`duel`, and the CPU seconds per action its games took."""
        n = len(seeds)
        codes = np.empty((2 * n, 2), dtype=np.int64)
        codes[:n] = (code, opponent)
        codes[n:] = (opponent, code)
        scores, seconds = self.timed_scores(codes, np.concatenate([seeds, seeds]), table)
        return (scores[:n, 0] + scores[n:, 1]) / 2, seconds

    def fitness(self, code: int, opponents: dict, seeds: np.ndarray, table: np.ndarray) -> dict | None:
        """``{opponent: mean score}`` of ``code`` on ``seeds`` against each of ``opponents`` (name -> code),
        ``CHUNK`` deals at a time; ``None`` as soon as its games take more than ``SLOW`` CPU seconds an action."""
        rates = {}
        for name, opponent in opponents.items():
            total = 0.0
            for start in range(0, len(seeds), CHUNK):
                scores, seconds = self.timed_duel(code, opponent, seeds[start:start + CHUNK], table)
                if seconds > SLOW:
                    return None
                total += scores.sum()
            rates[name] = total / len(seeds)
        return rates

    def close(self) -> None:
        self.engine.close()


def utilities(count: int) -> np.ndarray:
    """sNES's rank-based utilities, best first: ``max(0, log(n/2 + 1) - log(rank))`` normalised, less 1/n."""
    ranks = np.arange(1, count + 1)
    raw = np.maximum(0.0, math.log(count / 2 + 1) - np.log(ranks))
    return raw / raw.sum() - 1.0 / count


def new_state(seed: int, population: int, sigma: float, deals: int, curve_every: int, curve_deals: int,
              stock_size: int) -> dict:
    """The state of a fresh run: its settings, the neutral mean (``stock_cards`` 1, the rest 0) and a uniform
    spread."""
    mu = np.zeros(NUM_PARAMETERS)
    mu[FIXED] = 1.0
    spread = np.full(NUM_PARAMETERS, sigma)
    spread[FIXED] = 0.0
    return {"seed": seed, "population": population, "deals": deals, "curve_every": curve_every,
            "curve_deals": curve_deals, "stock_size": stock_size, "generation": 0, "games": 0, "wall_s": 0.0,
            "mu": mu.tolist(), "sigma": spread.tolist(), "archive": [mu.tolist()], "curve": [], "log": [],
            "rng": np.random.default_rng(seed).bit_generator.state}


def generation(arena: Arena, state: dict, rng: np.random.Generator, deals: int) -> dict:
    """One sNES generation (see the module docstring); returns its log entry and updates ``state``."""
    mu, sigma = np.array(state["mu"]), np.array(state["sigma"])
    half = state["population"] // 2
    z = rng.standard_normal((half, NUM_PARAMETERS))
    z = np.concatenate([z, -z])
    z[:, FIXED] = 0.0
    candidates = mu + sigma * z
    past = np.array(state["archive"][rng.integers(len(state["archive"]))])
    table = np.vstack([candidates, mu, past])
    opponents = {"greedy": bots.GREEDY_BOT, "planner": bots.kernel_bot_code("planner"),
                 "self": TABLE_CODES + len(candidates), "past": TABLE_CODES + len(candidates) + 1}
    seeds = rng.integers(0, 2**62, size=deals)
    fitness = np.full(len(candidates), -1.0)  # a refused (too slow) candidate ranks last
    by_opponent = {name: [] for name in opponents}
    for k in range(len(candidates)):
        rates = arena.fitness(TABLE_CODES + k, opponents, seeds, table)
        if rates is not None:
            fitness[k] = sum(rates.values()) / len(rates)
            for name, rate in rates.items():
                by_opponent[name].append(rate)
    feasible = fitness >= 0
    if not feasible.any():  # nothing to rank: the distribution stays
        state["generation"] += 1
        state["archive"].append(mu.tolist())
        return {"generation": state["generation"], "refused": len(candidates)}
    order = np.argsort(-fitness, kind="stable")
    u = np.zeros(len(candidates))
    u[order] = utilities(len(candidates))
    eta_sigma = (3 + math.log(NUM_PARAMETERS)) / (5 * math.sqrt(NUM_PARAMETERS))
    mu = mu + sigma * (u @ z)
    sigma = sigma * np.exp(eta_sigma / 2 * (u @ (z ** 2 - 1)))
    state["mu"], state["sigma"] = mu.tolist(), sigma.tolist()
    state["generation"] += 1
    state["archive"].append(mu.tolist())
    return {"generation": state["generation"], "best_fitness": float(fitness.max()),
            "mean_fitness": float(fitness[feasible].mean()),
            "refused": int((~feasible).sum()),
            "mean_by_opponent": {name: float(np.mean(rates)) if rates else None for name, rates in by_opponent.items()}}


def curve_point(arena: Arena, state: dict, deals: int, seed: int) -> dict:
    """The mean's win rate against ``planner`` and ``greedy`` on held-out duplicate deals (the same every time)."""
    seeds = np.random.default_rng([seed, 7919]).integers(0, 2**62, size=deals)
    table = np.array([state["mu"]])
    point = {"generation": state["generation"], "games": state["games"], "wall_s": round(state["wall_s"], 1)}
    for name in ("planner", "greedy"):
        rate = float(arena.duel(TABLE_CODES, bots.kernel_bot_code(name), seeds, table).mean())
        low, high = wilson(rate, 2 * deals)
        point[name] = {"win_rate": rate, "ci95": [low, high], "games": 2 * deals}
    return point


def wilson(rate: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson interval of a win rate over ``n`` games."""
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def save(path: str, state: dict, rng: np.random.Generator) -> None:
    state["rng"] = rng.bit_generator.state
    write_json_atomically(path, state)


def weights_document(state: dict) -> dict:
    """The JSON of a weights file for the current mean (``agents.learned.read_parameters`` reads it)."""
    return {"parameters": parameter_dict(state["mu"]), "method": "sNES self-play (training/learned.py)",
            "generation": state["generation"], "games": state["games"], "wall_s": round(state["wall_s"], 1),
            "seed": state["seed"]}


def plot_curve(state: dict, path: str) -> None:
    """The training curve (the mean's held-out win rate against planner and greedy, 95% intervals, over
    generations and wall time) as a PNG picture."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve = state["curve"]
    figure, axis = plt.subplots(figsize=(7, 4))
    x = [point["generation"] for point in curve]
    for name in ("planner", "greedy"):
        rates = np.array([point[name]["win_rate"] for point in curve])
        low = np.array([point[name]["ci95"][0] for point in curve])
        high = np.array([point[name]["ci95"][1] for point in curve])
        axis.plot(x, rates, marker="o", label=f"against {name}")
        axis.fill_between(x, low, high, alpha=0.2)
    axis.set_xlabel("generation (wall time in minutes on top)")
    axis.set_ylabel(f"win rate ({curve[0]['planner']['games']} held-out games)")
    axis.set_ylim(0, 1)
    axis.grid(alpha=0.3)
    axis.legend()
    top = axis.secondary_xaxis("top")
    top.set_xticks(x[::max(1, len(x) // 6)],
                   [f"{point['wall_s'] / 60:.0f}" for point in curve][::max(1, len(x) // 6)])
    axis.set_title(f"learned bot, sNES self-play (seed {state['seed']})", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def train(out: str, minutes: float, seed: int, resume: bool, population: int = 16, deals: int = 48,
          sigma: float = 0.5, curve_every: int = 5, curve_deals: int = 200, threads: int = 1,
          generations: int | None = None, stock_size: int = 30) -> dict:
    """Run (or continue) a training run in the folder ``out`` for ``minutes`` of wall time, or until the run
    has ``generations`` generations (a resumed run keeps the settings it was started with)."""
    os.makedirs(out, exist_ok=True)
    state_path = os.path.join(out, "state.json")
    if resume:
        with open(state_path, encoding="utf-8") as file:
            state = json.load(file)
    else:
        state = new_state(seed, population, sigma, deals, curve_every, curve_deals, stock_size)
    rng = np.random.default_rng()
    rng.bit_generator.state = state["rng"]
    arena = Arena(state["stock_size"], threads=threads)
    deadline = time.perf_counter() + 60 * minutes
    games_before = state["games"]
    try:
        if not state["curve"]:
            state["curve"].append(curve_point(arena, state, state["curve_deals"], state["seed"]))
            print(json.dumps(state["curve"][-1]), flush=True)
        while time.perf_counter() < deadline and (generations is None or state["generation"] < generations):
            start = time.perf_counter()
            entry = generation(arena, state, rng, state["deals"])
            state["games"] = games_before + arena.games_played
            if state["generation"] % state["curve_every"] == 0:
                state["curve"].append(curve_point(arena, state, state["curve_deals"], state["seed"]))
                print(json.dumps(state["curve"][-1]), flush=True)
            state["games"] = games_before + arena.games_played
            state["wall_s"] += time.perf_counter() - start
            entry["seconds"] = round(time.perf_counter() - start, 1)
            state["log"].append(entry)
            print(json.dumps(entry), flush=True)
            save(state_path, state, rng)
            write_json_atomically(os.path.join(out, "weights.json"), weights_document(state))
    finally:
        arena.close()
    if state["curve"]:
        plot_curve(state, os.path.join(out, "curve.png"))
    return state


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.learned", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="run folder (state.json, weights.json)")
    parser.add_argument("--minutes", type=float, default=30.0, help="wall time to train")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resume", action="store_true", help="continue the run in --out")
    parser.add_argument("--population", type=int, default=16, help="candidates per generation (even)")
    parser.add_argument("--deals", type=int, default=48, help="duplicate deals per candidate and opponent")
    parser.add_argument("--sigma", type=float, default=0.5, help="initial spread of every free weight")
    parser.add_argument("--curve-every", type=int, default=5, help="generations between curve points")
    parser.add_argument("--curve-deals", type=int, default=200, help="held-out deals per curve point")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--generations", type=int, default=None, help="stop when the run has this many")
    parser.add_argument("--stock-size", type=int, default=30)
    args = parser.parse_args(argv)
    if args.population < 2 or args.population % 2:
        print(f"--population {args.population} is not allowed: use an even number >= 2", file=sys.stderr)
        return 2
    for flag, value, low in (("--minutes", args.minutes, 0.0), ("--deals", args.deals, 1), ("--sigma", args.sigma, 0.0),
                             ("--curve-every", args.curve_every, 1), ("--curve-deals", args.curve_deals, 1),
                             ("--threads", args.threads, 1), ("--stock-size", args.stock_size, 1)):
        if value < low or (value == low and isinstance(low, float)):
            bound = f"> {low:g}" if isinstance(low, float) else f">= {low}"
            print(f"{flag} {value:g} is not allowed: use a number {bound}", file=sys.stderr)
            return 2
    try:
        check_creatable(Path(args.out))
        os.makedirs(args.out, exist_ok=True)
    except (OutputPathError, OSError) as error:
        print(f"--out {args.out!r}: {error}", file=sys.stderr)
        return 2
    if args.resume and not os.path.exists(os.path.join(args.out, "state.json")):
        print(f"--resume: {args.out!r} holds no state.json to continue", file=sys.stderr)
        return 2
    train(args.out, args.minutes, args.seed, args.resume, args.population, args.deals, args.sigma,
          args.curve_every, args.curve_deals, args.threads, args.generations, args.stock_size)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
