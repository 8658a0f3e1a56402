"""``skipbo demo``: play one seeded game with random legal moves and print it turn by turn."""

from __future__ import annotations

import argparse

import numpy as np

from skipbo_env import Game, describe_action
from skipbo_env.cards import card_name
from skipbo_cli import arguments
from skipbo_cli.rule_flags import add_rule_flags, rules_from_args


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=arguments.seed, default=0,
                        help="seed of the deal and of the moves, >= 0 (default 0)")
    add_rule_flags(parser)


def run(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    game = Game.new(rules, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    print(f"skipbo demo --seed {args.seed}: {rules.num_players} players, stockpiles of {rules.stock_size}, "
          f"dealer seat {game.dealer}")
    while not game.is_over:
        seat, turn = game.current_seat, game.turn
        moves = []
        while not game.is_over and game.current_seat == seat and game.turn == turn:
            legal = game.legal_actions()
            action = legal[int(rng.integers(len(legal)))]
            moves.append(describe_action(action))
            game.step(action)
        tops = " ".join(card_name(s[-1]) if s else "-" for s in game.stocks)
        print(f"turn {turn:3d} seat {seat}: {'; '.join(moves)}  [stock tops {tops}]")
    print(f"outcome: {game.outcome}; winners: {list(game.winners)}; points: {list(game.points())}")
    return 0
