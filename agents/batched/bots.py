"""The heuristic bots as batch kernels: one call picks the action of every game in a set of rows.

They follow the specifications of the per-observation bots in ``agents/`` (``random``: uniform
over the legal ids; ``greedy``: stockpile tops, else discard-pile tops, else hand cards, a random
play among the preferred kind, repeated while anything fits, then a random hand card (each card
equally likely) onto a random legal discard pile), reading the same facts the observation
holds (the mask and the acting seat's hand). Their random numbers come from a per-game
splitmix64 state (``uint64[batch]``, see :func:`streams_for`), so a batch run is reproducible,
though not draw for draw the same as the ``agents`` bots' generators.

:func:`play_bots` lets them play whole turns, or whole hands, inside one kernel call: the seats
they play are marked in ``controllers[g, seat]`` (``RANDOM_BOT``, ``GREEDY_BOT``, or ``OTHER``
for a seat someone else plays).
"""

from __future__ import annotations

import numpy as np

from skipbo_env.actions import DISCARD_SOURCE, END_TURN, FIRST_DISCARD, PARTNER_STOCK_SOURCE, STOCK_SOURCE
from skipbo_env.vector.kernels import step_game
from skipbo_env.vector.layout import RUNNING
from skipbo_env.vector.jit import jit


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


def seed_streams(generator: np.random.Generator, count: int) -> np.ndarray:
    """``count`` independent splitmix64 states drawn from ``generator``."""
    return generator.integers(0, 2**63, size=count, dtype=np.int64).astype(np.uint64)


def streams_for(seeds: np.ndarray, salt=0) -> np.ndarray:
    """One splitmix64 state per hand seed and ``salt`` (a number or one per seed): the bots of a
    hand play the same moves whichever row and batch the hand is played in."""
    salt = np.asarray(salt, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03)
    mixed = np.asarray(seeds, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) + salt
    return mixed ^ (mixed >> np.uint64(29))


@jit
def uniform(streams, g):
    """The next float in [0, 1) of stream ``g`` (splitmix64, 53 bits)."""
    state = streams[g] + _GOLDEN
    streams[g] = state
    z = (state ^ (state >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * _TO_UNIT


@jit
def below(streams, g, count):
    """A uniform integer in ``[0, count)``."""
    return min(int(uniform(streams, g) * count), count - 1)


@jit
def nth_legal(legal, g, first, last, nth):
    """The id of the ``nth`` (0-based) legal action of game ``g`` among ids ``first .. last - 1``."""
    for action in range(first, last):
        if legal[g, action]:
            if nth == 0:
                return action
            nth -= 1
    return -1


@jit
def random_action(legal, g, streams):
    """``random``: a uniformly random legal id of game ``g`` (-1 when none is legal)."""
    count = 0
    for action in range(legal.shape[1]):
        count += legal[g, action]
    if count == 0:
        return -1
    return nth_legal(legal, g, 0, legal.shape[1], below(streams, g, count))


@jit
def play_preference(source):
    """0 for a stockpile top (own or partner's), 1 for a discard-pile top, 2 for a hand card."""
    if source == STOCK_SOURCE or source == PARTNER_STOCK_SOURCE:
        return 0
    if source >= DISCARD_SOURCE:
        return 1
    return 2


@jit
def greedy_action(r, legal, g, streams):
    """``greedy`` in game ``g`` (record ``r``) for the seat to act."""
    best, count = 3, 0
    for action in range(FIRST_DISCARD):
        if legal[g, action]:
            preference = play_preference(action // 4)
            if preference < best:
                best, count = preference, 1
            elif preference == best:
                count += 1
    if count > 0:
        nth = below(streams, g, count)
        for action in range(FIRST_DISCARD):
            if legal[g, action] and play_preference(action // 4) == best:
                if nth == 0:
                    return action
                nth -= 1
    if legal[g, END_TURN]:
        return END_TURN
    seat = r.seat
    card = below(streams, g, r.hand_size[seat])
    value = 1
    while card >= r.hand[seat, value]:
        card -= r.hand[seat, value]
        value += 1
    first = FIRST_DISCARD + (value - 1) * 4
    piles = 0
    for action in range(first, first + 4):
        piles += legal[g, action]
    return nth_legal(legal, g, first, first + 4, below(streams, g, piles))


@jit
def random_actions(games, legal, rows, streams, out):
    """``out[i]`` = a random legal action of game ``rows[i]``."""
    for i in range(rows.shape[0]):
        out[i] = random_action(legal, rows[i], streams)


@jit
def greedy_actions(games, legal, rows, streams, out):
    """``out[i]`` = greedy's action in game ``rows[i]``."""
    for i in range(rows.shape[0]):
        g = rows[i]
        out[i] = greedy_action(games[g], legal, g, streams)


# Who plays a seat, as the kernels see it (``controllers[g, seat]``).
RANDOM_BOT, GREEDY_BOT = 0, 1
"""Kernel bots: the loop of :func:`play_bots` moves for them."""
KERNEL_BOTS = {"random": RANDOM_BOT, "greedy": GREEDY_BOT}
OTHER = -1
"""Any other player (the learner, a network, a Python policy): :func:`play_bots` stops there."""


@jit
def bot_action(r, legal, g, streams, bot):
    if bot == GREEDY_BOT:
        return greedy_action(r, legal, g, streams)
    return random_action(legal, g, streams)


@jit
def play_bots(games, legal, cfg, controllers, streams, rows, steps):
    """Let the kernel bots move in each game of ``rows`` until a seat they do not play is to act
    or the hand is over; ``steps[i]`` counts the actions taken in game ``rows[i]``."""
    for i in range(rows.shape[0]):
        g = rows[i]
        r = games[g]
        taken = 0
        while r.outcome == RUNNING:
            bot = controllers[g, r.seat]
            if bot < 0:
                break
            step_game(r, legal, cfg, g, bot_action(r, legal, g, streams, bot))
            taken += 1
        steps[i] = taken
