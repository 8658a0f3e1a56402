"""A value taken from the turn's start: who is ahead when the turn starts is a baseline's, the network learns
the change.

A hand's result mostly says who is ahead; a decision compares stops that share where their turn started. So both
starts can value a recorded position as ``f(position) - f(turn start) + baseline(turn start)``: ``f`` the network
the search ranks a decision's stops by (their shared terms drop out of the ranking), ``baseline`` a second network
of the turn start that the search never reads. ``f`` then learns only what the turn's plays and discard did to the
result. The teacher start's correction always enters so (:mod:`training.td.residual`); the scratch start does with
``td.turn_baseline`` (:class:`TurnChangeNet`). The turn start is the root of the seat's first decision of the turn,
recorded by the learner (``training.td.learner``: the players' ``turn_starts``).
"""

from __future__ import annotations

import torch
from torch import nn

from training.neural.value_net import ValueNet

BASELINE_HIDDEN = 64
"""The baseline's hidden units."""


def turn_baseline(width: int) -> nn.Sequential:
    """A baseline network of a turn start's ``width`` inputs (already scaled), its output layer zero: it starts at
    0 everywhere."""
    layers = nn.Sequential(nn.Linear(width, BASELINE_HIDDEN), nn.ReLU(), nn.Linear(BASELINE_HIDDEN, 1))
    nn.init.zeros_(layers[2].weight)
    nn.init.zeros_(layers[2].bias)
    return layers


class TurnChangeNet(nn.Module):
    """The scratch start's model with a turn baseline: rows of the position's integer inputs then the turn
    start's (the neural bot's inputs, ``pending_discard`` 1 at the start); the logit ``f(position) - f(turn
    start) + baseline(turn start)``, ``f`` the neural bot's network (``value``, what the kernels play)."""

    def __init__(self, num_players: int, hidden: tuple[int, int]) -> None:
        super().__init__()
        self.value = ValueNet(num_players, hidden)
        self.inputs = self.value.inputs
        self.block = len(self.inputs)
        self.row_width = 2 * self.block
        self.baseline = turn_baseline(self.block)

    def forward(self, rows: torch.Tensor) -> torch.Tensor:
        position, start = rows[:, :self.block], rows[:, self.block:]
        baseline = self.baseline(start.to(torch.float32) * self.value.scale).squeeze(-1)
        return self.value(position) - self.value(start) + baseline
