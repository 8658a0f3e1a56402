"""``skipbo evaluate``: a seeded tournament between policies, its report, and its JSON and plot files.

The flags map onto :func:`evaluation.run_tournament` (see :mod:`evaluation` for the schedule,
the engines and the figures); the report is :func:`evaluation.report.print_report`, preceded by
the command line that reproduces the run.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from agents.loading import RUNS_CODE
from agents.registry import BOTS, KERNEL_SPECS
from evaluation import ENGINES, run_tournament
from evaluation.schedule import SEAT_ORDERS
from evaluation.report import print_report, write_json, write_plot
from skipbo_cli import arguments
from skipbo_cli.rule_flags import add_rule_flags, rule_settings, rules_from_args

MAX_WORKERS = 256


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help=f"policies to compare: bot names ({', '.join(BOTS)}), saved model files, "
                             f"package.module:Class or path/to/file.py:Class, each optionally named for the report: "
                             f"mine=bots/mybot.py:StockFirst; {RUNS_CODE}")
    parser.add_argument("--games", type=arguments.bounded_int(1, arguments.MAX_GAMES), default=200, metavar="G",
                        help=f"games to play, 1 to {arguments.MAX_GAMES:,}, rounded up to whole sets of seatings "
                             "(default 200)")
    parser.add_argument("--seed", type=arguments.seed, default=0, help="tournament seed, >= 0 (default 0)")
    parser.add_argument("--workers", type=arguments.bounded_int(1, MAX_WORKERS), default=1, metavar="K",
                        help=f"processes, 1 to {MAX_WORKERS} (default 1)")
    parser.add_argument("--no-duplicate", dest="duplicate", action="store_false",
                        help="give every game its own deal instead of replaying each deal in every seating")
    parser.add_argument("--seat-orders", choices=SEAT_ORDERS, default="rotations",
                        help="rotations (default): each lineup in its rotations, the order around the table kept; "
                             "all: in every distinct order of its agents, so who sits after whom evens out too "
                             "(12 seatings for A B C C at four seats)")
    parser.add_argument("--json", metavar="PATH", type=arguments.output_file(".json"),
                        help="write every figure, the rules, seeds and versions to PATH (.json)")
    parser.add_argument("--plot", metavar="PATH", type=arguments.output_file(*arguments.PLOT_SUFFIXES),
                        help=f"write a bar chart of the win rates ({', '.join(arguments.PLOT_SUFFIXES)})")
    parser.add_argument("--save-games", metavar="DIR", type=arguments.output_folder,
                        help="write each game's record as DIR/game-NNNNNN.json (a DIR that holds game files is "
                             "refused, unless --overwrite)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace what is already there: the game files of --save-games DIR (removed first), "
                             "the --json and --plot files")
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="python: the rules engine, any policy; vector: the batched engine, for the kernel bots "
                             f"({KERNEL_SPECS}) and saved networks (--workers are then the threads of its deal "
                             "and step kernels; no --save-games); auto (default): vector when every agent plays there and no records "
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
    for flag, path in (("--json", args.json), ("--plot", args.plot)):
        if path is not None and os.path.exists(path) and not args.overwrite:
            raise ValueError(f"{flag} {path!r} already exists: give another file name, or replace it with --overwrite")
    result = run_tournament(args.agents, rules, args.games, args.seed, duplicate=args.duplicate,
                            seat_orders=args.seat_orders,
                            workers=args.workers, progress=args.progress, save_dir=args.save_games,
                            engine=args.engine, ray_address=args.ray, overwrite=args.overwrite)
    print_report(result, command)
    if args.json:
        write_json(result, args.json, command)
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
    if args.seat_orders != "rotations":
        parts += ["--seat-orders", args.seat_orders]
    if args.overwrite:
        parts.append("--overwrite")
    if args.engine != "auto":
        parts += ["--engine", args.engine]
    if args.ray is not None:
        parts += ["--ray", shlex.quote(args.ray)]
    return " ".join(parts + _rule_flags(args))


def _rule_flags(args: argparse.Namespace) -> list[str]:
    """The rule flags given, as they would be typed."""
    parts = []
    for name, value in rule_settings(args).items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            parts.append(flag)
        elif isinstance(value, dict):
            key, item = next(iter(value.items()))
            parts += [flag, "single_hand" if key == "single_hand" else f"{key}:{item}"]
        else:
            parts += [flag, str(value)]
    return parts
