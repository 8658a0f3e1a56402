"""The batched engine: thousands of Skip-Bo hands stepped together, identical to the rules engine.

The state of a batch is plain numpy arrays (one record per hand, :mod:`.layout`); the rules,
the legal-action mask and the observation vector are numba kernels over them (:mod:`.kernels`,
:mod:`.observe`), and the hands' random numbers are numpy's own PCG64 streams reproduced inside
the kernels (:mod:`.pcg`). Hand ``i`` of a batch seeded ``s`` is ``Game.new(rules, seed=s + i)``,
state for state, mask for mask and observation for observation (tests/vector/test_vector_engine.py).

This package is the engine only. The SB3 ``VecEnv`` over it is
:mod:`skipbo_env.envs.vec_env`; the batched bots and network players are :mod:`agents.batched`;
batched tournaments are :mod:`evaluation`.

==================  ===========================================================================
``VectorGame``      the batch: ``step(actions)``, ``action_mask``, ``obs``, hands dealt again as
                    they end (``Finished`` reports them), ``to_dict(row)`` / ``set_game(row, game)``
==================  ===========================================================================

Speed: ``benchmarks/vector_speed.py``. The kernels compile once (about a minute on two cores)
and are cached on disk (numba ``cache=True``) for later runs.
"""

from skipbo_env.vector.engine import Finished, VectorGame
from skipbo_env.vector.layout import OUTCOME_NAMES

__all__ = ["OUTCOME_NAMES", "Finished", "VectorGame"]
