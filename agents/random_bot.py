"""``random``: a uniformly random legal action (the floor every other player should beat)."""

from __future__ import annotations

from agents.policy import Bot, kernel_opponents, legal_actions


class RandomBot(Bot):
    """Picks uniformly among the legal action ids of each decision."""

    name = "random"
    compiled_opponents = staticmethod(kernel_opponents)
    """Its kernel twin plays it in ``SingleAgentEnv`` (:mod:`agents.batched.table`)."""

    def act(self, observation: dict) -> int:
        return self.choose(legal_actions(observation))
