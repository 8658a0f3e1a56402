"""Policies that play Skip-Bo: the policy interface, heuristic bots, saved models.

Every policy implements ``act(observation: dict) -> int`` (see :mod:`agents.policy`);
``load_policy(spec)`` turns a bot name, a saved model file or a class path into one.
"""

from agents.expert import ExpertBot
from agents.greedy import GreedyBot
from agents.loading import BOTS, PolicySpecError, load_policy
from agents.planner import PlannerBot
from agents.policy import Bot, Policy
from agents.random_bot import RandomBot

__all__ = ["BOTS", "Bot", "ExpertBot", "GreedyBot", "PlannerBot", "Policy", "PolicySpecError", "RandomBot", "load_policy"]
