"""``learned``: the expert's whole-turn search with a trained linear valuation of where a sequence stops.

The search and the chances are the expert's (:mod:`agents.expert`: the planner's search over the
turn's plays, card counting from the unseen cards). A stop is worth ``STOCK * (w . features)``
and a discard ``d . (shape, coverage, reach)``; the features are named and explained in
:data:`FEATURES`. The weights ``[w, d]`` are not set by hand: they were
trained by self-play (``training/snes/trainer.py``, see ``agents/pretrained/README.md``) and ship as
JSON (``agents/pretrained/learned-2p.json``, read as numbers only).

:class:`LearnedBot` is the Python twin of the kernel bot (:mod:`agents.batched.learned`): the
features are computed in the same order with the same floating-point operations, so it makes
the same decisions (tests/agents/test_learned.py).
"""

from __future__ import annotations

from agents.expert import ExpertBot, ExpertTurn, Rival
from agents.learned_parameters import (F_DISCARD_NUMBERS, F_DISCARD_WILDS, F_EMPTIED, F_HAND_NUMBERS, F_HAND_WILDS,
                                       F_IDLE_WILDS, F_PARTNER, F_PROSPECT, F_PROSPECT_ENDGAME, F_STALLED_COMPLETED,
                                       F_STALLED_PLAYS, F_STALLED_THREAT, F_STALLED_THREAT_ENDGAME, F_STOCK, F_THREAT,
                                       F_THREAT_ENDGAME, NAME, NUM_FEATURES, WEIGHTS_FILE, read_parameters)
from agents.planner import STOCK, opponents_in_turn_order
from skipbo_env.cards import HAND_SIZE, WILD


class LearnedTurn(ExpertTurn):
    """The expert's turn search with the learned valuation of a stop."""

    def __init__(self, view: dict, bot: LearnedBot) -> None:
        super().__init__(view, bot)
        self.weights = bot.parameters[:NUM_FEATURES]
        self.opponents = [(weight, Rival(info, 1.0, self.can_draw, self.odds), info["stock_size"])
                          for weight, info in opponents_in_turn_order(view)]

    def features(self, state) -> list[float]:
        """The features (:data:`FEATURES`) of stopping in ``state``."""
        needs, hand, mine, theirs, stock_done, partner_done = state
        out = [0.0] * NUM_FEATURES
        stock_cards = stock_done + partner_done
        hand_left = sum(hand)
        discards_played = self.discards_played(mine, theirs)
        hand_wilds = self.hand[WILD] - hand[WILD]
        discard_wilds = self.wilds_used(hand, mine, theirs) - hand_wilds
        out[F_STOCK] = stock_cards
        out[F_HAND_NUMBERS] = self.hand_size0 - hand_left - hand_wilds
        out[F_HAND_WILDS] = hand_wilds
        out[F_DISCARD_NUMBERS] = discards_played - discard_wilds
        out[F_DISCARD_WILDS] = discard_wilds
        if not stock_cards and not self.stalled:
            out[F_IDLE_WILDS] = hand_wilds + discard_wilds
        if hand_left == 0 and self.can_draw:
            out[F_EMPTIED] = 1.0
        threat, endgame = 0.0, 0.0
        for weight, rival, size in self.opponents:
            chance = weight * rival.chance(needs)
            threat += chance
            endgame += chance * (1.0 / size if size else 0.0)
        if self.stalled:
            out[F_STALLED_THREAT] = threat
            out[F_STALLED_THREAT_ENDGAME] = endgame
        out[F_THREAT] = threat
        out[F_THREAT_ENDGAME] = endgame
        if not stock_done:
            drawn = HAND_SIZE if hand_left == 0 else min(HAND_SIZE + 1 - hand_left, self.can_draw)
            reach = self._reach_chance(needs, hand, mine, drawn)
            out[F_PROSPECT] = reach
            if self.stock_size:
                out[F_PROSPECT_ENDGAME] = reach / self.stock_size
        if self.partner_rival is not None:
            out[F_PARTNER] = self.partner_rival.chance(needs)
        if self.stalled:
            out[F_STALLED_PLAYS] = self.hand_size0 - hand_left + stock_cards + discards_played
            out[F_STALLED_COMPLETED] = self.completed(needs)
        return out

    def stop_value(self, state) -> float:
        """``STOCK * (w . features)`` of stopping in ``state``."""
        total = 0.0
        for weight, feature in zip(self.weights, self.features(state)):
            total += weight * feature
        return STOCK * total


class LearnedBot(ExpertBot):
    """The expert's search valued by trained weights (``weights``: a JSON weights file, the shipped one by
    default). It draws nothing at random: given an observation it always decides the same way."""

    name = NAME
    SWITCHES = ()

    def __init__(self, seed: int | None = None, *, weights: str = WEIGHTS_FILE) -> None:
        super().__init__(seed)
        self.weights_file = weights
        self.parameters = [float(value) for value in read_parameters(weights)]

    def __repr__(self) -> str:
        return f"LearnedBot(weights={self.weights_file!r})"

    def turn(self, view: dict) -> LearnedTurn:
        return LearnedTurn(view, self)

    def discard(self, view: dict, discards: list[int]) -> int:
        return self._planned_discard(view, discards, self.parameters[NUM_FEATURES:])


__all__ = ["LearnedBot"]
