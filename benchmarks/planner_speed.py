"""Planner (or expert) speed: decisions per second of the batched bot (numba kernels) and of its ``agents`` twin.

    python benchmarks/planner_speed.py [--bot planner|expert] [--seconds 5] [--batch 1024] [--players 2]
                                       [--stock-size 30] [--seed 0] [--switches avoid_feeding=false,...]

Both play the bot against itself from the deal, on the same table, hands dealt again as they
end. Batched: ``--batch`` games on ``VectorGame``, every seat the kernel bot, moved by
``bots.play_bots`` on one thread (a decision there includes stepping the engine). Python: one
rules-engine game at a time, ``PlannerBot.act(observe(game, seat))`` (``ExpertBot`` for
``--bot expert``), only ``act`` timed (the observation and the step are not counted). Rates are per second of wall-clock time and of this
process's CPU time; the load averages before and after are printed (the machine may be shared).
"""

from __future__ import annotations

import os
import platform
import sys
import time

import numba
import numpy as np

from skipbo_cli.arguments import positive_int, seed
from skipbo_cli.script import ScriptParser, batch, positive_seconds, run, table_size
import skipbo_env
from agents.loading import load_policy
from skipbo_env import Rules
from skipbo_env.encoding import observe
from skipbo_env.game import Game
from skipbo_env.rules import MAX_PLAYERS
from agents.batched import bots
from skipbo_env.vector import VectorGame


def kernel_rate(rules: Rules, spec: str, batch_size: int, seconds: float, seed: int) -> tuple[float, float, int]:
    """(decisions per wall second, per CPU second, decisions) of the kernel bot ``spec`` in every seat."""
    engine = VectorGame(rules, batch_size, seed, observations=False, threads=1)
    controllers = np.full((batch_size, MAX_PLAYERS), bots.kernel_bot_code(spec), dtype=np.int64)
    streams = bots.seed_streams(np.random.default_rng(seed), batch_size)
    rows = np.arange(batch_size)
    steps = np.zeros(batch_size, dtype=np.int64)
    bots.play_bots(engine.games, engine.action_mask, engine.cfg, controllers, streams, rows[:1], steps[:1])  # compile
    engine.reset(seed)
    decisions = 0
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        bots.play_bots(engine.games, engine.action_mask, engine.cfg, controllers, streams, rows, steps)
        decisions += int(steps.sum())
        engine.reset_finished()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return decisions / wall, decisions / cpu, decisions


def python_rate(rules: Rules, spec: str, seconds: float, seed: int) -> tuple[float, float, int]:
    """(decisions per wall second, per CPU second, decisions) of the ``agents`` bot ``spec``, ``act`` alone timed."""
    players = [load_policy(spec, seed=seed + seat) for seat in range(rules.num_players)]
    decisions, wall, cpu = 0, 0.0, 0.0
    hand = 0
    while wall < seconds:
        game = Game.new(rules, seed=seed + hand)
        hand += 1
        while not game.is_over and wall < seconds:
            observation = observe(game, game.current_seat)
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            action = players[game.current_seat].act(observation)
            wall += time.perf_counter() - start_wall
            cpu += time.process_time() - start_cpu
            decisions += 1
            game.step(action)
    return decisions / wall, decisions / max(cpu, 1e-9), decisions


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bot", choices=("planner", "expert"), default="planner", help="the bot (default planner)")
    parser.add_argument("--seconds", type=positive_seconds, default=5.0, help="time per measurement (default 5)")
    parser.add_argument("--batch", type=batch, default=1024, help="games of the batched bot (default 1024)")
    parser.add_argument("--players", type=table_size, default=2)
    parser.add_argument("--stock-size", type=positive_int, default=None, help="default: the table's (30 for 2-4 players)")
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--switches", default="", help="the bot's options, e.g. avoid_feeding=false")
    args = parser.parse_args(argv)
    rules = Rules(num_players=args.players, stock_size=args.stock_size)
    spec = f"{args.bot}:{args.switches}" if args.switches else args.bot
    print("command:", " ".join([os.path.basename(sys.executable), *sys.argv]))
    print(f"seed {args.seed}; {spec}; rules {rules.to_dict()}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
          f"skipbo_env {getattr(skipbo_env, '__version__', '?')}; {os.cpu_count()} CPUs; "
          f"load before {os.getloadavg()}")
    k_wall, k_cpu, k_count = kernel_rate(rules, spec, args.batch, args.seconds, args.seed)
    print(f"kernel {args.bot}, batch {args.batch}, 1 thread: {k_wall:,.0f} decisions/s wall "
          f"({1e6 / k_wall:.1f} us each), {k_cpu:,.0f} per CPU second ({k_count} decisions)")
    p_wall, p_cpu, p_count = python_rate(rules, spec, args.seconds, args.seed)
    print(f"agents.{args.bot}: {p_wall:,.0f} decisions/s wall ({1e3 / p_wall:.2f} ms each), "
          f"{p_cpu:,.0f} per CPU second ({p_count} decisions)")
    print(f"ratio (kernel / python): {k_wall / p_wall:.1f}x wall, {k_cpu / p_cpu:.1f}x CPU")
    print(f"load after {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
