"""numpy's ``default_rng(seed).random()`` stream inside numba kernels, bit for bit.

The rules engine draws every random number from ``np.random.default_rng(seed)``: a PCG64
generator seeded through ``SeedSequence``. The batched engine reproduces that stream in the
kernels, so a hand is dealt and its completed piles are reshuffled with no call back into
Python. The state of one generator is four ``uint64`` words kept in the game's record:
``rng[0:2]`` the 128-bit LCG state (high, low) and ``rng[2:4]`` its increment.

Sources (numpy 1.17+, unchanged since): ``numpy/random/bit_generator.pyx`` (``SeedSequence``:
``mix_entropy``, ``generate_state``), ``numpy/random/src/pcg64/pcg64.h`` (``pcg64_set_seed``,
the XSL-RR output) and ``next_double`` = ``(next_uint64 >> 11) * 2**-53``.
tests/test_vector_engine.py checks the states and floats against numpy itself.
"""

from __future__ import annotations

import numpy as np

from skipbo_env.vector.jit import jit

_M32 = np.uint64(0xFFFFFFFF)
# SeedSequence constants (bit_generator.pyx)
_INIT_A = np.uint64(0x43B0D7E5)
_MULT_A = np.uint64(0x931E8875)
_INIT_B = np.uint64(0x8B51F9DD)
_MULT_B = np.uint64(0x58F38DED)
_MIX_MULT_L = np.uint64(0xCA01F9DD)
_MIX_MULT_R = np.uint64(0x4973F715)
_XSHIFT = np.uint64(16)
_POOL_SIZE = 4
# PCG_DEFAULT_MULTIPLIER_128 (pcg64.h)
_MULT_HIGH = np.uint64(0x2360ED051FC65DA4)
_MULT_LOW = np.uint64(0x4385DF649FCCF645)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@jit
def _hashmix(value, hash_const):
    """SeedSequence's hashmix on 32-bit words; ``hash_const`` is a one-element array, updated."""
    value = (value ^ hash_const[0]) & _M32
    hash_const[0] = (hash_const[0] * _MULT_A) & _M32
    value = (value * hash_const[0]) & _M32
    return value ^ (value >> _XSHIFT)


@jit
def _mix(x, y):
    result = (_MIX_MULT_L * x - _MIX_MULT_R * y) & _M32
    return result ^ (result >> _XSHIFT)


@jit
def seed_words(seed):
    """``SeedSequence(seed).generate_state(4, np.uint64)`` for an integer ``0 <= seed < 2**64``."""
    entropy = np.zeros(2, dtype=np.uint64)
    seed = np.uint64(seed)
    entropy[0] = seed & _M32
    entropy[1] = seed >> np.uint64(32)
    length = 2 if entropy[1] != _ZERO else 1
    hash_const = np.empty(1, dtype=np.uint64)
    hash_const[0] = _INIT_A
    pool = np.zeros(_POOL_SIZE, dtype=np.uint64)
    for i in range(_POOL_SIZE):
        pool[i] = _hashmix(entropy[i] if i < length else _ZERO, hash_const)
    for source in range(_POOL_SIZE):
        for target in range(_POOL_SIZE):
            if source != target:
                pool[target] = _mix(pool[target], _hashmix(pool[source], hash_const))
    words = np.zeros(4, dtype=np.uint64)
    mult = _INIT_B
    for i in range(8):
        value = (pool[i % _POOL_SIZE] ^ mult) & _M32
        mult = (mult * _MULT_B) & _M32
        value = (value * mult) & _M32
        value ^= value >> _XSHIFT
        if i % 2 == 0:
            words[i // 2] = value
        else:
            words[i // 2] |= value << np.uint64(32)
    return words


@jit
def _mul_64(a, b):
    """The 128-bit product of two uint64 as (high, low)."""
    a0, a1 = a & _M32, a >> np.uint64(32)
    b0, b1 = b & _M32, b >> np.uint64(32)
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    middle = (p00 >> np.uint64(32)) + (p01 & _M32) + (p10 & _M32)
    low = (p00 & _M32) | (middle << np.uint64(32))
    high = p11 + (p01 >> np.uint64(32)) + (p10 >> np.uint64(32)) + (middle >> np.uint64(32))
    return high, low


@jit
def _step(rng):
    """One LCG step: state = state * MULT + inc (mod 2**128)."""
    high, low = _mul_64(rng[1], _MULT_LOW)
    high += rng[0] * _MULT_LOW + rng[1] * _MULT_HIGH
    new_low = low + rng[3]
    carry = _ONE if new_low < low else _ZERO
    rng[0] = high + rng[2] + carry
    rng[1] = new_low


@jit
def seed_pcg64(rng, seed):
    """Set ``rng`` (uint64[4]) to ``np.random.PCG64(seed)``'s state (``pcg64_set_seed``)."""
    words = seed_words(seed)
    rng[0] = _ZERO
    rng[1] = _ZERO
    rng[2] = (words[2] << _ONE) | (words[3] >> np.uint64(63))
    rng[3] = (words[3] << _ONE) | _ONE
    _step(rng)
    low = rng[1] + words[1]
    carry = _ONE if low < rng[1] else _ZERO
    rng[0] = rng[0] + words[0] + carry
    rng[1] = low
    _step(rng)


@jit
def next_uint64(rng):
    """PCG64's next output: step, then XSL-RR of the new state."""
    _step(rng)
    rotation = rng[0] >> np.uint64(58)
    value = rng[0] ^ rng[1]
    return (value >> rotation) | (value << ((np.uint64(64) - rotation) & np.uint64(63)))


@jit
def next_double(rng):
    """``Generator.random()``: the next float in [0, 1)."""
    return float(next_uint64(rng) >> np.uint64(11)) * _TO_UNIT


@jit
def fill_doubles(rng, out):
    """``out[:] = Generator.random(len(out))``."""
    for i in range(out.shape[0]):
        out[i] = next_double(rng)


def to_numpy_state(rng: np.ndarray, has_uint32: int = 0, uinteger: int = 0) -> dict:
    """``np.random.PCG64().state`` for the words ``rng`` (as ``Game.to_dict()["rng"]`` holds it)."""
    high, low, inc_high, inc_low = (int(word) for word in rng)
    return {
        "bit_generator": "PCG64",
        "state": {"state": (high << 64) | low, "inc": (inc_high << 64) | inc_low},
        "has_uint32": int(has_uint32),
        "uinteger": int(uinteger),
    }


def from_numpy_state(state: dict) -> np.ndarray:
    """The four words of a ``PCG64`` state dict (refused unless it is one)."""
    if not isinstance(state, dict) or state.get("bit_generator") != "PCG64":
        raise ValueError(f"not a numpy PCG64 generator state: {state!r}")
    mask = (1 << 64) - 1
    value, inc = int(state["state"]["state"]), int(state["state"]["inc"])
    return np.array([value >> 64, value & mask, inc >> 64, inc & mask], dtype=np.uint64)


# ---------------------------------------------------------------------- a bot's own generator
GENERATOR_WORDS = 6
"""A bot's ``default_rng(seed)`` in a kernel: ``uint64[6]``, the four PCG64 words of ``rng`` above,
then numpy's ``has_uint32`` and ``uinteger`` (the spare half of a 64-bit output)."""


@jit
def seed_generator(generator, seed):
    """``generator`` (uint64[6]) := ``np.random.default_rng(seed)`` for an integer ``0 <= seed < 2**64``."""
    seed_pcg64(generator, seed)
    generator[4] = _ZERO
    generator[5] = _ZERO


@jit
def next_uint32(generator):
    """PCG64's 32-bit output: the low half of a fresh 64-bit output, then its high half (``pcg64_next32``)."""
    if generator[4] != _ZERO:
        generator[4] = _ZERO
        return generator[5]
    value = next_uint64(generator)
    generator[4] = _ONE
    generator[5] = value >> np.uint64(32)
    return value & _M32


@jit
def integers(generator, count):
    """``Generator.integers(count)`` for ``1 <= count < 2**32``: Lemire's bounded draw on 32-bit outputs
    (numpy's ``buffered_bounded_lemire_uint32``); ``count == 1`` draws nothing, as in numpy."""
    if count <= 1:
        return 0
    bound = np.uint64(count)
    scaled = next_uint32(generator) * bound
    leftover = scaled & _M32
    if leftover < bound:
        threshold = (_M32 - (bound - _ONE)) % bound
        while leftover < threshold:
            scaled = next_uint32(generator) * bound
            leftover = scaled & _M32
    return int(scaled >> np.uint64(32))
