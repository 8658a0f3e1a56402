"""The ``skipbo`` command line: one entry point, one module per subcommand.

Each subcommand module provides ``add_arguments(parser)`` and ``run(args) -> int``. Only the
module of the subcommand named on the command line is imported (its flags are read from it),
so ``skipbo --help`` lists the subcommands without loading any RL library, and ``skipbo demo``
never loads torch.

Bad input never ends in a traceback: a flag value that fails its check (``skipbo_cli.arguments``)
and every error the project raises for what it was given (``ValueError`` and its kinds:
``SavedModelError``, ``PolicySpecError``, ``ConfigError``, the refusals of ``Rules`` and of
``Game.replay``; ``OSError`` for a path) end the command with one line,
``skipbo COMMAND: error: MESSAGE``, and exit status 2. Set ``SKIPBO_TRACEBACK=1`` to see the
traceback behind such a line instead. The other statuses: 0 done, 1 a tournament stopped because
an agent failed while playing (``skipbo evaluate``: the games before it are reported), 130
interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

import skipbo_env
from training.backend_names import backend_names

SUBCOMMANDS = {
    "demo": ("skipbo_cli.demo", "play and print one seeded game"),
    "play": ("skipbo_cli.play", "play one seat in the terminal against bots or saved models"),
    "replay": ("skipbo_cli.replay", "step through a saved game move by move"),
    "evaluate": ("skipbo_cli.evaluate", "play a seeded tournament between policies and report win rates"),
    "benchmark": ("skipbo_cli.benchmark", "score one policy on the fixed protocol skipbo-bench-v1 against the ladder"),
    "train": ("skipbo_cli.train", "train an agent by self-play from a YAML config with a training backend "
                                  "({backends}; skipbo train --help says what each trains)"),
    "import-sb3": ("skipbo_cli.import_sb3", "convert a MaskablePPO archive into a safe skipbo model file"),
    "serve": ("skipbo_web.serve", "play the agents and watch saved games in a browser"),
}
USER_ERRORS = (ValueError, OSError)
"""What the project raises for bad input; anything else is a bug and keeps its traceback."""
USAGE_ERROR = 2


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``skipbo evaluate: error: ...``), not the usage."""

    def error(self, message: str) -> None:
        self.exit(USAGE_ERROR, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand's name; only ``command``'s module is imported for its flags
    (``None``: none of them; ``"all"``: every one, for documentation and tests)."""
    parser = CommandParser(prog="skipbo", description="skipbo-lab: Skip-Bo for reinforcement learning.")
    parser.add_argument("--version", action="version", version=f"skipbo-lab {skipbo_env.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, summary) in SUBCOMMANDS.items():
        summary = summary.format(backends=", ".join(backend_names()))  # read now: the backends' one line each
        sub = commands.add_parser(name, help=summary, description=summary)
        sub.set_defaults(_module=module_name, _parser=sub)
        if command in (name, "all"):
            importlib.import_module(module_name).add_arguments(sub)
    return parser


def named_command(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is not an option (``None`` if none)."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in SUBCOMMANDS else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(named_command(argv))
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # named by the subcommand, whose --help lists what it takes
        getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return importlib.import_module(args._module).run(args) or 0
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except USER_ERRORS as error:
        if os.environ.get("SKIPBO_TRACEBACK"):
            raise
        print(f"skipbo {args.command}: error: {describe_error(error)}", file=sys.stderr)
        return USAGE_ERROR


def describe_error(error: Exception) -> str:
    """The error's message on one line; a path error names the path and what went wrong."""
    if isinstance(error, OSError) and error.strerror:
        paths = " -> ".join(str(p) for p in (error.filename, error.filename2) if p is not None)
        return one_line(f"{paths}: {error.strerror}" if paths else error.strerror)
    return one_line(str(error) or type(error).__name__)


def one_line(text: str) -> str:
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
