"""skipbo_env: the Skip-Bo rules engine, its encodings and its environments.

The rules engine (``Rules``, ``Game``, ``Match``) is pure Python and numpy; the
environments are imported on first use so the engine never loads an RL library.
"""

from skipbo_env.actions import NUM_ACTIONS, describe_action
from skipbo_env.encoding import OBS_SIZE, decode_observation, encode_observation, observe
from skipbo_env.game import Game, IllegalActionError
from skipbo_env.match import Match
from skipbo_env.rules import Rules

__version__ = "0.1.0"

__all__ = [
    "NUM_ACTIONS", "OBS_SIZE", "Game", "IllegalActionError", "Match", "Rules", "decode_observation",
    "describe_action", "encode_observation", "observe", "__version__",
]
