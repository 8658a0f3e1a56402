"""skipbo_env: the Skip-Bo rules engine, its encodings and its environments.

The rules engine (``Rules``, ``Game``, ``Match``) is pure Python and numpy; the
environments are imported on first use so the engine never loads an RL library. Gymnasium's id
``"skipbo/SkipBo-v0"`` is registered as soon as Gymnasium is imported (:mod:`skipbo_env.envs.registration`).
"""

from skipbo_env.actions import NUM_ACTIONS, ActionParts, decode_action, describe_action
from skipbo_env.encoding import OBS_SIZE, decode_observation, encode_observation, observe
from skipbo_env.envs.registration import register_when_gymnasium_loads
from skipbo_env.game import Game, IllegalActionError
from skipbo_env.match import Match
from skipbo_env.rules import Rules

__version__ = "0.1.0"

register_when_gymnasium_loads()  # "skipbo/SkipBo-v0" for gymnasium.make, without importing Gymnasium here

_LAZY = {"env": "skipbo_env.envs.aec", "raw_env": "skipbo_env.envs.aec", "SingleAgentEnv": "skipbo_env.envs.single_agent"}


def __getattr__(name: str):
    """The environments load gymnasium and pettingzoo, so they are imported on first use."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'skipbo_env' has no attribute {name!r}")


__all__ = [
    "NUM_ACTIONS", "OBS_SIZE", "ActionParts", "Game", "IllegalActionError", "Match", "Rules", "SingleAgentEnv",
    "decode_action", "decode_observation", "describe_action", "encode_observation", "env", "observe", "raw_env", "__version__",
]
