"""Players for the batched engine (:mod:`skipbo_env.vector`): one call chooses the actions of many games.

Each kernel bot is a module of its own (``random_bot``, ``greedy``, ``planner``, ``expert``, ``learned``;
``neural`` decides from the observation), the searching ones built on the turn search :mod:`.search`;
:mod:`.bots` gives them their codes and plays them, from ``agents.registry``; :mod:`.policies` turns a bot
name, a network, an SB3 model or a Python policy into a batch player, and :mod:`.seating` lets the players
of every seat of a batch move until the caller (a learner) is to act.
"""

import importlib

__all__ = ["BatchOpponents", "Seating", "batch_opponents", "batch_policy", "compile_kernels", "start_compiling_bots"]

_LAZY = {"BatchOpponents": "seating", "Seating": "seating", "batch_opponents": "seating", "batch_policy": "policies"}
"""The players and seating, imported when first asked for: the Python bots import kernel modules of this package
while ``agents.registry`` loads, and :mod:`.bots` (which :mod:`.policies` imports) reads the registry when it
loads."""


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"agents.batched.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'agents.batched' has no attribute {name!r}")


def compile_kernels(decks: int = 1, bots: tuple[str, ...] | None = None, with_neural: bool = True) -> None:
    """Compile (or load from numba's cache) every kernel a batch of ``decks``-deck hands uses: the
    deal, the rules, the mask, the observation, the kernel ``bots`` (all of
    ``agents.registry.KERNEL_BOTS`` by default) and, ``with_neural``, the neural bot's search
    (:func:`agents.batched.neural.warm_up`). A few seconds from a warm
    cache; about a minute of one core from a cold one (``benchmarks/compile_time.py``). The test
    suite calls it once before its workers start, so they load the kernels instead of each
    compiling them."""
    import numpy as np

    from skipbo_env.rules import Rules
    from skipbo_env.vector import VectorGame
    from agents import registry
    from agents.batched import neural
    from agents.batched.policies import batch_policy
    from agents.batched.seating import Seating

    bots = registry.KERNEL_BOTS if bots is None else bots
    engine = VectorGame(Rules(num_players=2, decks=decks, stock_size=3), 4, seed=0, threads=1)
    seating = Seating(engine, [batch_policy(name) for name in bots])
    rows = np.arange(4)
    seating.assign(rows, np.array([[row % len(bots), (row + 1) % len(bots)] for row in rows]))
    seating.advance(rows)
    engine.reset(1)
    engine.observe(rows)
    engine.step(engine.action_mask.argmax(axis=1))
    if with_neural:
        neural.warm_up(engine.observe(rows), engine.action_mask[rows].copy())


def start_compiling_bots(decks: int = 1):
    """Start compiling (or loading) the kernel bots and the engine, as :func:`compile_kernels` without the
    neural bot, in a second process; returns it (``subprocess.Popen``: ``wait()`` for it). The caller compiles
    its own kernels meanwhile, on the other core, and then loads these from numba's cache: on two cores that
    halves the wait of a cold start. Its output is dropped; should it fail, the caller compiles the bots itself
    when it first plays them."""
    import subprocess
    import sys

    code = f"from agents.batched import compile_kernels; compile_kernels(decks={int(decks)}, with_neural=False)"
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
