"""``skipbo train CONFIG [KEY=VALUE ...]``: train an agent by self-play (see :mod:`training.run`).

CONFIG is a shipped config's name (``skipbo train --list-configs``: they travel inside the package, so
``skipbo train quickstart`` needs no checkout) or a YAML file (:func:`training.config.config_path`)."""

from __future__ import annotations

import argparse
import shlex
import sys

import yaml

from agents.loading import RUNS_CODE
from skipbo_env.files import read_file_text
from training.backends import BACKENDS
from training.config import DEFAULT_BACKEND, MAX_CONFIG_BYTES, describe_schema, shipped_configs
from training.run import train


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (f"{parser.description}. The backends (a config's backend:, {DEFAULT_BACKEND} when it has "
                          "none): " + "; ".join(f"{name}: {backend.summary}" for name, backend in BACKENDS.items())
                          + ".")
    parser.epilog = (f"Safety: the policy specs of a config (opponents.mix, evaluation, pretrain.teacher) are "
                     f"agents.load_policy specs: {RUNS_CODE}. That holds for a config file and for the saved "
                     "config of a run folder given to --resume: train only configs and run folders you trust.")
    parser.add_argument("config", nargs="?", metavar="CONFIG",
                        help="a shipped config's name (e.g. quickstart; see --list-configs) or a YAML file")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                        help="override single keys, e.g. ppo.learning_rate=1e-4 budget.total_timesteps=50000")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue this run from its last checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (log lines only)")
    parser.add_argument("--list-keys", action="store_true", help="print every config key with its default and exit")
    parser.add_argument("--list-configs", action="store_true",
                        help="print the shipped configs (names CONFIG takes) with what each trains, and exit")


def run(args: argparse.Namespace) -> int:
    if args.list_keys:
        print(describe_schema())
        return 0
    if args.list_configs:
        print(describe_shipped_configs())
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
        print("skipbo train: error: give a CONFIG (a shipped config such as quickstart, see --list-configs, "
              "or a YAML file) or --resume RUN_DIR", file=sys.stderr)
        return 2
    train(config, overrides, resume=args.resume, progress=not args.no_progress,
          command="skipbo train " + " ".join(shlex.quote(a) for a in sys.argv[2:]))
    return 0


def describe_shipped_configs() -> str:
    """The shipped configs by backend (:data:`training.backends.BACKENDS`, in order; a backend without one says
    so): a line naming the backend and what it trains, then per config its name, what its first comment line says
    it trains, and its file."""
    by_backend: dict[str, list[str]] = {name: [] for name in BACKENDS}
    for name, path in shipped_configs().items():
        text = read_file_text(path, max_bytes=MAX_CONFIG_BYTES, what="config file")
        data = yaml.safe_load(text)
        backend = data.get("backend", DEFAULT_BACKEND) if isinstance(data, dict) else DEFAULT_BACKEND
        by_backend.setdefault(backend, []).append(f"{name:<14} {first_comment(text)}\n{'':<14} {path}")
    lines = []
    for backend, configs in by_backend.items():
        summary = BACKENDS[backend].summary if backend in BACKENDS else "not a backend of this installation"
        lines.append(f"backend {backend}: {summary}" + ("" if configs else " (no shipped config)"))
        lines += configs
    return "\n".join(lines)


def first_comment(text: str) -> str:
    """The first comment line of a YAML file, without its ``#``."""
    for line in text.splitlines():
        if line.startswith("#") and line.strip("# "):
            return line.lstrip("#").strip()
    return ""
