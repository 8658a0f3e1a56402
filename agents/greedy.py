"""``greedy``: the baseline other Skip-Bo projects measure against.

While anything fits it plays, in this order of preference: its stockpile top (in partners also
the partner's), otherwise a discard-pile top (its own or, in partners, the partner's), otherwise
a hand card; among the plays of the preferred kind it picks one at random. When nothing fits it
discards a hand card chosen at random (each card in the hand equally likely) onto a random legal
discard pile. All randomness comes from the seeded generator (``reset(seed)``).
"""

from __future__ import annotations

from agents.policy import Bot, legal_actions
from skipbo_env.actions import DISCARD_SOURCE, END_TURN, FIRST_DISCARD, PARTNER_STOCK_SOURCE, STOCK_SOURCE
from skipbo_env.cards import NUM_BUILDING_PILES
from skipbo_env.encoding import decode_hand

STOCK_SOURCES = (STOCK_SOURCE, PARTNER_STOCK_SOURCE)


def play_preference(source: int) -> int:
    """0 for a stockpile top, 1 for a discard-pile top, 2 for a hand card."""
    if source in STOCK_SOURCES:
        return 0
    if source >= DISCARD_SOURCE:
        return 1
    return 2


class GreedyBot(Bot):
    """Stockpile first, then discard tops, then hand cards; a random discard when stuck."""

    name = "greedy"

    def act(self, observation: dict) -> int:
        legal = legal_actions(observation)
        plays = legal[legal < FIRST_DISCARD]
        if len(plays):
            sources = plays // NUM_BUILDING_PILES
            best = min(play_preference(int(source)) for source in sources)
            preferred = [int(a) for a, s in zip(plays, sources) if play_preference(int(s)) == best]
            return self.choose(preferred)
        if legal[-1] == END_TURN and len(legal) == 1:
            return END_TURN
        return self._random_discard(observation, legal)

    def _random_discard(self, observation: dict, legal) -> int:
        hand = decode_hand(observation["observation"])
        value = self.choose(hand)
        first = FIRST_DISCARD + (value - 1) * NUM_BUILDING_PILES
        piles = [int(a) for a in legal if first <= a < first + NUM_BUILDING_PILES]
        return self.choose(piles)

