"""The kernel bots: one call picks the action of every game in a set of rows, or plays them on.

Each bot of ``agents.registry.REGISTRY`` with a kernel twin (``random``: :mod:`agents.batched.random_bot`;
``greedy``: :mod:`agents.batched.greedy`; ``planner``, ``expert``, ``learned``: their modules of
``agents/batched/``) follows the specification of its class in ``agents/``, reading the same facts the
observation holds (the mask and the acting seat's hand and piles). Each seat of each game has its own
generator, ``streams[g, seat]`` (``uint64[batch, MAX_PLAYERS, 6]``, see :func:`new_streams`): numpy's
``default_rng(seed)`` reproduced in the kernels and drawn from as the ``agents`` bot draws
``Generator.integers``, so a kernel bot seeded like an ``agents`` bot makes the same moves, draw for draw.

**Codes.** The seats a kernel bot plays are marked in ``controllers[g, seat]`` with a code
(:func:`kernel_bot_code`, or ``OTHER`` for a seat someone else plays). The codes are laid out here from the
registry: each kernel bot takes a block of ``VARIANTS`` codes (:mod:`agents.batched.codes`), the blocks in
the order of ``REGISTRY`` from 0 (:data:`FIRST_CODE`).

**Dispatch.** numba calls a kernel it knows when it compiles, so :func:`bot_action` is built from the
registry when this module loads: one small kernel per registered bot (:func:`dispatch_chain`) that calls its
module's ``act`` for a code of its block and hands any other code on to the next bot's. A new kernel bot
needs no change here.

:func:`play_bots` lets them play whole turns, or whole hands, inside one kernel call.
"""

from __future__ import annotations

import importlib

import numpy as np

from skipbo_env.rules import MAX_PLAYERS
from skipbo_env.vector.kernels import PREFETCH_AHEAD, prefetch_heads, step_game
from skipbo_env.vector.layout import RUNNING
from skipbo_env.vector.jit import jit, named_jit, prefetch
from skipbo_env.vector.pcg import GENERATOR_WORDS, seed_generator
from agents import registry
from agents.batched.codes import OTHER, TABLE_CODES  # noqa: F401 (OTHER: callers read bots.OTHER)
from agents.batched.greedy import greedy_action
from agents.batched.random_bot import random_action
from agents.spec_names import split_name, unaliased

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


def kernel_modules(bots) -> dict:
    """``{name: kernel twin's module}`` of the bots of ``bots`` (registry lines) that have one, in their order."""
    return {bot.name: importlib.import_module(bot.kernel) for bot in bots if bot.kernel is not None}


KERNELS = kernel_modules(registry.REGISTRY)
"""The kernel twin's module of each kernel bot of the registry (:mod:`agents.batched.codes` says what one holds)."""


def first_codes(kernels: dict) -> dict:
    """``{bot name: its first code}``: the blocks of ``kernels`` (name -> kernel module) laid out from 0, in order."""
    first, code = {}, 0
    for name, module in kernels.items():
        first[name] = code
        code += module.VARIANTS
    if code > TABLE_CODES:
        raise ValueError(f"the kernel bots take {code} codes; the codes from TABLE_CODES={TABLE_CODES} on are "
                         "the rows of a training table")
    return first


FIRST_CODE = first_codes(KERNELS)
"""``{kernel bot name: its first code}``: a bot's code is its first code plus its variant."""


def kernel_bot_code(spec) -> int | None:
    """The ``controllers`` code of a kernel bot spec (a bot of ``agents.registry.KERNEL_SPECS``: ``"random"``,
    ``"greedy"``, ``"planner"``, ``"planner:avoid_feeding=false,..."``, ``"expert"``, ``"expert:threat=false,..."``,
    ``"learned"``, a shipped model's name, or another name of one, ``agents.spec_names.ALIASES``), ``None`` for
    anything else; a planner or expert spec with an unknown option (or any option of the learned bot) raises
    ``ValueError`` naming the allowed ones."""
    return code_in(spec, KERNELS, FIRST_CODE)


def code_in(spec, kernels: dict, first: dict) -> int | None:
    """:func:`kernel_bot_code` among the bots of ``kernels`` (name -> module), their codes from ``first[name]``."""
    if not isinstance(spec, str):
        return None
    name = unaliased(split_name(spec.strip())[1])  # "g=greedy" is greedy under a short name
    for bot, module in kernels.items():
        variant = module.variant_of(bot, name)
        if variant is not None:
            return first[bot] + variant
    return None


def kernel_bot_of(code: int) -> tuple[str, int]:
    """``(the kernel bot's name, its variant)`` of a code of :func:`kernel_bot_code`; ``ValueError`` for another."""
    for bot, module in KERNELS.items():
        if 0 <= code - FIRST_CODE[bot] < module.VARIANTS:
            return bot, code - FIRST_CODE[bot]
    raise ValueError(f"{code} is not the code of a kernel bot ({registry.KERNEL_SPECS})")


def dispatch_chain(kernels: dict, first: dict, name: str = "bot_action"):
    """The kernel ``bot_action(r, legal, g, cfg, streams, bot)``: the action of the kernel bot of code ``bot`` in
    game ``g`` (record ``r``), -1 for a code of none. A chain of one kernel per bot of ``kernels`` (name ->
    module, its codes from ``first[name]`` on), each calling its module's ``act`` or the next link; numba
    compiles the modules' ``act`` kernels into it, as if the chain were written out by hand. The links are
    named ``<name>_<bot>`` (another chain in the same process needs another ``name``)."""

    def no_bot(r, legal, g, cfg, streams, bot):
        return -1

    chain = named_jit(no_bot, f"{name}_none")
    for bot, module in reversed(kernels.items()):
        chain = _link(module.act, first[bot], module.VARIANTS, chain, f"{name}_{bot}")
    return chain


def _link(act, first: int, variants: int, rest, name: str):
    """A kernel that plays ``act`` for codes ``first .. first + variants - 1`` and hands other codes to ``rest``."""

    def bot_action(r, legal, g, cfg, streams, bot):
        variant = bot - first
        if 0 <= variant < variants:
            return act(r, legal, g, cfg, streams, variant)
        return rest(r, legal, g, cfg, streams, bot)

    return named_jit(bot_action, name)


bot_action = dispatch_chain(KERNELS, FIRST_CODE)
"""``bot_action(r, legal, g, cfg, streams, bot)``: the action of the kernel bot ``bot`` (a code of
:func:`kernel_bot_code`) in game ``g`` (record ``r``)."""


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
