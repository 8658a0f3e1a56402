"""The neural bot's value network in PyTorch: fitting it to the teacher's lists, and turning it into the integer
network the kernels play (``agents.neural.Network``).

The float network reads the inputs as the observation reads them (:data:`agents.batched.neural.INPUT_SCALE`
times the integer inputs): ``inputs -> hidden[0] -> ReLU -> hidden[1] -> ReLU -> 1``, the logit of the
network's preference for a position. :func:`fit_lists` fits it list by list (the softmax of its values over
the positions one decision can reach); :func:`quantize` rounds each layer's weights to the kernels'
fixed-point units.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from agents.batched.neural import (
    FIRST_BITS, FIRST_SHIFT, INPUT_SCALE, OUTPUT_BITS, SECOND_BITS, input_indices,
)
from agents.neural import Network


INITIAL_OUTCOME_SCALE = 0.05
"""The first ``a`` of the outcome's ``sigmoid(a * value + b)``: the lists fit the values to the teacher's over a
temperature of 10, so a stockpile card is worth some 10 units of value; 0.05 makes it half a logit of the
chance to win."""
CALIBRATION_RATE = 10.0
"""``a`` and ``b``'s step size, in units of the network's."""


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


def quantize(net: ValueNet, scale: np.ndarray | None = None) -> Network:
    """The integer network of ``net`` (weights rounded to the kernels' units; see ``agents.batched.neural``);
    ``scale``: what one integer step of each first-layer row is worth to the float network (default: the
    inputs', ``INPUT_SCALE``; a network reading more rows than the inputs gives its own)."""
    with torch.no_grad():
        scale = INPUT_SCALE[net.inputs] if scale is None else scale
        first = np.rint(net.first.weight.double().numpy().T * scale[:, None] * 2.0 ** FIRST_BITS)
        first_bias = np.rint(net.first.bias.double().numpy() * 2.0 ** FIRST_BITS)
        hidden_unit = 2.0 ** (FIRST_BITS - FIRST_SHIFT)  # the first layer's outputs, in units of 2**-12
        second = np.rint(net.second.weight.double().numpy() * 2.0 ** SECOND_BITS)
        second_bias = np.rint(net.second.bias.double().numpy() * hidden_unit * 2.0 ** SECOND_BITS)
        output = np.asarray(quantize_output(net.output.weight.double().numpy()[0]))
        output_bias = int(np.rint(float(net.output.bias.double()) * hidden_unit * 2.0 ** OUTPUT_BITS))
    return Network(net.num_players, net.inputs, first.astype(np.int64), first_bias.astype(np.int64),
                   second.astype(np.int64), second_bias.astype(np.int64), output.astype(np.int64), output_bias)


def dequantize(network: Network) -> ValueNet:
    """The float network whose :func:`quantize` is ``network`` (each weight its integer over the layer's units)."""
    net = ValueNet(network.num_players, network.hidden)
    first, first_bias, second, second_bias, output, output_bias, _ = (a.astype(np.float64) for a in network.arrays)
    hidden_unit = 2.0 ** (FIRST_BITS - FIRST_SHIFT)
    layers = {"first.weight": first.T / (INPUT_SCALE[net.inputs][None, :] * 2.0 ** FIRST_BITS),
              "first.bias": first_bias / 2.0 ** FIRST_BITS, "second.weight": second / 2.0 ** SECOND_BITS,
              "second.bias": second_bias / (hidden_unit * 2.0 ** SECOND_BITS),
              "output.weight": output[None, :] / 2.0 ** OUTPUT_BITS,
              "output.bias": output_bias / (hidden_unit * 2.0 ** OUTPUT_BITS)}
    net.load_state_dict({name: torch.from_numpy(np.ascontiguousarray(value, dtype=np.float32))
                         for name, value in layers.items()})
    return net


def quantize_output(weights: np.ndarray) -> list[int]:
    """The output layer's float weights in the kernels' units."""
    return [int(w) for w in np.rint(np.asarray(weights, dtype=np.float64) * 2.0 ** OUTPUT_BITS)]


def zero_network(num_players: int, hidden: tuple[int, int]) -> Network:
    """A network of zeros (its inputs are what the kernels record; it values every position alike)."""
    count = len(input_indices(num_players))
    return Network(num_players, input_indices(num_players), np.zeros((count, hidden[0]), np.int64),
                   np.zeros(hidden[0], np.int64), np.zeros((hidden[1], hidden[0]), np.int64),
                   np.zeros(hidden[1], np.int64), np.zeros(hidden[1], np.int64), 0)


def list_rows(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For lists starting at rows ``starts`` of the given lengths: every row's index, its list's position in
    the batch and its place within its list."""
    total = int(lengths.sum())
    owner = np.repeat(np.arange(len(lengths)), lengths)
    within = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + within, owner, within


def list_log_softmax(values: torch.Tensor, owner: np.ndarray, within: np.ndarray, lists: int, width: int):
    """The log-softmax of ``values`` within each list, as a ``[lists, width]`` tensor (-inf where a list is shorter)."""
    padded = torch.full((lists, width), -torch.inf)
    padded[torch.from_numpy(owner), torch.from_numpy(within)] = values
    return torch.log_softmax(padded, dim=1)


def fit_lists(net: ValueNet, data, *, epochs: int, batch_size: int, learning_rate: float, temperature: float,
              generator: np.random.Generator, weight_decay: float = 0.0, outcome_weight: float = 0.0) -> dict:
    """Fit ``net`` to the teacher's lists (``training.neural.value_games.ListData``): on each stop list, the cross-entropy
    of the network's softmax over the list to the softmax of the teacher's values over ``temperature``; on
    each discard list, the cross-entropy to the teacher's choice. With ``outcome_weight`` > 0, also on each
    decision's position (a list of one) ``outcome_weight`` times the binary cross-entropy of the hand's result
    for the seat to ``sigmoid(a * value + b)`` (a Monte-Carlo return; ``a`` > 0 and ``b`` are fitted with it:
    the lists fix the values only up to a constant per list, and in units of the teacher's). Adam; the lists in an order drawn from
    ``generator``; ``batch_size`` lists a step, the step size falling linearly from ``learning_rate`` to a tenth
    of it over the fit. Returns the last epoch's mean losses and how often the network's best is the
    teacher's."""
    share = float(np.clip(data.root_results.mean(), 0.01, 0.99)) if len(data.root_results) else 0.5
    calibration = nn.Parameter(torch.tensor([math.log(INITIAL_OUTCOME_SCALE), math.log(share / (1 - share))]))
    groups = [{"params": list(net.parameters())}]
    if outcome_weight > 0:  # log a (a > 0) and b, from a fair start: faster, two numbers fitted to many positions
        groups.append({"params": [calibration], "lr": CALIBRATION_RATE * learning_rate, "weight_decay": 0.0})
    optimizer = torch.optim.Adam(groups, lr=learning_rate, weight_decay=weight_decay)
    kinds = [("stop", data.stop_inputs, data.stop_lengths.astype(np.int64)),
             ("discard", data.discard_inputs, data.discard_lengths.astype(np.int64))]
    if outcome_weight > 0:
        kinds.append(("outcome", data.root_inputs, np.ones(len(data.root_results), dtype=np.int64)))
    outcomes = torch.from_numpy(data.root_results.astype(np.float32))
    tables = []
    for kind, inputs, lengths in kinds:
        starts = np.cumsum(lengths) - lengths
        tables.append((kind, torch.from_numpy(np.ascontiguousarray(inputs)), lengths, starts))
    stop_targets = torch.from_numpy(data.stop_values.astype(np.float32) / temperature)
    chosen = torch.from_numpy(data.discard_chosen.astype(np.int64))
    counts = [len(lengths) for _, _, lengths, _ in tables]
    kind_of = np.repeat(np.arange(len(tables)), counts)  # every stop list, then every discard list
    index_of = np.concatenate([np.arange(count) for count in counts])
    steps = epochs * -(-len(kind_of) // batch_size)
    schedule = torch.optim.lr_scheduler.LinearLR(optimizer, 1.0, 0.1, total_iters=max(steps - 1, 1))
    summary = {}
    for _ in range(epochs):
        totals = {kind: [0.0, 0, 0] for kind, _, _ in kinds}
        permutation = generator.permutation(len(kind_of))
        for begin in range(0, len(permutation), batch_size):
            batch = permutation[begin:begin + batch_size]
            loss = torch.zeros(())
            for k, (kind, inputs, lengths, starts) in enumerate(tables):
                picked = index_of[batch[kind_of[batch] == k]]
                if not len(picked):
                    continue
                if kind == "outcome":
                    logits = calibration[0].exp() * net(inputs[torch.from_numpy(picked)]) + calibration[1]
                    target = outcomes[torch.from_numpy(picked)]
                    part = outcome_weight * nn.functional.binary_cross_entropy_with_logits(logits, target,
                                                                                           reduction="none")
                    agree = ((logits > 0) == (target > 0.5)).sum().item()
                else:
                    rows, owner, within = list_rows(starts[picked], lengths[picked])
                    width = int(lengths[picked].max())
                    log_q = list_log_softmax(net(inputs[torch.from_numpy(rows)]), owner, within, len(picked), width)
                    if kind == "stop":
                        log_p = list_log_softmax(stop_targets[torch.from_numpy(rows)], owner, within, len(picked),
                                                 width)
                        p = log_p.exp()
                        part = -(p * torch.where(p > 0, log_q, torch.zeros_like(log_q))).sum(1)
                        agree = (log_q.argmax(1) == 0).sum().item()
                    else:
                        target = chosen[torch.from_numpy(picked)]
                        part = -log_q.gather(1, target[:, None])[:, 0]
                        agree = (log_q.argmax(1) == target).sum().item()
                loss = loss + part.sum() / len(batch)
                totals[kind][0] += part.sum().item() / (outcome_weight if kind == "outcome" else 1)  # unweighted
                totals[kind][1] += len(picked)
                totals[kind][2] += agree
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
        summary = {f"{kind}_loss": round(total / max(count, 1), 5) for kind, (total, count, _) in totals.items()}
        summary.update({f"{kind}_agreement": round(agree / max(count, 1), 4)
                        for kind, (_, count, agree) in totals.items()})
    if outcome_weight > 0:
        summary["outcome_scale"] = round(float(calibration[0].detach().exp()), 5)
        summary["outcome_bias"] = round(float(calibration[1].detach()), 5)
    return summary
