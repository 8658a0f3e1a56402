"""Every ``Rules`` setting as a command-line flag, the same in every ``skipbo`` command.

``--num-players`` (alias ``--players``), ``--stock-size 20``, ``--decks 2``, ``--partners``,
``--team-win either``, ``--team-stock shared``, ``--exhausted-draw draw``, ``--max-turn-plays N``,
``--max-turns N`` (both take ``none`` for no limit), ``--win-points N``, ``--stock-card-points N``,
and ``--match-end target:500|rounds:N|single_hand``.
"""

from __future__ import annotations

import argparse

from skipbo_env.rules import EXHAUSTED_DRAW_MODES, TEAM_STOCK_MODES, TEAM_WIN_MODES, Rules
from skipbo_cli.arguments import bounded_int
from skipbo_env.rules import MAX_DECKS


def add_rule_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("rule settings (docs/RULES.md; defaults as there)")
    group.add_argument("--num-players", "--players", type=int, default=None, metavar="N", help="2 to 6 (default 2)")
    group.add_argument("--stock-size", type=int, default=None, metavar="N", help="default 30 (2-4 players) or 20 (5-6)")
    group.add_argument("--decks", type=bounded_int(1, MAX_DECKS), default=None, metavar="N",
                       help=f"copies of the 162-card deck, 1 to {MAX_DECKS} (default 1)")
    group.add_argument("--partners", action="store_true", default=None, help="partners game (4 or 6 players)")
    group.add_argument("--team-win", choices=TEAM_WIN_MODES, default=None, help="partners: both stockpiles or either")
    group.add_argument("--team-stock", choices=TEAM_STOCK_MODES, default=None, help="partners: own or shared stockpile")
    group.add_argument("--exhausted-draw", choices=EXHAUSTED_DRAW_MODES, default=None, help="when nothing can be drawn")
    group.add_argument("--max-turn-plays", type=_limit, default=None, metavar="N",
                       help="plays to building piles allowed in one turn (default 100; none: no limit)")
    group.add_argument("--max-turns", type=_limit, default=None, metavar="N",
                       help="truncate a hand after N turns (none: no limit)")
    group.add_argument("--win-points", type=int, default=None, metavar="N", help="points for winning a hand (25)")
    group.add_argument("--stock-card-points", type=int, default=None, metavar="N", help="points per opponent stock card (5)")
    group.add_argument("--match-end", type=_match_end, default=None, metavar="MODE",
                       help="target:500 (default), rounds:N or single_hand")


NO_LIMIT = "none"
"""What ``--max-turn-plays`` and ``--max-turns`` take for "no limit" (the setting ``None``)."""


def _limit(text: str) -> int | str:
    """A limit flag's value: an integer (``Rules`` checks its range) or ``none``."""
    if text.strip().lower() == NO_LIMIT:
        return NO_LIMIT
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a limit: use a positive integer or {NO_LIMIT}") from None


def _match_end(text: str) -> dict:
    if text == "single_hand":
        return {"single_hand": True}
    key, _, number = text.partition(":")
    if key in ("target", "rounds") and number.isdigit():
        return {key: int(number)}
    raise argparse.ArgumentTypeError(f"{text!r} is not a match end: use target:N, rounds:N or single_hand")


def rule_settings(args: argparse.Namespace) -> dict:
    """The rule settings given on the command line (only those given)."""
    names = ("num_players", "stock_size", "decks", "partners", "team_win", "team_stock",
             "exhausted_draw", "max_turn_plays", "max_turns", "win_points", "stock_card_points", "match_end")
    given = {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}
    return {name: None if value == NO_LIMIT else value for name, value in given.items()}


def rules_from_args(args: argparse.Namespace, **defaults) -> Rules:
    """``Rules`` from the flags given, over ``defaults``; ``ValueError`` names a bad combination."""
    return Rules(**{**defaults, **rule_settings(args)})
