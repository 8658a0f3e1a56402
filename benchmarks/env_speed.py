"""Environment speed: random masked play through the AEC loop and through SingleAgentEnv, steps per second.

    python benchmarks/env_speed.py [--seconds 5] [--players 2 4 6] [--seed 0] [--json]

AEC: the full PettingZoo loop, ``for agent in env.agent_iter(): obs, ... = env.last(); env.step(a)``,
with the observation vector and the action mask built at every ``last()``; the action is drawn
uniformly from the mask. Measured for ``raw_env`` and for the wrapped ``env()`` (PettingZoo's
TerminateIllegal, AssertOutOfBounds and OrderEnforcing wrappers). The end-of-hand steps with
``None`` count as steps; each hand starts with ``reset`` (shuffle and deal) inside the timing.
The wrappers forward every attribute read (``agent_selection``, ``terminations``, ...) through
three ``__getattr__`` levels, which costs more than the game and the encoding together: loops
that need speed use ``raw_env`` and pick from the mask (as every learner does).

SingleAgentEnv: ``reset``/``step`` with a uniformly random legal learner action against
``random`` opponents (``agents.RandomBot``, each fed its own observation dict). A step there is
one learner action plus the opponent actions that follow it; both counts are printed.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import gymnasium
import numpy as np
import pettingzoo

import skipbo_env
from skipbo_env import SingleAgentEnv, env, raw_env


def measure_aec(make, players: int, seconds: float, seed: int) -> dict:
    environment = make(num_players=players)
    uniforms = np.random.default_rng(seed).random(1 << 16).tolist()
    steps = hands = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
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
    elapsed = time.perf_counter() - start
    return {"steps_per_s": steps / elapsed, "hands": hands, "steps_per_hand": steps / hands}


def measure_single_agent(players: int, seconds: float, seed: int) -> dict:
    environment = SingleAgentEnv(opponents="random", num_players=players)
    uniforms = np.random.default_rng(seed).random(1 << 16).tolist()
    steps = hands = actions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
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
    elapsed = time.perf_counter() - start
    return {"steps_per_s": steps / elapsed, "actions_per_s": actions / elapsed, "hands": hands,
            "steps_per_hand": steps / hands}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="time per measurement")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4, 6])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="end with one line of JSON")
    args = parser.parse_args()
    print(f"command: python {' '.join(sys.argv)}")
    print(f"skipbo-lab {skipbo_env.__version__}, pettingzoo {pettingzoo.__version__}, gymnasium "
          f"{gymnasium.__version__}, numpy {np.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, seed {args.seed}")
    results = {}
    print(f"{'players':>7} {'AEC raw_env':>12} {'AEC env()':>10} {'SingleAgent':>12} {'(all actions)':>14}  steps/s")
    for players in args.players:
        row = {
            "aec_raw": measure_aec(raw_env, players, args.seconds, args.seed),
            "aec_wrapped": measure_aec(env, players, args.seconds, args.seed),
            "single_agent": measure_single_agent(players, args.seconds, args.seed),
        }
        results[str(players)] = row
        print(f"{players:>7} {row['aec_raw']['steps_per_s']:>12,.0f} {row['aec_wrapped']['steps_per_s']:>10,.0f} "
              f"{row['single_agent']['steps_per_s']:>12,.0f} {row['single_agent']['actions_per_s']:>14,.0f}")
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
