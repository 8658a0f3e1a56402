"""Tournament speed: games per second and time per decision of each bot, through the harness.

    python benchmarks/tournament_speed.py [--games 200] [--agents planner greedy] [--players 2]
                                          [--stock-size 30] [--seed 0] [--workers 1]

Plays one seeded tournament with ``evaluation.run_tournament`` (duplicate deals) and
prints, per agent, the mean milliseconds its ``act`` takes per decision (decoding included),
and for the whole run games per second and the projected time of 2,000 games. The harness's
own cost per decision (building the observation, stepping the engine) is the difference
between wall time and the agents' time.
"""

from __future__ import annotations

import sys

from skipbo_cli.arguments import positive_int, seed
from skipbo_cli.script import ScriptParser, count, parallel, run, table_size
from skipbo_env import Rules
from evaluation import run_tournament
from skipbo_env.provenance import versions


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=count, default=200)
    parser.add_argument("--agents", nargs="+", default=["planner", "greedy"])
    parser.add_argument("--players", type=table_size, default=2)
    parser.add_argument("--stock-size", type=positive_int, default=None)
    parser.add_argument("--partners", action="store_true")
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--workers", type=parallel, default=1)
    args = parser.parse_args(argv)
    rules = Rules(num_players=args.players, stock_size=args.stock_size, partners=args.partners)
    print("$ python benchmarks/tournament_speed.py " + " ".join(sys.argv[1:] if argv is None else argv))
    print(f"seed {args.seed}; versions {versions()}")
    result = run_tournament(args.agents, rules, args.games, args.seed, workers=args.workers)
    stats = result.agent_stats()
    decisions = sum(sum(g.seat_actions) for g in result.games)
    agent_seconds = sum(sum(g.seat_seconds) for g in result.games)
    print(f"{len(result.games)} games, {rules.num_players} players, stockpiles of {rules.stock_size}, "
          f"{args.workers} worker(s): {result.elapsed_s:.1f} s, {len(result.games) / result.elapsed_s:.1f} games/s, "
          f"2,000 games in {2000 * result.elapsed_s / len(result.games) / 60:.1f} min")
    for name, s in stats.items():
        print(f"  {name:12s} {s['ms_per_action']:.3f} ms per decision, win rate {s['win_rate']:.1%}")
    if args.workers == 1:
        harness = (result.elapsed_s - agent_seconds) / decisions * 1e3
        print(f"  harness      {harness:.3f} ms per decision (observation, engine step, bookkeeping)")
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
