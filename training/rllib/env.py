"""The Skip-Bo environments registered for RLlib by name.

- ``"skipbo"`` (:data:`ENV_NAME`): the PettingZoo AEC environment ``skipbo_env.env(...)`` in
  RLlib's ``PettingZooEnv`` wrapper, a multi-agent env with agents ``player_0`` ... One episode
  is one hand; the env config takes every ``skipbo_env.Rules`` setting (``num_players``,
  ``stock_size``, ``decks``, ``partners``, ...) plus ``reward`` (``"win"`` or ``"score"``).
  When a hand ends every agent's info also holds ``turns``, the hand's length in turns, and
  ``illegal_move``: whether an illegal id ended it (PettingZoo's ``TerminateIllegalWrapper``
  ends the hand without an outcome; a masked policy never does that).
- :data:`SINGLE_AGENT_ID` (``skipbo_env.envs.registration.ENV_ID``, ``"skipbo/SkipBo-v1"``): the single-agent
  Gymnasium environment under its Gymnasium id. An
  env runner resolves a name in RLlib's registry before Gymnasium's, so the id works there even
  though Gymnasium knows it only in a process that imported ``skipbo_env.envs.single_agent``.

:func:`register` (called by the trainer, safe to call again) stores both creators in Ray's
registry, which every worker of the cluster reads.
"""

from __future__ import annotations

from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.tune.registry import register_env
from skipbo_env.envs.registration import ENV_ID
import skipbo_env
from agents.environments import single_agent_env

ENV_NAME = "skipbo"
SINGLE_AGENT_ID = ENV_ID


class SkipBoMultiAgentEnv(PettingZooEnv):
    """RLlib's PettingZoo wrapper around ``skipbo_env.env(**env_config)``; the final infos give
    ``turns`` and ``illegal_move``."""

    def __init__(self, env_config: dict | None = None) -> None:
        super().__init__(skipbo_env.env(**dict(env_config or {})))

    def step(self, action):
        observations, rewards, terminated, truncated, infos = super().step(action)
        if terminated["__all__"] or truncated["__all__"]:
            game = self.env.unwrapped.game
            for info in infos.values():
                info["turns"] = game.turn
                info["illegal_move"] = game.outcome is None
        return observations, rewards, terminated, truncated, infos


def make_single_agent_env(env_config: dict | None = None):
    return single_agent_env(**dict(env_config or {}))


def register() -> None:
    """Register :data:`ENV_NAME` and :data:`SINGLE_AGENT_ID` with Ray's registry."""
    register_env(ENV_NAME, SkipBoMultiAgentEnv)
    register_env(SINGLE_AGENT_ID, make_single_agent_env)
