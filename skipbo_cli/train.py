"""``skipbo train CONFIG [KEY=VALUE ...]``: train an agent by self-play (see :mod:`training.run`)."""

from __future__ import annotations

import argparse
import shlex
import sys

from agents.loading import RUNS_CODE
from training.config import describe_schema
from training.run import train


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (f"Safety: the policy specs of a config (opponents.mix, evaluation, pretrain.teacher) are "
                     f"agents.load_policy specs: {RUNS_CODE}. That holds for a config file and for the saved "
                     "config of a run folder given to --resume: train only configs and run folders you trust.")
    parser.add_argument("config", nargs="?", metavar="CONFIG", help="YAML config, e.g. configs/quickstart.yaml")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                        help="override single keys, e.g. ppo.learning_rate=1e-4 budget.total_timesteps=50000")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue this run from its last checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (log lines only)")
    parser.add_argument("--list-keys", action="store_true", help="print every config key with its default and exit")


def run(args: argparse.Namespace) -> int:
    if args.list_keys:
        print(describe_schema())
        return 0
    overrides = list(args.overrides)
    config = args.config
    if args.resume and config is not None:
        if "=" not in config:
            print("skipbo train: error: give either CONFIG or --resume RUN_DIR, not both", file=sys.stderr)
            return 2
        overrides.insert(0, config)
        config = None
    if config is None and not args.resume:
        print("skipbo train: error: give a CONFIG file (e.g. configs/quickstart.yaml) or --resume RUN_DIR",
              file=sys.stderr)
        return 2
    train(config, overrides, resume=args.resume, progress=not args.no_progress,
          command="skipbo train " + " ".join(shlex.quote(a) for a in sys.argv[2:]))
    return 0
