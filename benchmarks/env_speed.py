"""Environment speed: random masked play through the AEC loop and through SingleAgentEnv, steps per second.

    python benchmarks/env_speed.py [--seconds 5] [--players 2 4 6] [--seed 0] [--repeat 1]
                                   [--profile N] [--json]

AEC: the full PettingZoo loop, ``for agent in env.agent_iter(): obs, ... = env.last(); env.step(a)``,
with the observation vector and the action mask built at every ``last()``; the action is drawn
uniformly from the mask. Measured for ``raw_env`` and for the wrapped ``env()`` (PettingZoo's
TerminateIllegal, AssertOutOfBounds and OrderEnforcing wrappers, whose per-step attributes read
the unwrapped environment directly: ``skipbo_env.envs.aec.DirectAttributes``). The end-of-hand steps
with ``None`` count as steps; each hand starts with ``reset`` (shuffle and deal) inside the timing.

SingleAgentEnv: ``reset``/``step`` with a uniformly random legal learner action against
``random`` opponents (``agents.RandomBot``, each fed its own observation dict). A step there is
one learner action plus the opponent actions that follow it; both counts are printed.

Every figure is printed twice: per second of wall-clock time, and per second of this process's
CPU time, which other programs on a shared machine do not slow down (the load averages before and
after are printed too). ``--repeat`` keeps the best of several runs of each measurement.
``--profile N`` ends with the N costliest functions of a cProfile of the wrapped AEC loop for
the first ``--players`` value.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import sys
import time

import gymnasium
import numpy as np
import pettingzoo

import skipbo_env
from agents import load_policy
from skipbo_env import SingleAgentEnv, env, raw_env


class Clock:
    """Wall-clock and CPU time since creation."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def elapsed(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def rates(count: int, clock: Clock) -> tuple[float, float]:
    """``count`` per second of wall-clock time and per second of CPU time."""
    wall, cpu = clock.elapsed()
    return count / wall, count / cpu


def measure_aec(make, players: int, seconds: float, seed: int) -> dict:
    environment = make(num_players=players)
    uniforms = np.random.default_rng(seed).random(1 << 16).tolist()
    steps = hands = 0
    clock = Clock()
    while time.perf_counter() - clock.wall < seconds:
        environment.reset(seed=seed + hands)
        for _ in environment.agent_iter():
            observation, _, terminated, truncated, _ = environment.last()
            if terminated or truncated:
                action = None
            else:
                legal = observation["action_mask"].nonzero()[0]
                action = int(legal[int(uniforms[steps & 0xFFFF] * len(legal))])
            environment.step(action)
            steps += 1
        hands += 1
    wall_rate, cpu_rate = rates(steps, clock)
    return {"steps_per_s": wall_rate, "steps_per_cpu_s": cpu_rate, "hands": hands, "steps_per_hand": steps / hands}


def measure_single_agent(players: int, seconds: float, seed: int) -> dict:
    environment = SingleAgentEnv(opponents=load_policy("random"), num_players=players)
    uniforms = np.random.default_rng(seed).random(1 << 16).tolist()
    steps = hands = actions = 0
    clock = Clock()
    while time.perf_counter() - clock.wall < seconds:
        environment.reset(seed=seed + hands)
        first_action = len(environment.game.record()["actions"])
        done = False
        while not done:
            legal = environment.action_masks().nonzero()[0]
            action = int(legal[int(uniforms[steps & 0xFFFF] * len(legal))])
            _, _, terminated, truncated, _ = environment.step(action)
            done = terminated or truncated
            steps += 1
        actions += len(environment.game.record()["actions"]) - first_action
        hands += 1
    wall_rate, cpu_rate = rates(steps, clock)
    wall_actions, cpu_actions = rates(actions, clock)
    return {"steps_per_s": wall_rate, "steps_per_cpu_s": cpu_rate, "actions_per_s": wall_actions,
            "actions_per_cpu_s": cpu_actions, "hands": hands, "steps_per_hand": steps / hands}


def best_of(repeat: int, measure, *args) -> dict:
    """The run with the most steps per second of CPU time among ``repeat`` runs."""
    return max((measure(*args) for _ in range(repeat)), key=lambda result: result["steps_per_cpu_s"])


def profile_wrapped_loop(players: int, seconds: float, seed: int, top: int) -> str:
    profiler = cProfile.Profile()
    profiler.runcall(measure_aec, env, players, seconds, seed)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def load_average() -> str:
    return ", ".join(f"{load:.2f}" for load in os.getloadavg())


def print_table(results: dict, per: str) -> None:
    suffix = "_per_s" if per == "wall" else "_per_cpu_s"
    title = "wall-clock time" if per == "wall" else "CPU time"
    print(f"{'players':>7} {'AEC raw_env':>12} {'AEC env()':>10} {'SingleAgent':>12} {'(all actions)':>14}  "
          f"steps per second of {title}")
    for players, row in results.items():
        print(f"{players:>7} {row['aec_raw']['steps' + suffix]:>12,.0f} {row['aec_wrapped']['steps' + suffix]:>10,.0f} "
              f"{row['single_agent']['steps' + suffix]:>12,.0f} {row['single_agent']['actions' + suffix]:>14,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="time per measurement")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4, 6])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement; the best is kept")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="print the N costliest functions of the wrapped AEC loop")
    parser.add_argument("--json", action="store_true", help="end with one line of JSON")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat {args.repeat}: use 1 or more")
    print(f"command: python {' '.join(sys.argv)}")
    print(f"skipbo-lab {skipbo_env.__version__}, pettingzoo {pettingzoo.__version__}, gymnasium "
          f"{gymnasium.__version__}, numpy {np.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs, seed {args.seed}")
    print(f"load average before: {load_average()}")
    results = {}
    for players in args.players:
        measure = (args.seconds, args.seed)
        results[players] = {
            "aec_raw": best_of(args.repeat, measure_aec, raw_env, players, *measure),
            "aec_wrapped": best_of(args.repeat, measure_aec, env, players, *measure),
            "single_agent": best_of(args.repeat, measure_single_agent, players, *measure),
        }
    print(f"load average after: {load_average()}")
    print_table(results, "wall")
    print_table(results, "cpu")
    if args.profile:
        print(f"\ncProfile of the wrapped AEC loop, {args.players[0]} players, {args.seconds:g} s:")
        print(profile_wrapped_loop(args.players[0], args.seconds, args.seed, args.profile))
    if args.json:
        print(json.dumps({str(players): row for players, row in results.items()}))


if __name__ == "__main__":
    main()
