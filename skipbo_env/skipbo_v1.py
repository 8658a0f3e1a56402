"""The PettingZoo environment by its versioned name, as PettingZoo names its own (``from pettingzoo.classic import
chess_v6``): ``from skipbo_env import skipbo_v1``. ``skipbo_v1.env()`` is ``skipbo_env.env()`` and
``skipbo_v1.raw_env`` the unwrapped environment's class (:mod:`skipbo_env.envs.aec`, which keeps the version
history). Importing this module loads PettingZoo and Gymnasium; ``import skipbo_env`` does not."""

from skipbo_env import env
from skipbo_env.envs.aec import raw_env

__all__ = ["env", "raw_env"]
