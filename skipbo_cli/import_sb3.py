"""``skipbo import-sb3 MODEL.zip OUT.zip``: a MaskablePPO archive as a safe skipbo model file.

Usage::

    skipbo import-sb3 ppo_skipbo.zip models/mine.zip       # then: skipbo evaluate --agents models/mine.zip greedy

The archive must be an ``MlpPolicy`` trained on this project's flat observation (for instance
through ``gymnasium.make("skipbo/SkipBo-v1")``); only its tensors and plain JSON fields are read
(:mod:`agents.sb3_import`), never its pickled objects. OUT is written atomically as ``.zip`` or
``.pt`` (:mod:`agents.saved_model`) and plays through ``agents.load_policy``; an existing OUT is
refused unless ``--overwrite`` is given.
"""

from __future__ import annotations

import argparse
import os

from skipbo_cli import arguments
from skipbo_env.actions import NUM_ACTIONS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="MODEL.zip", help="a Stable-Baselines3 / sb3-contrib archive (model.save)")
    parser.add_argument("out", metavar="OUT.zip", type=arguments.output_file(".zip", ".pt"),
                        help="the skipbo model file to write (.zip or .pt); an existing file is refused, unless "
                             "--overwrite")
    parser.add_argument("--overwrite", action="store_true", help="replace OUT when it exists")


def run(args: argparse.Namespace) -> int:
    from agents.saved_model import load_saved_policy, save_model
    from agents.sb3_import import read_sb3_policy

    if os.path.exists(args.out) and not args.overwrite:
        raise ValueError(f"{args.out!r} already exists: give another file name, or replace it with --overwrite")
    state_dict, metadata = read_sb3_policy(args.model)
    save_model(args.out, state_dict, metadata)
    load_saved_policy(args.out)  # the file just written loads as every model does
    shape = " -> ".join(map(str, [metadata["obs_size"], *metadata["hidden"], NUM_ACTIONS]))
    print(f"wrote {args.out}: {shape}, {metadata['activation']} (from {args.model}); "
          f"play it with: skipbo evaluate --agents {args.out} greedy")
    return 0
