"""Recorded decisions of the ``neural`` bot, for ``test_neural_search.py``: positions (observation and legal
mask) of a few seeded self-play hands at 2, 3 and 4 seats, and the action the bot chose in each.

The two-seat hands are the shipped ``neural-2p``'s; the three- and four-seat ones a network of random
integer weights each (stored in the file with its positions: no shipped network plays those tables). Only
decisions with more than one legal action are kept. The file was written by the bot as it was before its
search valued the stops in batches (commit ed59bf0); the test holds every later version to the same
moves. To write it again (after a change that is meant to change the bot's moves)::

    PYTHONPATH=. python -m tests.agents.neural_positions
"""

from __future__ import annotations

import os

import numpy as np

from agents.batched.neural import FIRST_BITS, FIRST_SHIFT, INPUT_SCALE, OUTPUT_BITS, SECOND_BITS, input_indices
from agents.neural import Network, model_path, read_model
from skipbo_env import Rules
from skipbo_env.vector import VectorGame

PATH = os.path.join(os.path.dirname(__file__), "neural_positions.npz")
TABLES = {2: (3, 100, 30), 3: (2, 200, 15), 4: (2, 300, 15)}
"""Seats: (hands, first deal seed, stockpile size) of the recorded self-play."""
RANDOM_HIDDEN = (32, 8)
"""The widths of the random networks of the three- and four-seat tables."""
KEEP_EVERY = 2
"""Every second decision with a choice is kept (the file stays small)."""


def random_network(num_players: int, seed: int) -> Network:
    """A network of random weights in the kernels' units, large enough that its decisions depend on the inputs."""
    rng = np.random.default_rng(seed)
    inputs = input_indices(num_players)
    width, second_width = RANDOM_HIDDEN
    hidden_unit = 2.0 ** (FIRST_BITS - FIRST_SHIFT)
    first = rng.normal(0.0, 3.0 / np.sqrt(len(inputs)), (len(inputs), width)) * INPUT_SCALE[inputs][:, None]
    second = rng.normal(0.0, 3.0 / np.sqrt(width), (second_width, width))
    output = rng.normal(0.0, 3.0 / np.sqrt(second_width), second_width)
    return Network(num_players, inputs, np.rint(first * 2.0 ** FIRST_BITS).astype(np.int64),
                   np.rint(rng.normal(0.0, 0.3, width) * 2.0 ** FIRST_BITS).astype(np.int64),
                   np.rint(second * 2.0 ** SECOND_BITS).astype(np.int64),
                   np.rint(rng.normal(0.0, 0.3, second_width) * hidden_unit * 2.0 ** SECOND_BITS).astype(np.int64),
                   np.rint(output * 2.0 ** OUTPUT_BITS).astype(np.int64), 0)


def network_of(num_players: int) -> Network:
    return read_model(model_path("neural-2p")) if num_players == 2 else random_network(num_players, num_players)


def record(num_players: int, network: Network, hands: int, seed: int, stock_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(observations, masks, actions) of ``hands`` self-play hands of ``network`` in every seat."""
    from agents.neural import NeuralBot

    bot = NeuralBot.of(network)
    engine = VectorGame(Rules(num_players=num_players, stock_size=stock_size), hands, seed=seed,
                        auto_reset=False, threads=1)
    observations, masks, actions = [], [], []
    choices = 0
    while not engine.over.all():
        rows = np.flatnonzero(~engine.over)
        chosen = bot.act_batch(engine.obs[rows], engine.action_mask[rows])
        for row, action in zip(rows, chosen):
            if engine.action_mask[row].sum() > 1:
                if choices % KEEP_EVERY == 0:
                    observations.append(engine.obs[row].copy())
                    masks.append(engine.action_mask[row].copy())
                    actions.append(action)
                choices += 1
        engine.step_rows(rows, chosen)
    return np.array(observations), np.array(masks), np.array(actions, dtype=np.int64)


def main() -> None:
    arrays = {}
    for num_players, (hands, seed, stock_size) in TABLES.items():
        network = network_of(num_players)
        if num_players != 2:
            for name, array in zip(("first", "first_bias", "second", "second_bias", "output", "output_bias"),
                                   network.arrays):
                arrays[f"net{num_players}_{name}"] = array
        observations, masks, actions = record(num_players, network, hands, seed, stock_size)
        arrays[f"observations{num_players}"] = observations
        arrays[f"masks{num_players}"] = np.packbits(masks, axis=1)
        arrays[f"actions{num_players}"] = actions
        print(f"{num_players} seats: {len(actions)} decisions")
    np.savez_compressed(PATH, **arrays)
    print(f"wrote {PATH} ({os.path.getsize(PATH):,} bytes)")


if __name__ == "__main__":
    main()
