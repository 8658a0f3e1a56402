"""Seeds derived from one seed: the single derivation every tournament and training run uses.

A run has one seed; every generator in it (a deal, a policy's draws, an environment, a
pretraining set) gets a seed derived from it and a key that names its place, through numpy's
``SeedSequence(seed, spawn_key=key)``, so no two places share a stream and none depends on the
order in which they are made.
"""

from __future__ import annotations

import numpy as np

SEED_BITS = (32, 63)


def derived_seed(seed: int, *key: int, bits: int = 63) -> int:
    """The seed for ``key`` derived from ``seed``: the words of ``SeedSequence(seed, spawn_key=key)``,
    63 bits (``(word0 << 31) ^ word1``, as tournaments use) or 32 bits (``word0``, as training uses)."""
    if bits not in SEED_BITS:
        raise ValueError(f"bits={bits!r} is not allowed: use 32 or 63")
    words = np.random.SeedSequence(seed, spawn_key=key).generate_state(2, np.uint32)
    if bits == 32:
        return int(words[0])
    return (int(words[0]) << 31) ^ int(words[1])
