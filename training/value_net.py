"""The neural bot's value network in PyTorch: fitting it to self-play returns, and turning it into the integer
network the kernels play (``agents.neural.Network``).

The float network reads the inputs as the observation reads them (:data:`agents.batched.neural.INPUT_SCALE`
times the integer inputs): ``inputs -> hidden[0] -> ReLU -> hidden[1] -> ReLU -> 1``, the logit of the chance
to win. :func:`quantize` rounds each layer's weights to the kernels' fixed-point units.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from agents.batched.neural import (
    FIRST_BITS, FIRST_SHIFT, INPUT_SCALE, OUTPUT_BITS, SECOND_BITS, input_indices,
)
from agents.neural import Network


class ValueNet(nn.Module):
    """The float network of a ``num_players`` table, ``hidden`` = (first width, second width)."""

    def __init__(self, num_players: int, hidden: tuple[int, int]) -> None:
        super().__init__()
        self.num_players = num_players
        self.inputs = input_indices(num_players)
        self.register_buffer("scale", torch.as_tensor(INPUT_SCALE[self.inputs], dtype=torch.float32),
                             persistent=False)
        self.first = nn.Linear(len(self.inputs), hidden[0])
        self.second = nn.Linear(hidden[0], hidden[1])
        self.output = nn.Linear(hidden[1], 1)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        x = inputs.to(torch.float32) * self.scale
        x = torch.relu(self.first(x))
        x = torch.relu(self.second(x))
        return self.output(x).squeeze(-1)


def fit(net: ValueNet, inputs: np.ndarray, targets: np.ndarray, *, epochs: int, batch_size: int,
        learning_rate: float, generator: np.random.Generator, weight_decay: float = 0.0) -> float:
    """Fit ``net`` to the targets (chances in [0, 1]) by binary cross-entropy on its logits, Adam, the rows in an
    order drawn from ``generator``; returns the last epoch's mean loss."""
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate, weight_decay=weight_decay)
    x_all = torch.from_numpy(np.ascontiguousarray(inputs))
    y_all = torch.from_numpy(np.ascontiguousarray(targets, dtype=np.float32))
    loss_fn = nn.BCEWithLogitsLoss()
    mean = 0.0
    for _ in range(epochs):
        order = torch.from_numpy(generator.permutation(len(targets)))
        total, count = 0.0, 0
        for start in range(0, len(order), batch_size):
            index = order[start:start + batch_size]
            loss = loss_fn(net(x_all[index]), y_all[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(index)
            count += len(index)
        mean = total / max(count, 1)
    return mean


def quantize(net: ValueNet) -> Network:
    """The integer network of ``net`` (weights rounded to the kernels' units; see ``agents.batched.neural``)."""
    with torch.no_grad():
        scale = INPUT_SCALE[net.inputs]
        first = np.rint(net.first.weight.double().numpy().T * scale[:, None] * 2.0 ** FIRST_BITS)
        first_bias = np.rint(net.first.bias.double().numpy() * 2.0 ** FIRST_BITS)
        hidden_unit = 2.0 ** (FIRST_BITS - FIRST_SHIFT)  # the first layer's outputs, in units of 2**-12
        second = np.rint(net.second.weight.double().numpy() * 2.0 ** SECOND_BITS)
        second_bias = np.rint(net.second.bias.double().numpy() * hidden_unit * 2.0 ** SECOND_BITS)
        output = np.rint(net.output.weight.double().numpy()[0] * 2.0 ** OUTPUT_BITS)
        output_bias = int(np.rint(float(net.output.bias.double()) * hidden_unit * 2.0 ** OUTPUT_BITS))
    return Network(net.num_players, net.inputs, first.astype(np.int64), first_bias.astype(np.int64),
                   second.astype(np.int64), second_bias.astype(np.int64), output.astype(np.int64), output_bias)


def zero_network(num_players: int, hidden: tuple[int, int]) -> Network:
    """A network of zeros (its inputs are what the kernels record; it values every position alike)."""
    count = len(input_indices(num_players))
    return Network(num_players, input_indices(num_players), np.zeros((count, hidden[0]), np.int64),
                   np.zeros(hidden[0], np.int64), np.zeros((hidden[1], hidden[0]), np.int64),
                   np.zeros(hidden[1], np.int64), np.zeros(hidden[1], np.int64), 0)
