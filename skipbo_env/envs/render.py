"""Text rendering of the table as a player at it sees it (``render_mode="ansi"`` and ``"human"``).

Shown: the building piles (the value each counts as, ``SB`` marking a SKIP-BO card on top), the
draw and completed pile sizes, every seat's stockpile top and size, hand size and discard piles
(bottom to top, all public), and the hand of one seat only: the viewer's.
"""

from __future__ import annotations

from skipbo_env.cards import NUM_VALUES, WILD
from skipbo_env.explain import outcome_sentence


def _card(value: int) -> str:
    return "SB" if value == WILD else str(value)


def _building_pile(pile: list[int]) -> str:
    if not pile:
        return "--"
    return f"{len(pile)} (SB)" if pile[-1] == WILD else str(len(pile))


def _discard_piles(piles: list[list[int]]) -> str:
    return " | ".join(" ".join(_card(v) for v in pile) if pile else "-" for pile in piles)


def status_line(game, names: list[str]) -> str:
    return outcome_sentence(game, names) or f"{names[game.current_seat]} to act"


def render_table(game, viewer: int | None = None, names: list[str] | None = None) -> str:
    """The table as ``viewer`` (default: the seat to act) sees it, as lines of plain text."""
    n = game.num_players
    names = names or [f"player_{seat}" for seat in range(n)]
    viewer = game.current_seat if viewer is None else viewer
    width = max(len(name) for name in names)
    lines = [
        f"Skip-Bo, {n} players, turn {game.turn}: {status_line(game, names)}",
        f"draw pile {len(game.draw_pile)} cards, completed piles {len(game.completed)} cards",
        "building piles (value on top): " + "   ".join(f"[{slot + 1}] {_building_pile(pile)}" for slot, pile in enumerate(game.building)),
    ]
    for seat in range(n):
        marker = ">" if game.outcome is None and seat == game.current_seat else " "
        stock = game.stocks[seat]
        top = _card(stock[-1]) if stock else "-"
        team = f"  team {game.rules.team_of(seat) + 1}" if game.rules.partners else ""
        lines.append(
            f"{marker} {names[seat]:<{width}}  stock {top:>2} ({len(stock)} left)  hand {game.hand_sizes[seat]}"
            f"  discards: {_discard_piles(game.discards[seat])}{team}"
        )
    counts = game.hand_counts[viewer]
    hand = [_card(v) for v in range(1, NUM_VALUES + 1) for _ in range(counts[v])]
    lines.append(f"hand of {names[viewer]}: {' '.join(hand) if hand else '(empty)'}")
    return "\n".join(lines)
