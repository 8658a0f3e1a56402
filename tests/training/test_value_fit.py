"""``training.neural.value_net.fit_lists``: the teacher's lists alone by default, and with ``outcome_weight`` the hands'
results too (a Monte-Carlo return on each decision's position)."""

from __future__ import annotations

import numpy as np
import torch

from training.neural.value_games import ListData
from training.neural.value_net import ValueNet, fit_lists

PLAYERS, HIDDEN = 2, (8, 4)
WIDTH = len(ValueNet(PLAYERS, HIDDEN).inputs)
KEY = 0
"""The input the synthetic results follow (its scale is 1: one step of it is one unit of the float input)."""


def synthetic_data(lists: int = 300, roots: int = 600, seed: int = 0) -> ListData:
    """Stop lists of 3 random rows valued by the key input (distinct in a list, the best first); discard lists of 2 rows; positions whose result
    is 1 where the key input is above 2, else 0."""
    rng = np.random.default_rng(seed)
    stops = rng.integers(0, 5, size=(3 * lists, WIDTH)).astype(np.int16)
    stops[:, KEY] = np.sort(rng.permuted(np.tile(np.arange(5), (lists, 1)), axis=1)[:, :3], axis=1)[:, ::-1].ravel()
    discards = rng.integers(0, 5, size=(2 * lists, WIDTH)).astype(np.int16)
    positions = rng.integers(0, 5, size=(roots, WIDTH)).astype(np.int16)
    return ListData(stops, (10.0 * stops[:, KEY]).astype(np.float32), np.full(lists, 3, np.int16), discards,
                    np.full(lists, 2, np.int16), np.zeros(lists, np.int16), positions,
                    (positions[:, KEY] > 2).astype(np.float32), np.full(4, 0.5, np.float32))


def fitted(data: ListData, outcome_weight: float):
    torch.manual_seed(0)
    net = ValueNet(PLAYERS, HIDDEN)
    summary = fit_lists(net, data, epochs=30, batch_size=64, learning_rate=3e-3, temperature=10.0,
                        generator=np.random.default_rng(1), outcome_weight=outcome_weight)
    return net, summary


def test_without_an_outcome_weight_the_positions_results_change_nothing():
    data = synthetic_data()
    no_roots = ListData(*(getattr(data, name) for name in ListData.__dataclass_fields__))
    no_roots.root_inputs, no_roots.root_results = data.root_inputs[:0], data.root_results[:0]
    (net, summary), (bare, _) = fitted(data, 0.0), fitted(no_roots, 0.0)
    assert "outcome_loss" not in summary
    for name, tensor in net.state_dict().items():
        assert torch.equal(tensor, bare.state_dict()[name]), name


def test_an_outcome_weight_fits_the_chance_to_win_with_a_positive_scale():
    data = synthetic_data()
    _, summary = fitted(data, 1.0)
    assert summary["outcome_agreement"] > 0.9  # the sign of a * value + b predicts the result
    assert summary["outcome_scale"] > 0
    assert summary["outcome_loss"] < 0.4 < float(np.log(2))  # far better than a coin
    assert summary["stop_agreement"] > 0.8  # and the lists still fitted
