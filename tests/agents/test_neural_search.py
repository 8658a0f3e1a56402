"""The neural bot's search, its stops valued in batches and their inputs derived from the stop one play
before, makes the moves the bot made when each stop was derived from the root (recorded decisions:
``tests/agents/neural_positions.py`` wrote them)."""

from __future__ import annotations

import numpy as np
import pytest

from agents.batched import neural as kernels
from agents.neural import Network, model_path, read_model
from tests.agents.neural_positions import PATH, TABLES

LAYERS = ("first", "first_bias", "second", "second_bias", "output", "output_bias")


@pytest.fixture(scope="module")
def recorded():
    with np.load(PATH) as data:
        return {name: data[name] for name in data.files}


def network(recorded, num_players: int) -> Network:
    if num_players == 2:
        return read_model(model_path("neural-2p"))
    layers = {name: recorded[f"net{num_players}_{name}"] for name in LAYERS}
    layers["output_bias"] = int(layers["output_bias"][0])
    return Network(num_players, kernels.input_indices(num_players), **layers)


@pytest.mark.parametrize("num_players", sorted(TABLES))
def test_the_search_makes_the_recorded_moves(recorded, num_players):
    observations = recorded[f"observations{num_players}"]
    masks = np.unpackbits(recorded[f"masks{num_players}"], axis=1, count=145).astype(bool)
    expected = recorded[f"actions{num_players}"]
    net = network(recorded, num_players).arrays
    actions = np.empty(len(observations), dtype=np.int64)
    valued = np.empty(len(observations), dtype=np.int64)
    kernels.decide_rows_valued(observations, masks, net, actions, valued)
    assert len(expected) > 300
    assert (actions == expected).all(), np.flatnonzero(actions != expected)[:10]
    assert valued.min() >= 1 and valued.sum() > 10 * len(expected)
    for i in range(0, len(observations), 37):  # one decision at a time, as the rules engine asks
        assert kernels.decide(observations[i], masks[i:i + 1], 0, net) == expected[i]


@pytest.mark.parametrize("magnitude", [2 ** 24, 2 ** 58])
def test_a_batch_is_valued_as_each_position_alone(magnitude):
    """The batch runs the second layer in float64 where that is exact, and in integers where it would not be
    (first-layer sums of 2**58 are past float64's exact integers): the values are the integer network's."""
    net = read_model(model_path("neural-2p")).arrays
    first, first_bias, second, second_bias, output, output_bias, _ = net
    rng = np.random.default_rng(3)
    sums = rng.integers(-magnitude, magnitude, size=(50, first.shape[1]), dtype=np.int64)
    values = np.empty(len(sums))
    kernels.network_values(sums, len(sums), net, kernels.unit_layers(net), values)
    work = np.empty(second.shape[0], dtype=np.int64)
    alone = [kernels.network_value(row, second, second_bias, output, output_bias[0], work) for row in sums]
    assert values.tolist() == alone and len(set(alone)) > 40


def test_a_batch_with_an_odd_second_layer_and_rows_past_exact_floats_is_valued_as_each_position_alone():
    """The batch sums two second-layer units at a time (an odd width gets a unit of zeros) and four rows at a
    time (a block with one row past float64's exact integers is valued in integers, the others in floats)."""
    first, first_bias, second, second_bias, output, output_bias, input_of = read_model(model_path("neural-2p")).arrays
    net = (first, first_bias, np.ascontiguousarray(second[:31]), second_bias[:31].copy(), output[:31].copy(),
           output_bias, input_of)
    rng = np.random.default_rng(4)
    sums = rng.integers(-2 ** 24, 2 ** 24, size=(23, first.shape[1]), dtype=np.int64)
    sums[5, 7] = 2 ** 58
    values = np.empty(len(sums))
    kernels.network_values(sums, len(sums), net, kernels.unit_layers(net), values)
    work = np.empty(31, dtype=np.int64)
    alone = [kernels.network_value(row, net[2], net[3], net[4], output_bias[0], work) for row in sums]
    assert values.tolist() == alone and len(set(alone)) > 20
