"""skipbo_env: the Skip-Bo rules engine, its encodings and its environments.

The rules engine (``Rules``, ``Game``, ``Match``) is pure Python and numpy; the
environments are imported when one is made, so the engine never loads an RL library. The PettingZoo
environment is ``skipbo_v1`` (``from skipbo_env import skipbo_v1``; ``skipbo_v1.env()`` is
``skipbo_env.env()``); Gymnasium's id ``"skipbo/SkipBo-v1"`` is registered as soon as Gymnasium is
imported (:mod:`skipbo_env.envs.registration`). The version history is in :mod:`skipbo_env.envs.aec`;
the retired ``v0`` names are refused with a message naming ``v1``.
"""

from skipbo_env.actions import NUM_ACTIONS, ActionParts, decode_action, describe_action
from skipbo_env.encoding import OBS_SIZE, decode_observation, encode_observation, observe
from skipbo_env.envs.registration import register_when_gymnasium_loads
from skipbo_env.game import Game, IllegalActionError
from skipbo_env.match import Match
from skipbo_env.rules import Rules

__version__ = "0.1.0"

register_when_gymnasium_loads()  # "skipbo/SkipBo-v1" for gymnasium.make, without importing Gymnasium here

RETIRED_AEC_ENV_NAMES = ("skipbo_v0",)


# The environments load Gymnasium and PettingZoo, so these three import them only when an environment is made;
# ``skipbo_v1`` is a module of its own (skipbo_env/skipbo_v1.py) and the retired ``skipbo_v0`` one that refuses.
def env(*args, **kwargs):
    """The PettingZoo AEC environment ``skipbo_v1``, wrapped as PettingZoo's classic ones are
    (:func:`skipbo_env.envs.aec.env`)."""
    from skipbo_env.envs.aec import env as wrapped_env

    return wrapped_env(*args, **kwargs)


def raw_env(*args, **kwargs):
    """The unwrapped AEC environment, an instance of :class:`skipbo_env.envs.aec.raw_env` (``skipbo_v1.raw_env``)."""
    from skipbo_env.envs.aec import raw_env as unwrapped_env

    return unwrapped_env(*args, **kwargs)


def SingleAgentEnv(*args, **kwargs):  # noqa: N802 - named as the class it makes
    """The single-agent Gymnasium environment, an instance of :class:`skipbo_env.envs.single_agent.SingleAgentEnv`."""
    from skipbo_env.envs.single_agent import SingleAgentEnv as single_agent_env

    return single_agent_env(*args, **kwargs)


__all__ = [
    "NUM_ACTIONS", "OBS_SIZE", "ActionParts", "Game", "IllegalActionError", "Match", "Rules", "SingleAgentEnv",
    "decode_action", "decode_observation", "describe_action", "encode_observation", "env", "observe", "raw_env", "skipbo_v1",
    "__version__",
]
