"""Players for the batched engine (:mod:`skipbo_env.vector`): one call chooses the actions of many games.

:mod:`.bots` holds the heuristic bots as numba kernels, :mod:`.policies` turns a bot name, a network,
an SB3 model or a Python policy into a batch player, and :mod:`.seating` lets the players of every
seat of a batch move until the caller (a learner) is to act.
"""

from agents.batched.policies import batch_policy
from agents.batched.seating import BatchOpponents, Seating, batch_opponents

__all__ = ["BatchOpponents", "Seating", "batch_opponents", "batch_policy"]
