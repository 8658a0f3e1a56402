"""The planner's weights, switches and reach table: what ``agents.planner.PlannerBot`` and its kernel twin
``agents.batched.planner`` both read (the module docstring of :mod:`agents.planner` says what each weighs).
The kernels read them as module-level constants, frozen when a kernel compiles.
"""

from __future__ import annotations

from skipbo_env.cards import HAND_SIZE

SWITCHES = ("search", "hold_wilds", "draw_bonus", "avoid_feeding", "own_stock_gap", "partner_help",
            "smart_discard", "always_block", "break_stalemate", "endgame")
"""``PlannerBot``'s keyword switches, in the order of the bits of a kernel planner's mask."""

STOCK = 100.0
WIN = 1e6
WILD_COST = 6.0
DRAW = 6.0
HAND_PLAY = 0.6
DISCARD_PLAY = 1.2
FEED = 100.0
BLOCK = 400.0
GAP = 6.0
PARTNER = 15.0
STALL_PLAY = 4.0
STALL_COMPLETE = 12.0
STALL_FEED = 0.3
ENDGAME = 3.0

# How much the seats that play after me threaten: the next seat most, later ones less.
SEAT_WEIGHTS = (1.0, 0.5, 0.3, 0.2, 0.1)


def reach_table(max_cards: int = HAND_SIZE, max_missing: int = 12) -> list[list[float]]:
    """``table[k][m]``: the chance that ``k`` unknown cards hold ``m`` given missing values.

    Each card is one of the missing values (``12/162`` each, the deck's share) or a SKIP-BO card
    (``18/162``) that stands for any of them; exact for cards drawn independently.
    """
    per_value, per_wild = 12 / 162, 18 / 162
    table = []
    for cards in range(max_cards + 1):
        row = []
        for missing in range(max_missing + 1):
            spread = {(0, 0): 1.0}  # (missing values held, wilds held) -> chance
            for _ in range(cards):
                after: dict = {}
                for (held, wilds), chance in spread.items():
                    new = (missing - held) * per_value
                    for key, step in (((held + 1, wilds), new), ((held, wilds + 1), per_wild),
                                      ((held, wilds), 1.0 - new - per_wild)):
                        after[key] = after.get(key, 0.0) + chance * step
                spread = after
            row.append(sum(chance for (held, wilds), chance in spread.items() if held + wilds >= missing))
        table.append(row)
    return table
