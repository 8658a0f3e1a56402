"""What a ``backend: td`` checkpoint holds, checked on ``--resume``: ``state.json`` (the learner's counters, its CPU
seconds and numpy generator, the hands at which each snapshot of the pool was taken, the run's wall clock, the curve
and its best point, the fields the learner's rows read; :data:`STATE_FIELDS`, :func:`checked_state`,
:func:`check_inputs`) and ``learner.npz``, the float weights, Adam's
moments, the pool's float weights and torch's generator (:func:`read_learner_arrays`). Numbers only: a checkpoint
of a 128x32 network at two seats is about 0.6 MB, and 0.19 MB more a snapshot (2.1 MB with 8)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from skipbo_env.files import FileRefused, read_file_bytes
from training.checkpoint import RESULTS, check_step
from training.state_checks import (
    COUNT, PROBABILITY, SECONDS, TEXT, CheckpointError, check_fields, generator_state, list_of, optional, record,
    shown,
)
from training.td.config import MAX_LEARNER_BYTES
from training.td.learner import COUNTERS, TDRun

LEARNER_FILE = "learner.npz"
"""The learner's arrays in a checkpoint (numpy arrays only, read without pickles)."""
STATE_FIELDS = {**{name: COUNT for name in COUNTERS}, "cpu_seconds": SECONDS, "wall_seconds": SECONDS,
                "numpy_generator": generator_state(),
                "history": list_of(record({"timesteps": COUNT, "cpu_hours": SECONDS, "results": RESULTS})),
                "best": optional(record({"score": PROBABILITY, "timesteps": COUNT})),
                "evaluation": optional(record({})), "inputs": optional(list_of(TEXT))}
"""What a ``backend: td`` checkpoint's ``state.json`` holds, beside ``snapshot_hands`` (:func:`checked_state`)."""


def checked_state(state: dict, checkpoint: Path, max_snapshots: int) -> dict:
    """The ``state.json`` of ``checkpoint`` when every field is what a run writes (its hands the step the folder
    is named for; at most ``max_snapshots`` snapshots, taken at increasing hands no later than it); else
    ``CheckpointError`` naming the file and the field. A state saved before the pool existed has none."""
    path = checkpoint / "state.json"
    state.setdefault("snapshot_hands", [])
    state.setdefault("inputs", None)  # saved before the learner's rows were named
    check_fields(state, {**STATE_FIELDS, "snapshot_hands": list_of(COUNT, max_length=max_snapshots)}, path)
    check_step(state["hands_played"], checkpoint, "hands_played")
    taken = state["snapshot_hands"]
    if any(later <= earlier for earlier, later in zip(taken, taken[1:])) or any(hands > state["hands_played"]
                                                                               for hands in taken):
        raise CheckpointError(f"cannot resume from {path}: 'snapshot_hands' must be increasing hands no later than "
                              f"'hands_played' ({state['hands_played']}), not {shown(taken)}")
    return state


def check_inputs(state: dict, checkpoint: Path, inputs) -> None:
    """Refuse, naming the file, a state whose ``inputs`` (the fields the learner's arrays have rows for, in order)
    are not ``inputs``, today's (``agents.batched.neural.input_fields``): the observation layout changed under the
    run, and its arrays would be read at other fields."""
    saved, today = state["inputs"], list(inputs)
    if saved is not None and saved != today:
        at = next((k for k, (a, b) in enumerate(zip(saved, today)) if a != b), min(len(saved), len(today)))
        raise CheckpointError(
            f"cannot resume from {checkpoint / 'state.json'}: its learner's arrays have rows for the fields in "
            f"'inputs', and today's network reads others (at input {at}: "
            f"{saved[at] if at < len(saved) else 'none'!r} there, {today[at] if at < len(today) else 'none'!r} "
            "today): the observation layout changed since the run was saved")


def read_learner_arrays(path: Path, run: TDRun, snapshots: int) -> dict[str, np.ndarray]:
    """The arrays of ``learner.npz``: every one ``run``'s network and optimiser have (Adam's moments may all be
    absent: a run saved before its first step) and the float weights of ``snapshots`` snapshots, each of its shape
    and type, finite; ``CheckpointError`` naming the file and the array otherwise."""
    try:
        data = read_file_bytes(path, max_bytes=MAX_LEARNER_BYTES, what="TD learner state")
    except FileRefused as error:
        raise CheckpointError(f"cannot resume: {error}") from None
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as saved:
            arrays = {name: saved[name] for name in saved.files}
    except Exception as error:  # a broken zip or array header: zipfile, ValueError, EOFError, ...
        raise CheckpointError(f"cannot resume: {path} is not a readable arrays file ({type(error).__name__}: "
                              f"{' '.join(str(error).split())[:200]})") from None
    expected = expected_arrays(run, snapshots)
    present = set(arrays)
    # Adam keeps moments only for the parameters it has stepped (r's wait for the first drawn decision's fit):
    # a parameter's step and moments are all there or none
    stepped = {name.split(".")[1] for name in present if name.startswith("optimizer.")}
    unstepped = {name for name in expected if name.startswith("optimizer.") and name.split(".")[1] not in stepped}
    if present != set(expected) - unstepped:
        missing, extra = sorted(set(expected) - present - unstepped), sorted(present - set(expected))
        raise CheckpointError(f"cannot resume from {path}: it must hold the arrays {sorted(expected)}"
                              f"{f'; {missing[0]!r} is missing' if missing else ''}"
                              f"{f'; {extra[0]!r} is not one' if extra else ''}")
    for name, array in arrays.items():
        shape, dtype = expected[name]
        if array.shape != shape or array.dtype != dtype:
            raise CheckpointError(f"cannot resume from {path}: {name!r} must be {dtype} {list(shape)}, not "
                                  f"{array.dtype} {list(array.shape)}")
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            raise CheckpointError(f"cannot resume from {path}: {name!r} holds NaN or infinite values")
        if name.endswith(".exp_avg_sq") and (array < 0).any():
            raise CheckpointError(f"cannot resume from {path}: {name!r} holds negative values (it is a mean of squares)")
    if not is_torch_generator(arrays["torch_generator"]):
        raise CheckpointError(f"cannot resume from {path}: 'torch_generator' is not a state of torch's generator")
    return arrays


def is_torch_generator(array: np.ndarray) -> bool:
    """Whether ``array`` is a state torch's CPU generator takes (tried on a generator of its own)."""
    import torch

    try:
        torch.Generator().set_state(torch.from_numpy(array.copy()))
    except RuntimeError:
        return False
    return True


def expected_arrays(run: TDRun, snapshots: int) -> dict[str, tuple[tuple, np.dtype]]:
    """Every array of ``learner.npz`` by name: its shape and type (those of ``run``'s network and of each of
    ``snapshots`` snapshots, Adam's moments of each parameter, torch's generator)."""
    import torch

    expected = {}
    for prefix in ["net", *(f"snapshot.{index}" for index in range(snapshots))]:
        expected.update({f"{prefix}.{name}": (tuple(value.shape), np.dtype(np.float32))
                         for name, value in run.net.state_dict().items()})
    parameters = [parameter for group in run.optimizer.param_groups for parameter in group["params"]]
    for index, parameter in enumerate(parameters):  # Adam numbers its state in its groups' order
        expected[f"optimizer.{index}.step"] = ((), np.dtype(np.float32))
        for moment in ("exp_avg", "exp_avg_sq"):
            expected[f"optimizer.{index}.{moment}"] = (tuple(parameter.shape), np.dtype(np.float32))
    generator = torch.get_rng_state()
    expected["torch_generator"] = (tuple(generator.shape), np.dtype(np.uint8))
    return expected
