"""Who plays a seat, as the kernels see it (``controllers[g, seat]``): the codes of the two bots without options,
and of a seat no kernel bot plays. The planner's, the expert's and the learned bot's codes follow in their own
modules (``PLANNER_CODES``, ``EXPERT_CODES``, ``LEARNED_CODE``)."""

from __future__ import annotations

RANDOM_BOT, GREEDY_BOT = 0, 1
"""Kernel bots: the loop of :func:`agents.batched.bots.play_bots` moves for them."""
OTHER = -1
"""Any other player (the learner, a network, a Python policy): :func:`agents.batched.bots.play_bots` stops there."""


def random_code(name: str) -> int | None:
    """The code of ``"random"``; ``None`` for another name."""
    return RANDOM_BOT if name == "random" else None


def greedy_code(name: str) -> int | None:
    """The code of ``"greedy"``; ``None`` for another name."""
    return GREEDY_BOT if name == "greedy" else None
