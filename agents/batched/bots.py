"""The heuristic bots as batch kernels: one call picks the action of every game in a set of rows.

They follow the specifications of the per-observation bots in ``agents/`` (``random``: uniform
over the legal ids; ``greedy``: stockpile tops, else discard-pile tops, else hand cards, a random
play among the preferred kind, repeated while anything fits, then a random hand card (each card
equally likely) onto a random legal discard pile; ``planner``: :mod:`agents.batched.planner`;
``expert``: :mod:`agents.batched.expert`; ``learned``: :mod:`agents.batched.learned`),
reading the same facts the observation holds (the mask and the acting seat's hand). Each seat of
each game has its own generator, ``streams[g, seat]`` (``uint64[batch, MAX_PLAYERS, 6]``, see
:func:`new_streams`): numpy's ``default_rng(seed)`` reproduced in the kernels and drawn from as
the ``agents`` bot draws ``Generator.integers``, so a kernel bot seeded like an ``agents`` bot
makes the same moves, draw for draw.

:func:`play_bots` lets them play whole turns, or whole hands, inside one kernel call: the seats
they play are marked in ``controllers[g, seat]`` (a code of :func:`kernel_bot_code`, or
``OTHER`` for a seat someone else plays).
"""

from __future__ import annotations

import numpy as np

from skipbo_env.rules import MAX_PLAYERS
from skipbo_env.vector.kernels import PREFETCH_AHEAD, prefetch_heads, step_game
from skipbo_env.vector.layout import RUNNING
from skipbo_env.vector.jit import jit, prefetch
from skipbo_env.vector.pcg import GENERATOR_WORDS, seed_generator
from agents import registry
from agents.batched.codes import GREEDY_BOT, OTHER, RANDOM_BOT  # noqa: F401 (OTHER: callers read bots.OTHER)
from agents.batched.expert import EXPERT_CODES, expert_action
from agents.batched.learned import LEARNED_CODE, SHIPPED, learned_action
from agents.batched.planner import PLANNER_CODES, planner_action
from agents.batched.simple import greedy_action, random_action
from agents.spec_names import split_name

MAX_SEED = 2**63


def new_streams(batch_size: int) -> np.ndarray:
    """Room for the generator of every seat of ``batch_size`` games (seed them with :func:`seed_rows`)."""
    return np.zeros((batch_size, MAX_PLAYERS, GENERATOR_WORDS), dtype=np.uint64)


def seed_rows(streams: np.ndarray, rows, seeds) -> None:
    """Seat ``s`` of game ``rows[i]`` draws from ``default_rng(seeds[i, s])`` (``seeds``: ``[len(rows), seats]``,
    integers from 0 to 2**63 - 1; seats beyond its width are left as they are)."""
    rows = np.asarray(rows, dtype=np.int64)
    _seed_rows(streams, rows, np.asarray(seeds, dtype=np.int64).reshape(len(rows), -1))


@jit
def _seed_rows(streams, rows, seeds):
    for i in range(rows.shape[0]):
        for seat in range(seeds.shape[1]):
            seed_generator(streams[rows[i], seat], seeds[i, seat])


def seed_streams(generator: np.random.Generator, count: int) -> np.ndarray:
    """The generators of ``count`` games, every seat seeded from ``generator``."""
    streams = new_streams(count)
    seed_rows(streams, np.arange(count), generator.integers(0, MAX_SEED, size=(count, MAX_PLAYERS)))
    return streams


def streams_for(seeds: np.ndarray, salt=0) -> np.ndarray:
    """int64 ``[len(seeds), MAX_PLAYERS]``: a generator seed per hand seed, ``salt`` (a number or one per
    seed) and seat, for :func:`seed_rows`; the bots of a hand play the same moves whichever row and
    batch the hand is played in."""
    seeds = np.asarray(seeds, dtype=np.uint64).reshape(-1, 1)
    salt = np.broadcast_to(np.asarray(salt, dtype=np.uint64).reshape(-1, 1), seeds.shape)
    seat = np.arange(MAX_PLAYERS, dtype=np.uint64)[None, :] * np.uint64(0xBF58476D1CE4E5B9)
    mixed = seeds * np.uint64(0x9E3779B97F4A7C15) + salt * np.uint64(0xD1B54A32D192ED03) + seat
    mixed ^= mixed >> np.uint64(29)
    return (mixed >> np.uint64(1)).astype(np.int64)


@jit
def random_actions(games, legal, streams, rows, out):
    """``out[i]`` = a random legal action of game ``rows[i]`` (the rows, then the per-row output, as
    ``VectorGame.run_rows`` splits them among threads)."""
    for i in range(rows.shape[0]):
        prefetch_choice(games, legal, streams, rows, i)
        out[i] = random_action(games[rows[i]], legal, rows[i], streams)


@jit
def greedy_actions(games, legal, streams, rows, out):
    """``out[i]`` = greedy's action in game ``rows[i]``."""
    for i in range(rows.shape[0]):
        prefetch_choice(games, legal, streams, rows, i)
        g = rows[i]
        out[i] = greedy_action(games[g], legal, g, streams)


@jit
def prefetch_choice(games, legal, streams, rows, i):
    """In a loop over ``rows`` at ``i``: ask for what a bot's choice reads of the rows ahead (the record's fixed
    part and the mask: ``prefetch_heads``; then the generator of the seat to act)."""
    prefetch_heads(games, legal, rows, i)
    if i + PREFETCH_AHEAD < rows.shape[0]:
        g = rows[i + PREFETCH_AHEAD]
        prefetch(streams[g, games[g].seat], 0)


def kernel_bot_code(spec) -> int | None:
    """The ``controllers`` code of a kernel bot spec (a bot of ``agents.registry.KERNEL_SPECS``: ``"random"``,
    ``"greedy"``, ``"planner"``, ``"planner:avoid_feeding=false,..."``, ``"expert"``, ``"expert:threat=false,..."``,
    ``"learned"``, a shipped model's name), ``None`` for anything else; a planner or expert spec with an unknown
    option (or any option of the learned bot) raises ``ValueError`` naming the allowed ones."""
    if not isinstance(spec, str):
        return None
    name = split_name(spec.strip())[1]  # "g=greedy" is greedy under a short name
    for bot in registry.REGISTRY:
        code = None if bot.kernel_code is None else bot.kernel_code(name)
        if code is not None:
            return code
    return None


@jit
def bot_action(r, legal, g, cfg, streams, bot):
    """The action of the kernel bot ``bot`` (a code of :func:`kernel_bot_code`) in game ``g`` (record ``r``)."""
    if bot >= LEARNED_CODE:
        return learned_action(r, legal, g, cfg, SHIPPED[bot - LEARNED_CODE])
    if bot >= EXPERT_CODES:
        return expert_action(r, legal, g, cfg, bot - EXPERT_CODES)
    if bot >= PLANNER_CODES:
        return planner_action(r, legal, g, cfg, streams[g, r.seat], bot - PLANNER_CODES)
    if bot == GREEDY_BOT:
        return greedy_action(r, legal, g, streams)
    return random_action(r, legal, g, streams)


@jit
def bot_actions(games, legal, cfg, rows, streams, bot, out):
    """``out[i]`` = the action of the kernel bot ``bot`` (a code of :func:`kernel_bot_code`) in game
    ``rows[i]``, nothing stepped: a teacher's labels, any kernel bot alike."""
    for i in range(rows.shape[0]):
        g = rows[i]
        out[i] = bot_action(games[g], legal, g, cfg, streams, bot)


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
            step_game(r, legal, cfg, g, bot_action(r, legal, g, cfg, streams, bot))
            taken += 1
        steps[i] = taken


def mixed_chooser(batch_size: int, greedy_share: float = 0.7, seed: int = 0):
    """A chooser for :func:`skipbo_env.vector.check.differential_run`: each game's next action is
    the kernel ``greedy`` bot's with probability ``greedy_share``, else the ``random`` bot's."""
    rng = np.random.default_rng(seed)
    streams = seed_streams(rng, batch_size)
    greedy = np.empty(batch_size, dtype=np.int64)
    random = np.empty(batch_size, dtype=np.int64)

    def choose(engine, rows):
        greedy_actions(engine.games, engine.action_mask, streams, rows, greedy)
        random_actions(engine.games, engine.action_mask, streams, rows, random)
        return np.where(rng.random(batch_size) < greedy_share, greedy, random)

    return choose
