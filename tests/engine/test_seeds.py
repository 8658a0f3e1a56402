"""One seed derivation (skipbo_env.seeds): tournaments' 63-bit seeds and training's 32-bit ones."""

from __future__ import annotations

import numpy as np
import pytest

from skipbo_env.seeds import derived_seed


def test_a_tournament_seed_is_two_seed_sequence_words_in_63_bits():
    words = np.random.SeedSequence(7, spawn_key=(3, 1, 1)).generate_state(2, np.uint32)
    assert derived_seed(7, 3, 1, 1) == (int(words[0]) << 31) ^ int(words[1])
    assert all(0 <= derived_seed(seed, key) < 2**63 for seed in (0, 2**40) for key in range(20))


def test_a_training_seed_is_the_first_seed_sequence_word_as_runs_have_always_used():
    for key in [(1, 0), (2,), (4,), (3, 17)]:
        first_word = np.random.SeedSequence(123, spawn_key=key).generate_state(1, np.uint32)[0]
        assert derived_seed(123, *key, bits=32) == int(first_word)


def test_every_key_gets_its_own_seed():
    seeds = {derived_seed(5, game, seat, 1) for game in range(50) for seat in range(6)}
    assert len(seeds) == 300 and derived_seed(5, 1) != derived_seed(6, 1)


def test_a_width_other_than_32_or_63_bits_is_refused():
    with pytest.raises(ValueError, match="bits=64 is not allowed: use 32 or 63"):
        derived_seed(0, 1, bits=64)
