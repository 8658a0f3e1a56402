"""``residual``: the learned bot's value plus a learned correction, searched with the planner's turn search.

The model (``td.start: teacher``, ``training/td/``) values a place the turn could stop as ``a * v + b + r``: ``v``
the teacher's (``pretrained-2p``, the shipped ``learned-2p``) value of it, ``r`` a small network of the neural
bot's format reading the stop's observation inputs and the teacher's 19 features; a turn end adds ``a_d`` times the
teacher's score of the discard. With ``r`` = 0 it plays exactly the teacher's moves. The kernels are
:mod:`agents.batched.residual`; they read the game's record (as the teacher's kernel does) and the observation, so
the bot plays on the batched engine only, through ``act_rows``.
"""

from __future__ import annotations

import numpy as np

from agents.batched.learned import SHIPPED, variant_of
from agents.batched.residual import residual_actions
from agents.learned_parameters import NAME as LEARNED
from agents.neural import Network

NAME = "residual"
FORMAT = "skipbo-residual/1"
TEACHER = "learned-2p"
"""The teacher: the shipped two-player learned bot (``pretrained-2p``)."""


def teacher_parameters() -> np.ndarray:
    """The parameters of the teacher :data:`TEACHER`."""
    return SHIPPED[variant_of(LEARNED, TEACHER)]


class ResidualBot:
    """The residual model ``network`` (``r`` in the neural bot's integer arrays, its first layer a row per input,
    then per feature) with ``scales`` ``[a, b, a_d]``, over the teacher's value. It draws nothing at random."""

    name = NAME

    def __init__(self, network: Network, scales: np.ndarray, label: str = "in memory") -> None:
        self.network = network
        self.scales = np.asarray(scales, dtype=np.float64)
        self.label = label
        self.parameters = teacher_parameters()

    def __repr__(self) -> str:
        return f"ResidualBot(model={self.label!r})"

    def act_rows(self, engine, rows: np.ndarray, observations: np.ndarray, masks=None) -> np.ndarray:
        """The actions of the seats to act in the games ``rows`` of the batched engine ``engine`` (their
        observations; the legal moves are the engine's own masks)."""
        out = np.empty(len(rows), dtype=np.int64)
        residual_actions(engine.games, engine.action_mask, engine.cfg, np.asarray(rows, dtype=np.int64),
                         self.parameters, np.ascontiguousarray(observations, dtype=np.float32), self.network.arrays,
                         self.scales, out)
        return out
