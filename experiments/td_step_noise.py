"""How far a TD run's play moves from one iteration to the next, at each of several learning rates.

From the latest checkpoint of a ``backend: td`` run folder (read only: nothing is written there), the learner
trains on for ``--iterations`` iterations at each learning rate, every run from the same state and generators,
and every ``--every`` iterations its network plays ``--games`` duplicate games against ``--opponent`` on the same
deals. Printed per learning rate: the win rates, their mean and standard deviation, and the mean change between
consecutive points.

Reading it: a policy whose decisions change even slightly plays the same deals differently from the first
changed decision on, so consecutive points differ about as much as points on fresh deals would. Were the network
as strong at every point, their standard deviation would be about the binomial one, sqrt(p(1 - p) / games)
(printed beside it); well above it, each few iterations' updates move the strength itself.

    python experiments/td_step_noise.py RUN --learning-rates 1e-3 3e-4 1e-4

RUN a run without ``td.turn_baseline`` (the script plays a plain value network), such as the first
``td_scratch_2p`` long run, whose checkpoints are in the history (``long_runs/REMOVED.md``:
``git archive 17c08b277a long_runs/td-scratch-2p-20261204-215721 | tar -x -C /tmp``, then RUN is
``/tmp/long_runs/td-scratch-2p-20261204-215721``).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from skipbo_cli.arguments import bounded_float, seed
from skipbo_cli.script import ScriptParser, count, run
from agents.neural import NeuralBot
from training.common import evaluate_policy
from training.config import load_config
from skipbo_env.provenance import machine, versions
from training.checkpoint import RunFolder

learning_rate = bounded_float(lambda value: 0 < value <= 1, "a learning rate above 0, at most 1")


def measure(learner, opponent: str, rules, games: int, deal_seed: int) -> float:
    """The learner's network's win rate against ``opponent`` on the duplicate deals of ``deal_seed``."""
    from training.neural.value_net import quantize

    bot = NeuralBot.of(quantize(learner.net), label="the run's network")
    return evaluate_policy(bot, [opponent], rules, games, deal_seed)[opponent]["win_rate"]


def trace(folder, rate: float, args) -> dict:
    """Train on from the run's latest checkpoint at ``rate``; the win rates at the start and every ``args.every``
    iterations."""
    from training.td.trainer import TDTrainer

    config = load_config(folder.config_path, [f"td.learning_rate={rate}"])
    learner, _ = TDTrainer(config, folder, False, sys.stdout).load()
    rules = config.make_rules()
    rates = [measure(learner, args.opponent, rules, args.games, args.seed)]
    for iteration in range(1, args.iterations + 1):
        learner.iterate()
        if iteration % args.every == 0:
            rates.append(measure(learner, args.opponent, rules, args.games, args.seed))
    mean = float(np.mean(rates))
    return {"learning_rate": rate, "hands": learner.hands_played, "win_rates": rates, "mean": mean,
            "std": float(np.std(rates)), "mean_step": float(np.mean(np.abs(np.diff(rates)))) if len(rates) > 1 else 0.0,
            "binomial_std": math.sqrt(mean * (1 - mean) / args.games)}


def main(argv: list[str] | None = None) -> int:
    import torch

    parser = ScriptParser(prog="td_step_noise.py", description=__doc__.splitlines()[0])
    parser.add_argument("run_folder", help="a backend: td run folder with at least one checkpoint")
    parser.add_argument("--learning-rates", type=learning_rate, nargs="+", default=[1e-3, 3e-4, 1e-4],
                        metavar="RATE", help="the learning rates to train on with (default 1e-3 3e-4 1e-4)")
    parser.add_argument("--iterations", type=count, default=16, help="iterations trained at each rate (default 16)")
    parser.add_argument("--every", type=count, default=2, help="iterations between measurements (default 2)")
    parser.add_argument("--games", type=count, default=200, help="games of each measurement (default 200)")
    parser.add_argument("--opponent", choices=("random", "greedy", "planner", "expert", "pretrained-2p"),
                        default="greedy", help="the bot measured against (default greedy)")
    parser.add_argument("--seed", type=seed, default=12345, help="the measurement deals' seed (default 12345)")
    args = parser.parse_args(argv)
    folder = RunFolder.open(args.run_folder)
    if folder.latest_checkpoint() is None:
        raise ValueError(f"{args.run_folder}: the run has no checkpoint to start from")
    torch.set_num_threads(1)
    print(f"command: python experiments/td_step_noise.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    print(f"from: {folder.latest_checkpoint()}; measured against {args.opponent} on {args.games} duplicate games "
          f"(deal seed {args.seed}) every {args.every} of {args.iterations} iterations")
    print(f"versions: {versions()}; machine: {machine()}")
    begin = time.process_time()
    for rate in args.learning_rates:
        result = trace(folder, rate, args)
        print(f"learning rate {rate:g}: win rates {' '.join(f'{r:.1%}' for r in result['win_rates'])}; "
              f"mean {result['mean']:.1%}, std {result['std']:.1%} (binomial {result['binomial_std']:.1%}), "
              f"mean change {result['mean_step']:.1%} (to {result['hands']:,} hands)")
    print(f"CPU: {time.process_time() - begin:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
