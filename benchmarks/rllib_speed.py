"""RLlib sampling speed: env steps per second with 1 and with 2 env runners (``pip install -e '.[rllib]'``).

    python benchmarks/rllib_speed.py [--runners 1 2] [--steps 4000] [--opponents self] [--address ADDRESS]
                                     [--hidden 256 256] [--seed 0]

For each number of env runners the PPO algorithm of ``backend: rllib`` is built from
``configs/rllib_2p.yaml`` (the learner masked-policy module in every seat with ``--opponents
self``, or the seats drawn from the named kinds) and every env runner samples ``--steps`` env
steps at once (``EnvRunner.sample``, the learner's forward passes included, no learning), once to
warm up and once timed. The figure is the env steps of all runners over the wall-clock time of
the timed round. A local Ray instance is started unless ``--address`` names a cluster. The
command, the versions and the load averages before and after are printed with the figures.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import shlex
import sys
import time

from skipbo_cli.arguments import bounded_int, seed
from skipbo_cli.script import ScriptParser, count, parallel, run
from training.config import load_config
from evaluation.ray_runner import connect_ray
from training.rllib.seating import SeatDrawer
from training.rllib.trainer import build_algorithm_config

MAX_WIDTH = 4096
"""The widest layer --hidden takes."""


def measure(runners: int, steps: int, opponents: list[str], hidden: list[int], seed: int) -> float:
    mix = ",".join(f"{kind}: 1" for kind in opponents)
    config = load_config("rllib_2p", [
        f"rllib.num_env_runners={runners}", f"opponents.mix={{{mix}}}", f"network.hidden={hidden}",
        f"seed={seed}"])
    drawer = SeatDrawer(config.opponents.mix, config.make_rules().num_players, True, seed)
    algorithm = build_algorithm_config(config, drawer).build_algo()
    try:
        def sample(env_runner):
            episodes = env_runner.sample(num_timesteps=steps)
            return sum(episode.env_steps() for episode in episodes)

        algorithm.env_runner_group.foreach_env_runner(sample, local_env_runner=False)  # warm up
        start = time.perf_counter()
        counts = algorithm.env_runner_group.foreach_env_runner(sample, local_env_runner=False)
        return sum(counts) / (time.perf_counter() - start)
    finally:
        algorithm.stop()


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runners", type=parallel, nargs="+", default=[1, 2], help="env runner counts (default 1 2)")
    parser.add_argument("--steps", type=count, default=4000, help="env steps each runner samples (default 4000)")
    parser.add_argument("--opponents", nargs="+", default=["self"], help="opponents.mix kinds, equal weights")
    parser.add_argument("--hidden", type=bounded_int(1, MAX_WIDTH), nargs="+", default=[256, 256], help="network.hidden (default 256 256)")
    parser.add_argument("--address", default=None, help="a running Ray cluster (default: a local instance)")
    parser.add_argument("--seed", type=seed, default=0)
    args = parser.parse_args(argv)
    if importlib.util.find_spec("ray") is None:
        parser.error("Ray is not installed here: pip install -e '.[rllib]' (make test-rllib's environment has it)")

    import numpy
    import ray
    import torch

    from training.rllib.env import register

    print("$ python benchmarks/rllib_speed.py " + " ".join(map(shlex.quote, sys.argv[1:] if argv is None else argv)))
    print(f"versions: python {platform.python_version()}, ray {ray.__version__}, torch {torch.__version__}, "
          f"numpy {numpy.__version__}; {os.cpu_count()} CPUs; load before {os.getloadavg()}")
    connect_ray(args.address, num_cpus=max(os.cpu_count() or 1, max(args.runners)))  # one CPU per env runner
    register()
    try:
        for runners in args.runners:
            rate = measure(runners, args.steps, args.opponents, args.hidden, args.seed)
            print(f"{runners} env runner(s): {rate:8,.0f} env steps/s ({args.steps:,} steps each, "
                  f"opponents {'+'.join(args.opponents)}, hidden {args.hidden})", flush=True)
    finally:
        ray.shutdown()
    print(f"load after {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
