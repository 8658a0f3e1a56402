"""The ``skipbo`` command line: one entry point, one module per subcommand.

Each subcommand module provides ``add_arguments(parser)`` and ``run(args) -> int``;
modules are imported only when their subcommand runs, so ``skipbo --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys

import skipbo_env

SUBCOMMANDS = {
    "demo": ("training.demo", "play and print one seeded game"),
    "play": ("training.play", "play one seat in the terminal against bots or saved models"),
    "replay": ("training.replay", "step through a saved game move by move"),
    "evaluate": ("training.evaluate", "play a seeded tournament between policies and report win rates"),
    "train": ("training.train", "train an agent by masked PPO self-play from a YAML config"),
    "serve": ("skipbo_web.serve", "play the agents and watch saved games in a browser"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="skipbo", description="skipbo-lab: Skip-Bo for reinforcement learning.")
    parser.add_argument("--version", action="version", version=f"skipbo-lab {skipbo_env.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, summary) in SUBCOMMANDS.items():
        sub = commands.add_parser(name, help=summary, description=summary)
        sub.set_defaults(_module=module_name)
        importlib.import_module(module_name).add_arguments(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return importlib.import_module(args._module).run(args) or 0
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
