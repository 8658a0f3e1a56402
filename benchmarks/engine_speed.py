"""Rules-engine speed: random legal play, actions per second and games per second.

    python benchmarks/engine_speed.py [--seconds 5] [--players 2 4 6] [--seed 0] [--json]

One action is one ``Game.step`` of a legal id chosen uniformly at random (the legal list is
computed for every action). Games start with ``Game.new`` (shuffle and deal included).
"""

from __future__ import annotations

from argparse import RawDescriptionHelpFormatter
import json
import os
import platform
import sys
import time
from collections import Counter

import numpy as np

from skipbo_cli.arguments import seed
from skipbo_cli.script import ScriptParser, table_size, positive_seconds, run
import skipbo_env
from skipbo_env import Game, Rules


def measure(players: int, seconds: float, seed: int) -> dict:
    rules = Rules(num_players=players)
    rng = np.random.default_rng(seed)
    uniforms = rng.random(1 << 16).tolist()
    actions = games = 0
    outcomes = Counter()
    start, cpu_start = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        game = Game.new(rules, seed=seed + games)
        while not game.is_over:
            legal = game.legal_actions()
            game.step(legal[int(uniforms[actions & 0xFFFF] * len(legal))])
            actions += 1
        games += 1
        outcomes[game.outcome] += 1
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    return {"players": players, "actions_per_s": actions / elapsed, "games_per_s": games / elapsed,
            "actions_per_cpu_s": actions / cpu,
            "actions_per_game": actions / games, "games": games, "outcomes": dict(outcomes)}


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__, formatter_class=RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=positive_seconds, default=5.0, help="time per table size")
    parser.add_argument("--players", type=table_size, nargs="+", default=[2, 4, 6])
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--json", action="store_true", help="end with one line of JSON")
    args = parser.parse_args(argv)
    print(f"command: python {' '.join(sys.argv)}")
    print(f"skipbo-lab {skipbo_env.__version__}, numpy {np.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, seed {args.seed}")
    results = [measure(players, args.seconds, args.seed) for players in args.players]
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs "
          "(wall-clock figures drop when other work shares the CPUs; the CPU-time column does not)")
    print(f"{'players':>7} {'actions/s':>11} {'actions/cpu-s':>14} {'games/s':>9} {'actions/game':>13}  outcomes")
    for r in results:
        print(f"{r['players']:>7} {r['actions_per_s']:>11,.0f} {r['actions_per_cpu_s']:>14,.0f} {r['games_per_s']:>9,.1f} "
              f"{r['actions_per_game']:>13,.1f}  {r['outcomes']}")
    if args.json:
        print(json.dumps({str(r["players"]): r for r in results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
