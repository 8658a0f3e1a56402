"""The expert's weights and switches: what ``agents.expert.ExpertBot`` and its kernel twin
``agents.batched.expert`` both read (the module docstring of :mod:`agents.expert` says what each weighs).
The kernels read them as module-level constants, frozen when a kernel compiles.
"""

from __future__ import annotations

SWITCHES = ("card_counting", "threat", "own_prospects", "hold_wilds", "plan_discards")
"""``ExpertBot``'s keyword switches, in the order of the bits of a kernel expert's mask."""

# Worth, in stockpile cards (the search scales them by the planner's STOCK).
THREAT = 1.0  # an opponent sure to reach its stockpile top next turn (before seat and endgame weights)
PROSPECT = 0.4  # being sure to reach my own stockpile top next turn
DRAW = 0.06  # an emptied hand (five cards drawn at once), as the planner's DRAW
WILD_COST = 0.25  # a SKIP-BO card spent in a sequence that plays no stockpile card
ENDGAME = 3.0  # an opponent's threat grows by 1 + ENDGAME / its stockpile size
# Discards, in chances to reach the stockpile next turn.
COVERAGE = 0.1  # per card of the average run that hand and discard piles play from a need
DISCARD_SHAPE = 0.01  # per point of the planner's discard_score, to break ties
DISCARD_WEIGHTS = (DISCARD_SHAPE, COVERAGE, 1.0)  # the weights of a discard's shape, coverage and reach
DISCARD_MARGIN = 1e-12  # a discard must score more than this above every earlier one (lower ids win ties)
ODDS_DIGITS = 4  # the chances fill_chance is asked with are rounded to this many digits (its cache stays small)
