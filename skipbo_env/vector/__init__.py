"""The batched engine: thousands of Skip-Bo hands stepped together, identical to the rules engine.

The state of a batch is plain numpy arrays (one record per hand, :mod:`.layout`); the rules,
the legal-action mask and the observation vector are numba kernels over them (:mod:`.kernels`,
:mod:`.observe`), and the hands' random numbers are numpy's own PCG64 streams reproduced inside
the kernels (:mod:`.pcg`). Hand ``i`` of a batch seeded ``s`` is ``Game.new(rules, seed=s + i)``,
state for state, mask for mask and observation for observation (tests/test_vector_engine.py).

==================  ===========================================================================
``VectorGame``      the batch: ``step(actions)``, ``action_mask``, ``obs``, hands dealt again as
                    they end (``Finished`` reports them), ``to_dict(row)`` / ``set_game(row, game)``
``SkipBoVecEnv``    a Stable-Baselines3 ``VecEnv`` (with ``action_masks()``): the learner in one
                    seat, batched opponents in the others (imports stable-baselines3 on first use)
``tournament``      a batched tournament: ``tournament(["greedy", "random"], rules, games, seed)``
``batch_policy``    turns a bot name (``random``, ``greedy``, ``planner[:options]``: kernel bots), an
                    SB3 model, a network or a callable into a batch player
==================  ===========================================================================

Speed: ``benchmarks/vector_speed.py``. The kernels compile once (about a minute on two cores)
and are cached on disk (numba ``cache=True``) for later runs.
"""

from skipbo_env.vector.engine import Finished, VectorGame
from skipbo_env.vector.layout import OUTCOME_NAMES
from skipbo_env.vector.policies import batch_policy
from skipbo_env.vector.tournament import TournamentResult, tournament

__all__ = ["OUTCOME_NAMES", "Finished", "SkipBoVecEnv", "TournamentResult", "VectorGame", "batch_policy", "tournament"]


def __getattr__(name: str):
    if name == "SkipBoVecEnv":
        from skipbo_env.vector.vec_env import SkipBoVecEnv

        return SkipBoVecEnv
    raise AttributeError(f"module 'skipbo_env.vector' has no attribute {name!r}")
