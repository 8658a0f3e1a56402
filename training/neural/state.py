"""What a ``backend: neural`` checkpoint holds beside its model file, checked on ``--resume``: ``state.json``
(counters, clock, curve, the archive of past networks, the evolution, the generator; :data:`STATE_FIELDS`,
:func:`checked_state`) and ``weights.npz``, the float network a resumed run continues from
(:func:`read_float_weights`). The data files it names are :mod:`training.neural.data_files`.
"""

from __future__ import annotations

import math
from pathlib import Path

from agents.neural import network_from_dict
from training.checkpoint import HISTORY_POINT, RESULTS, step_of
from training.neural.data_files import DATA_FILE
from training.schema import ConfigError
from training.state_checks import (
    COUNT, MAPPING, SECONDS, CheckpointError, Field, check_fields, generator_state, is_number, list_of, optional,
    read_npz, record,
)

WEIGHTS_FILE = "weights.npz"
"""The float weights a resumed run continues from (numpy arrays only, read without pickles)."""
FRESH_ES = {"generation": 0, "sigma": None}
"""The evolution's state before its first generation (the mean is the float network's output layer)."""
MAX_SIGMA = 1e6
"""The largest spread of an output weight a resumed evolution accepts (the float weights are of order 1)."""
STATE_FIELDS = {"generation": COUNT, "games": COUNT, "decisions": COUNT, "wall_seconds": SECONDS,
                "history": list_of(record({**HISTORY_POINT, "generation": COUNT, "decisions": COUNT})),
                "log": list_of(MAPPING), "archive": list_of(MAPPING), "teacher": optional(RESULTS),
                "evaluation": optional(RESULTS), "data_files": list_of(DATA_FILE), "rng": generator_state()}
"""What a ``backend: neural`` checkpoint's ``state.json`` holds; the evolution (``es``), the archive and the data
files are checked against the run's settings by :func:`checked_state`."""


def spreads(length: int) -> Field:
    """The evolution's spreads of ``length`` output weights: each finite, above 0 (a spread of 0 would stop that
    weight's search for good) and at most :data:`MAX_SIGMA`."""
    return Field(f"a list of {length} finite numbers above 0 and at most {MAX_SIGMA:g}",
                 lambda value: isinstance(value, list) and len(value) == length
                 and all(is_number(item) and 0 < item <= MAX_SIGMA for item in value))


def checked_state(state: dict, path: Path, settings, players: int) -> None:
    """Refuse (``CheckpointError`` naming the file and the field) a state whose values are not what a run of
    ``settings`` (the ``neural`` section) at ``players`` seats writes; a ``neural.window`` override below the data
    files the run keeps is refused as the override's problem (``ConfigError``)."""
    hidden = list(settings.hidden)
    es = record({"generation": COUNT, "sigma": optional(spreads(hidden[-1]))})
    check_fields(state, {**STATE_FIELDS, "es": es}, path)
    generation, step = state["generation"], step_of(path.parent)
    if generation + state["es"]["generation"] != step:
        raise CheckpointError(f"cannot resume from {path}: 'generation' {generation} and 'es' generation "
                              f"{state['es']['generation']} do not add up to {step}, the checkpoint folder's step")

    def refuse(key: str, problem: str) -> CheckpointError:
        return CheckpointError(f"cannot resume from {path}: {key!r} {problem}")

    names = state["data_files"]
    numbers = [int(name[4:-4]) for name in names]
    if numbers != sorted(set(numbers)) or any(number > generation for number in numbers):
        raise refuse("data_files", f"must name distinct generations up to {generation} in order, not {names}")
    if len(names) > settings.window:
        raise ConfigError(f"neural.window={settings.window} is not allowed on --resume of this run: its checkpoint "
                          f"keeps the data of {len(names)} generations; give neural.window >= {len(names)}")
    if len(state["archive"]) > generation + 1:
        raise refuse("archive", f"holds {len(state['archive'])} networks, more than the {generation + 1} generations")
    if any(point["generation"] > generation for point in state["history"]):
        raise refuse("history", f"holds a point after generation {generation}")
    for index, entry in enumerate(state["archive"]):
        try:
            network = network_from_dict(entry, f"archive[{index}]")
        except ValueError as error:
            raise CheckpointError(f"cannot resume from {path}: {error}") from None
        if network.num_players != players or list(network.hidden) != hidden:
            raise refuse("archive", f"[{index}] is a {network.num_players}-seat network of layers "
                                    f"{list(network.hidden)}, the run's is {players}-seat of {hidden}")


def read_float_weights(path: Path, players: int, hidden: tuple):
    """The float network of a checkpoint's ``weights.npz``: every array present, of its shape, finite."""
    import torch

    from training.neural.value_net import ValueNet

    net = ValueNet(players, hidden)
    expected = {name: tuple(tensor.shape) for name, tensor in net.state_dict().items()}
    cap = 4 * sum(math.prod(shape) for shape in expected.values()) + 2**16
    arrays = read_npz(path, max_bytes=cap, dtypes=dict.fromkeys(expected, "float32"), max_array_bytes=cap,
                      shapes_problem=lambda shapes: next(
                          (f"array {name!r} has shape {list(shapes[name])}, the network's is {list(shape)}"
                           for name, shape in expected.items() if shapes[name] != shape), None))
    net.load_state_dict({name: torch.from_numpy(array.copy()) for name, array in arrays.items()})
    return net
