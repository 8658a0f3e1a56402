"""Your own policy in a seeded tournament against the shipped bots.

    python examples/own_policy_tournament.py --games 200

A policy is any object with ``act(observation) -> action id`` (``reset(seed)`` is optional). The
observation is the dict every policy receives: the vector and the action mask;
``skipbo_env.decode_observation`` reads the vector back. The same class plays from the command
line under a short name: ``skipbo evaluate --agents mine=examples/own_policy_tournament.py:StockFirst greedy``.
"""

from __future__ import annotations

import argparse

import numpy as np

from evaluation import run_tournament
from evaluation.report import print_report
from skipbo_env import Rules, decode_observation
from skipbo_env.actions import STOCK_SOURCE, decode_action


class StockFirst:
    """Plays its stockpile top whenever it can, else any other play, else the discard of its
    highest card (a simple plan a researcher might start from)."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict) -> int:
        legal = [int(a) for a in np.flatnonzero(observation["action_mask"])]
        parts = {action: decode_action(action) for action in legal}
        stock = [a for a in legal if parts[a].kind == "play" and parts[a].source == STOCK_SOURCE]
        if stock:
            return stock[0]
        plays = [a for a in legal if parts[a].kind == "play"]
        if plays and self.rng.random() < 0.5:
            return int(self.rng.choice(plays))
        discards = [a for a in legal if parts[a].kind == "discard"]
        if discards:
            hand = decode_observation(observation)["hand"]
            highest = max(hand) if hand else 0
            best = [a for a in discards if parts[a].value == highest] or discards
            return best[0]
        return legal[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stock-size", type=int, default=10)
    args = parser.parse_args()
    result = run_tournament([StockFirst(), "greedy", "random"], Rules(stock_size=args.stock_size), games=args.games,
                            seed=args.seed, names=["stock-first", "greedy", "random"])
    print_report(result, f"python examples/own_policy_tournament.py --games {args.games} --seed {args.seed}")


if __name__ == "__main__":
    main()
