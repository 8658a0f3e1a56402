"""skipbo_env: the Skip-Bo rules engine, its encodings and its environments.

The rules engine (``Rules``, ``Game``, ``Match``) is pure Python and numpy; the
environments are imported on first use so the engine never loads an RL library. The PettingZoo
environment is ``skipbo_v1`` (``from skipbo_env import skipbo_v1``; ``skipbo_v1.env()`` is
``skipbo_env.env()``); Gymnasium's id ``"skipbo/SkipBo-v1"`` is registered as soon as Gymnasium is
imported (:mod:`skipbo_env.envs.registration`). The version history is in :mod:`skipbo_env.envs.aec`;
the retired ``v0`` names are refused with a message naming ``v1``.
"""

from skipbo_env.actions import NUM_ACTIONS, ActionParts, decode_action, describe_action
from skipbo_env.encoding import OBS_SIZE, decode_observation, encode_observation, observe
from skipbo_env.envs.registration import AEC_ENV_NAME, register_when_gymnasium_loads
from skipbo_env.game import Game, IllegalActionError
from skipbo_env.match import Match
from skipbo_env.rules import Rules

__version__ = "0.1.0"

register_when_gymnasium_loads()  # "skipbo/SkipBo-v1" for gymnasium.make, without importing Gymnasium here

_LAZY = {"env": "skipbo_env.envs.aec", "raw_env": "skipbo_env.envs.aec", "SingleAgentEnv": "skipbo_env.envs.single_agent"}
RETIRED_AEC_ENV_NAMES = ("skipbo_v0",)


def __getattr__(name: str):
    """The environments load gymnasium and pettingzoo, so they are imported on first use."""
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name == AEC_ENV_NAME:
        return importlib.import_module("skipbo_env.envs.aec")
    if name in RETIRED_AEC_ENV_NAMES:
        # ImportError, not AttributeError: ``from skipbo_env import skipbo_v0`` then shows this message
        raise ImportError(f"{name} is retired (its observation had 731 or 734 values); use {AEC_ENV_NAME}: "
                          f"from skipbo_env import {AEC_ENV_NAME}")
    raise AttributeError(f"module 'skipbo_env' has no attribute {name!r}")


__all__ = [
    "NUM_ACTIONS", "OBS_SIZE", "ActionParts", "Game", "IllegalActionError", "Match", "Rules", "SingleAgentEnv",
    "decode_action", "decode_observation", "describe_action", "encode_observation", "env", "observe", "raw_env", "skipbo_v1",
    "__version__",
]
