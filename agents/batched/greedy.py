"""The kernel twin of ``greedy`` (``agents.greedy``): the same moves, draw for draw, from a generator seeded as
the Python bot's (the module docstring of :mod:`agents.batched.bots` says how). :mod:`agents.batched.bots`
plays it with the other kernel bots; :mod:`agents.batched.table` plays it as a ``SingleAgentEnv``'s opponent.
"""

from __future__ import annotations

from skipbo_env.actions import DISCARD_SOURCE, END_TURN, HAND_SOURCES, PARTNER_DISCARD_SOURCE, PARTNER_STOCK_SOURCE, STOCK_SOURCE
from skipbo_env.cards import NUM_DISCARD_PILES
from skipbo_env.vector.jit import discard_id, hand_play_id, jit, play_id
from skipbo_env.vector.pcg import integers
from agents.batched.random_bot import nth_legal

VARIANTS = 1
"""The greedy bot takes one code (it has no options)."""


def variant_of(name: str, spec: str) -> int | None:
    """0 for the spec ``name`` (the greedy bot's registered name), ``None`` for another spec."""
    return 0 if spec == name else None


@jit
def act(r, legal, g, cfg, streams, variant):
    """The kernel bots' entry (:mod:`agents.batched.codes`): :func:`greedy_action`."""
    return greedy_action(r, legal, g, streams)


@jit
def greedy_action(r, legal, g, streams):
    """``greedy`` in game ``g`` (record ``r``) for the seat to act."""
    return greedy_choice(r, legal, g, streams[g, r.seat])


@jit
def legal_count(legal, g, first, last):
    """How many ids ``first .. last - 1`` of game ``g`` are legal."""
    count = 0
    for action in range(first, last):
        count += legal[g, action]
    return count


@jit
def nth_of_two(legal, g, first, second, width, nth, in_first):
    """The ``nth`` legal id among ``first .. first + width - 1`` then ``second .. second + width - 1``
    (``in_first`` of them legal in the first range)."""
    if nth < in_first:
        return nth_legal(legal, g, first, first + width, nth)
    return nth_legal(legal, g, second, second + width, nth - in_first)


@jit
def greedy_choice(r, legal, g, generator):
    """:func:`greedy_action` drawing from ``generator`` (``uint64[GENERATOR_WORDS]``).

    The plays of each kind are two ranges of ids, the seat's own source then the partner's
    (stockpile tops: ``STOCK_SOURCE``, ``PARTNER_STOCK_SOURCE``; discard-pile tops: the
    ``DISCARD_SOURCE`` and ``PARTNER_DISCARD_SOURCE`` piles; hand cards: the hand sources, the
    partner range empty), so a kind's legal plays in id order are the first range's then the second's."""
    width = play_id(1, 0)  # the ids of one source
    for first, second, sources in ((play_id(STOCK_SOURCE, 0), play_id(PARTNER_STOCK_SOURCE, 0), 1),
                                   (play_id(DISCARD_SOURCE, 0), play_id(PARTNER_DISCARD_SOURCE, 0), NUM_DISCARD_PILES),
                                   (hand_play_id(1, 0), hand_play_id(1, 0), HAND_SOURCES)):
        span = width * sources
        in_first = legal_count(legal, g, first, first + span)
        count = in_first + (legal_count(legal, g, second, second + span) if second != first else 0)
        if count > 0:
            return nth_of_two(legal, g, first, second, span, integers(generator, count), in_first)
    if legal[g, END_TURN]:
        return END_TURN
    seat = r.seat
    card = integers(generator, r.hand_size[seat])
    value = 1
    while card >= r.hand[seat, value]:
        card -= r.hand[seat, value]
        value += 1
    first = discard_id(value, 0)
    piles = legal_count(legal, g, first, first + NUM_DISCARD_PILES)
    return nth_legal(legal, g, first, first + NUM_DISCARD_PILES, integers(generator, piles))
