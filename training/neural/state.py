"""What a ``backend: neural`` checkpoint holds beside its model file, checked on ``--resume``: ``state.json``
(counters, clock, curve, the archive of past networks, the evolution, the generator; :data:`STATE_FIELDS`,
:func:`checked_state`) and ``weights.npz``, the float network a resumed run continues from
(:func:`read_float_weights`). The data files it names are :mod:`training.neural.data_files`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.neural import network_from_dict
from training.neural.data_files import DATA_FILE
from training.state_checks import (
    COUNT, LIST, MAPPING, SECONDS, CheckpointError, check_fields, finite_numbers, generator_state, list_of, optional,
    record,
)

WEIGHTS_FILE = "weights.npz"
"""The float weights a resumed run continues from (numpy arrays only, read without pickles)."""
FRESH_ES = {"generation": 0, "sigma": None}
"""The evolution's state before its first generation (the mean is the float network's output layer)."""
STATE_FIELDS = {"generation": COUNT, "games": COUNT, "decisions": COUNT, "wall_seconds": SECONDS, "history": LIST,
                "log": LIST, "archive": LIST, "teacher": optional(MAPPING), "evaluation": optional(MAPPING),
                "es": record({"generation": COUNT, "sigma": optional(finite_numbers(minimum=0.0))}),
                "rng": generator_state()}
"""What a ``backend: neural`` checkpoint's ``state.json`` holds (``data_files`` and the archive are checked
against the run's settings)."""


def checked_state(state: dict, path: Path, window: int) -> None:
    """Refuse (``CheckpointError`` naming the file and the field) a state whose values are not what a run writes."""
    check_fields(state, {**STATE_FIELDS, "data_files": list_of(DATA_FILE, 0, window)}, path)
    for index, network in enumerate(state["archive"]):
        try:
            network_from_dict(network, f"archive[{index}]")
        except ValueError as error:
            raise CheckpointError(f"cannot resume from {path}: {error}") from None


def read_float_weights(path: Path, players: int, hidden: tuple):
    """The float network of a checkpoint's ``weights.npz``: every array present, of its shape, finite."""
    import torch

    from training.neural.value_net import ValueNet

    net = ValueNet(players, hidden)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except Exception as error:
        raise CheckpointError(f"cannot resume: {path} is not a readable weights file ({type(error).__name__}: "
                              f"{error})") from None
    expected = net.state_dict()
    if set(arrays) != set(expected):
        raise CheckpointError(f"cannot resume: {path} holds {sorted(arrays)}, the network has {sorted(expected)}")
    for name, tensor in expected.items():
        array = arrays[name]
        if array.shape != tuple(tensor.shape) or array.dtype != np.float32:
            raise CheckpointError(f"cannot resume: {path}: {name} is {array.dtype} {list(array.shape)}, the network's "
                                  f"is float32 {list(tensor.shape)}")
        if not np.isfinite(array).all():
            raise CheckpointError(f"cannot resume: {path}: {name} holds NaN or infinite weights")
    net.load_state_dict({name: torch.from_numpy(array.copy()) for name, array in arrays.items()})
    return net
