"""``skipbo benchmark SPEC``: one policy through the fixed protocol ``skipbo-bench-v1`` (:mod:`evaluation.benchmark`).

Prints the scorecard (win rate, draws and points margin against every rung of the ladder, with 95%
intervals, the time a decision, one rating), and writes it as JSON (``--json``) and a picture
(``--plot``). Bad input (a bad spec, tier, table size or deal count, an output file that exists) ends
with one line and exit 2 before any game; so does a policy that raises or returns an illegal move,
named with the rung, the deal and the move.
"""

from __future__ import annotations

import argparse
import os
import shlex

from agents.loading import RUNS_CODE
from evaluation.benchmark import PROTOCOL, TABLE_SETS, TIERS, BenchmarkError, run_benchmark
from evaluation.benchmark_report import print_scorecard, write_scorecard_json, write_scorecard_plot
from skipbo_cli import arguments
from skipbo_cli.evaluate import MAX_WORKERS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC",
                        help="the policy to measure: a bot name, a shipped model, a saved model file, package.module:Class "
                             f"or path/to/file.py:Class, optionally named: mine=bots/mybot.py:StockFirst; {RUNS_CODE}")
    parser.add_argument("--tier", choices=TIERS, default="quick",
                        help=f"quick (default: {TABLE_SETS[2].deals['quick']} deals a rung at two players) or full "
                             f"({TABLE_SETS[2].deals['full']:,} deals a rung)")
    parser.add_argument("--players", type=int, choices=sorted(TABLE_SETS), default=2,
                        help="the table set: 2 (default, head to head) or 4 (the policy with three copies of a rung)")
    parser.add_argument("--deals", type=arguments.positive_int, metavar="N",
                        help="play only the first N deals of the tier: a partial run, marked as such, for trying a "
                             "policy out")
    parser.add_argument("--workers", type=arguments.bounded_int(1, MAX_WORKERS), default=1, metavar="K",
                        help=f"processes (threads of the batched engine's kernels for kernel bots and networks), 1 to "
                             f"{MAX_WORKERS} (default 1); the same scorecard whatever K")
    parser.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                        help="play the games as Ray tasks (pip install -e '.[rllib]'): without ADDRESS a Ray instance on "
                             "this machine, 'auto' the cluster this machine joined, HOST:PORT a cluster's head")
    parser.add_argument("--json", metavar="PATH", type=arguments.output_file(".json"),
                        help="write the scorecard, the deal seeds and hash, the versions, commit, machine and CPU-seconds "
                             "to PATH (.json; refused if it exists)")
    parser.add_argument("--plot", metavar="PATH", type=arguments.output_file(*arguments.PLOT_SUFFIXES),
                        help=f"draw the win rates and margins by rung ({', '.join(arguments.PLOT_SUFFIXES)}; refused if it "
                             "exists)")
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="hide the progress bars")


def run(args: argparse.Namespace) -> int:
    for flag, path in (("--json", args.json), ("--plot", args.plot)):
        if path is not None and os.path.exists(path):
            raise BenchmarkError(f"{flag} {path!r} already exists: give a new file name")
    card = run_benchmark(args.spec, args.players, args.tier, deals=args.deals, workers=args.workers,
                         ray_address=args.ray, progress=args.progress)
    record = card.to_json(command=_command(args))
    print_scorecard(record)
    if args.json:
        write_scorecard_json(record, args.json)
        print(f"wrote {args.json}")
    if args.plot and card.cards:
        write_scorecard_plot(record, args.plot)
        print(f"wrote {args.plot}")
    return 130 if card.interrupted else 0


def _command(args: argparse.Namespace) -> str:
    """The command line that plays this run again (outputs left out)."""
    parts = ["skipbo", "benchmark", shlex.quote(args.spec), "--tier", args.tier, "--players", str(args.players)]
    if args.deals is not None:
        parts += ["--deals", str(args.deals)]
    if args.workers != 1:
        parts += ["--workers", str(args.workers)]
    if args.ray is not None:
        parts += ["--ray", shlex.quote(args.ray)]
    return " ".join(parts) + f"  # {PROTOCOL}"
