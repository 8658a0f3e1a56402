"""Environments with their opponents named, not built: the names resolved here, above the environments.

The environments take policy objects (``skipbo_env.envs.single_agent.SingleAgentEnv``); this is
where a name such as ``"greedy"`` or a model file becomes one, through :func:`agents.load_policy`.
Gymnasium's id ``"skipbo/SkipBo-v1"`` is registered with :func:`single_agent_env` as its entry
point, so ``gymnasium.make("skipbo/SkipBo-v1", opponents="greedy", num_players=3)`` works.
"""

from __future__ import annotations

from agents.loading import load_policy
from skipbo_env.envs.single_agent import SingleAgentEnv, opponents_for


def single_agent_env(opponents="random", **kwargs):
    """A :class:`~skipbo_env.envs.single_agent.SingleAgentEnv` whose ``opponents`` may be specs.

    ``opponents``: one policy or ``agents.load_policy`` spec for every other seat (one instance
    each), or a list with one per other seat; the other keywords go to the environment.
    """
    rules = SingleAgentEnv.rules_of(kwargs)
    specs = opponents_for(opponents, rules.num_players - 1)
    return SingleAgentEnv(opponents=[load_policy(spec) if isinstance(spec, str) else spec for spec in specs], **kwargs)
