"""The one interface every player implements, and a small base class for bots.

A policy is any object with ``act(observation: dict) -> int``. The dict is the environment's
policy input, as returned by ``skipbo_env.encoding.observe(game, seat)``::

    {"observation": float32 vector, "action_mask": int8[145]}

``act`` returns a legal action id (``action_mask[id] == 1``). A policy may also define
``reset(seed)``, called at the start of every hand with a seed for its own randomness, so a
tournament or an environment can make every run reproducible. Policies read the vector only
through ``skipbo_env.encoding.decode_observation`` and never reach into the engine, so one bot
plays unchanged in the AEC environment, the single-agent wrapper and the tournament harness.
"""

from __future__ import annotations

import importlib
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Policy(Protocol):
    """Anything that picks a legal action id from an observation dict."""

    def act(self, observation: dict) -> int:  # pragma: no cover - a protocol
        ...


def legal_actions(observation: dict) -> np.ndarray:
    """The legal action ids of an observation dict, ascending."""
    return np.flatnonzero(np.asarray(observation["action_mask"]))


def reset_policy(policy: object, seed: int | None) -> None:
    """Call ``policy.reset(seed)`` when the policy has one (``reset`` is optional)."""
    reset = getattr(policy, "reset", None)
    if callable(reset):
        reset(seed)


KERNEL_TABLE = "agents.batched.table"
"""The module that plays kernel bots as a ``SingleAgentEnv``'s opponents, named rather than imported: it asks
``agents.registry`` which class a kernel plays, and the registry imports the bots, which import this module."""


def kernel_opponents(rules, opponents: list):
    """``SingleAgentEnv``'s ``compiled_opponents`` hook, offered by every :class:`Bot`: the opponents' kernel
    player, ``None`` unless ``agents.registry`` gives every opponent's exact class a kernel twin the table plays
    (:func:`agents.batched.table.kernel_opponents`)."""
    return importlib.import_module(KERNEL_TABLE).kernel_opponents(rules, opponents)


class Bot:
    """Base class of the heuristic bots: a name, and a seeded generator renewed by :meth:`reset`.

    Subclasses implement :meth:`act`. Every random choice a bot makes draws from ``self.rng``,
    so the same seed gives the same moves.
    """

    name = "bot"
    compiled_opponents = staticmethod(kernel_opponents)
    """``SingleAgentEnv`` asks it for a kernel player of its opponents; the registry decides which bots have one."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new hand; ``seed`` renews the bot's generator (``None``: fresh entropy)."""
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def choose(self, options) -> int:
        """One of ``options`` (a non-empty sequence), uniformly at random."""
        return int(options[int(self.rng.integers(len(options)))])

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
