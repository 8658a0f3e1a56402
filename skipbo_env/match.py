"""A match: hands in a row with the dealer moving left and running totals.

RULES.md, "Scoring and matches" (``match_end``): ``{"target": N}`` ends when a total reaches N,
``{"rounds": N}`` after N hands (equal totals share the win), ``{"single_hand": True}`` after
one hand without score. In partners, one running total is kept per team.
"""

from __future__ import annotations

import numpy as np

from skipbo_env.game import Game, IllegalActionError
from skipbo_env.rules import Rules


class Match:
    """Hands of one match. ``match.game`` is the hand in play; :meth:`step` acts in it."""

    def __init__(self, rules: Rules | None = None, seed: int | None = None) -> None:
        self.rules = rules if rules is not None else Rules()
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % 2**63)
        self.seed = seed
        self._rng = np.random.default_rng(seed)
        self.team_totals = [0] * self.rules.num_teams
        self.hands: list[dict] = []
        self.winners: tuple[int, ...] = ()
        self.is_over = False
        first_dealer = int(self._rng.random() * self.rules.num_players)
        self.game = self._deal_hand(first_dealer)

    def _deal_hand(self, dealer: int) -> Game:
        """RULES.md, "Deal": every hand starts from the whole deck, shuffled."""
        hand_seed = int(self._rng.integers(2**63))
        return Game.new(self.rules, seed=hand_seed, dealer=dealer)

    @property
    def hand_number(self) -> int:
        """1 for the first hand, counting the hand in play."""
        return len(self.hands) + (0 if self.is_over else 1)

    @property
    def scores(self) -> tuple[int, ...]:
        """Running total per seat; partners both show their team's total."""
        return tuple(self.team_totals[self.rules.team_of(seat)] for seat in range(self.rules.num_players))

    def step(self, action: int) -> None:
        """Act in the current hand; when it ends, score it and deal the next (dealer moves left)."""
        if self.is_over:
            raise IllegalActionError(f"action {action} is not legal: the match is over")
        self.game.step(action)
        if self.game.is_over:
            self._finish_hand()

    def _finish_hand(self) -> None:
        game = self.game
        points = game.points()
        scored = self.rules.match_end.get("single_hand") is not True
        if scored and game.winners:
            self.team_totals[self.rules.team_of(game.winners[0])] += points[game.winners[0]]
        self.hands.append({"outcome": game.outcome, "winners": list(game.winners), "points": list(points),
                           "record": game.record()})
        if self._match_decided():
            self.is_over = True
            return
        self.game = self._deal_hand((game.dealer + 1) % self.rules.num_players)

    def _match_decided(self) -> bool:
        end = self.rules.match_end
        if "single_hand" in end:
            self.winners = self.game.winners
            return True
        if "target" in end:
            reached = [team for team, total in enumerate(self.team_totals) if total >= end["target"]]
            if reached:
                self.winners = self._seats_of(reached)
            return bool(reached)
        if len(self.hands) >= end["rounds"]:
            best = max(self.team_totals)
            self.winners = self._seats_of([t for t, total in enumerate(self.team_totals) if total == best])
            return True
        return False

    def _seats_of(self, teams: list[int]) -> tuple[int, ...]:
        return tuple(seat for seat in range(self.rules.num_players) if self.rules.team_of(seat) in teams)

    def to_dict(self) -> dict:
        """The current hand's state with the match's scores and hand number added."""
        state = self.game.to_dict()
        state["match"] = {"seed": self.seed, "scores": list(self.scores), "team_totals": list(self.team_totals),
                          "hand_number": self.hand_number, "is_over": self.is_over, "winners": list(self.winners)}
        return state
