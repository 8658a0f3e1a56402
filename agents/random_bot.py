"""``random``: a uniformly random legal action (the floor every other player should beat)."""

from __future__ import annotations

from agents.policy import Bot, legal_actions


class RandomBot(Bot):
    """Picks uniformly among the legal action ids of each decision."""

    name = "random"

    def act(self, observation: dict) -> int:
        return self.choose(legal_actions(observation))
