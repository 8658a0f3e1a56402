"""The kernel twin of ``random`` (``agents.random_bot``): the same moves, draw for draw, from a generator seeded as
the Python bot's (the module docstring of :mod:`agents.batched.bots` says how). :mod:`agents.batched.bots`
plays it with the other kernel bots; :mod:`agents.batched.table` plays it as a ``SingleAgentEnv``'s opponent.
"""

from __future__ import annotations

from skipbo_env.vector.jit import jit
from skipbo_env.vector.pcg import integers

VARIANTS = 1
"""The random bot takes one code (it has no options)."""


def variant_of(name: str, spec: str) -> int | None:
    """0 for the spec ``name`` (the random bot's registered name), ``None`` for another spec."""
    return 0 if spec == name else None


@jit
def act(r, legal, g, cfg, streams, variant):
    """The kernel bots' entry (:mod:`agents.batched.codes`): :func:`random_action`."""
    return random_action(r, legal, g, streams)


@jit
def random_action(r, legal, g, streams):
    """``random``: a uniformly random legal id of game ``g`` (-1 when none is legal)."""
    return random_choice(legal, g, streams[g, r.seat])


@jit
def random_choice(legal, g, generator):
    """:func:`random_action` drawing from ``generator`` (``uint64[GENERATOR_WORDS]``)."""
    count = 0
    for action in range(legal.shape[1]):
        count += legal[g, action]
    if count == 0:
        return -1
    return nth_legal(legal, g, 0, legal.shape[1], integers(generator, count))


NTH_BLOCK = 16
"""How many ids :func:`nth_legal` counts at a time."""


@jit
def nth_legal(legal, g, first, last, nth):
    """The id of the ``nth`` (0-based) legal action of game ``g`` among ids ``first .. last - 1`` (-1 if none).

    Whole blocks of ``NTH_BLOCK`` ids are counted, without a branch per id, up to the block that holds it; only
    that block is searched id by id (a branch on each id's legality is mispredicted as often as not)."""
    start = first
    while start + NTH_BLOCK <= last:
        count = 0
        for k in range(NTH_BLOCK):
            count += legal[g, start + k]
        if nth < count:
            break
        nth -= count
        start += NTH_BLOCK
    for action in range(start, last):
        if legal[g, action]:
            if nth == 0:
                return action
            nth -= 1
    return -1
