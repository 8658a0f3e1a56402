"""The data file of one ``backend: neural`` generation: ``data/gen-NNNN.npz`` in the run folder, the arrays of a
:class:`training.neural.value_games.ListData` (the teacher's lists of stops and discards, the decisions' positions
and the hands' results), written deflated (:func:`npz_bytes`) and read back without pickles, every array checked
against the others (:func:`read_data_file`). A run keeps the files of the last ``neural.window`` generations.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import numpy as np

from training.neural.value_games import ListData
from training.state_checks import CheckpointError, Field, read_npz
from agents.batched.neural_teacher import MAX_DISCARDS

DATA_DIR = "data"
"""The folder of the data files in the run folder."""
DATA_FILE = Field("a data file name gen-NNNN.npz",
                  lambda value: isinstance(value, str) and re.fullmatch(r"gen-\d{4,}\.npz", value) is not None)
"""A data file's name, as ``state.json`` lists it."""


def data_file_name(generation: int) -> str:
    """The data file of ``generation``."""
    return f"gen-{generation:04d}.npz"


def npz_bytes(arrays: dict) -> bytes:
    """``arrays`` as an ``.npz`` file (what ``numpy.load`` reads), deflated at level 3: about a third of the
    time of ``numpy.savez_compressed``'s level 6, and a third larger (the rows of a list differ in a few
    inputs: it shrinks them some twentyfold)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=3) as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


ROOT_ARRAYS = {"root_inputs": lambda width: np.zeros((0, width), dtype=np.int16),
               "root_results": lambda width: np.zeros(0, dtype=np.float32)}
"""The decisions' positions, absent from the data files of runs before ``neural.outcome_weight``: read as none."""


DTYPES = {"stop_inputs": "int16", "stop_values": "float32", "stop_lengths": "int16", "discard_inputs": "int16",
          "discard_lengths": "int16", "discard_chosen": "int16", "root_inputs": "int16", "root_results": "float32",
          "seat0_results": "float32"}
"""The dtype of each array of a data file, as :func:`training.neural.value_games._list_data` makes them."""
MAX_DECISIONS_A_HAND = 1000
"""The most recorded decisions one hand's data may declare (a hand records a few dozen; a data file declaring more
is damaged): with the lists' sizes it caps what a data file may hold before any of it is read."""


def max_data_bytes(hands: int, list_size: int, width: int) -> int:
    """The most bytes the arrays of a data file of ``hands`` hands may declare: each recorded decision a stop list
    of at most ``list_size`` rows, a discard list of at most ``MAX_DISCARDS``, its position and their counts; also
    the cap of the file's size (its arrays are deflated, never larger)."""
    decision = (list_size + MAX_DISCARDS + 1) * width * 2 + list_size * 4 + 3 * 2 + 4
    return hands * (MAX_DECISIONS_A_HAND * decision + 4) + 2**20


def read_data_file(path: Path, width: int, hands: int, list_size: int) -> ListData:
    """A generation's data file (the arrays of :class:`training.neural.value_games.ListData`, ``width`` inputs a row,
    of at most ``hands`` hands and lists of at most ``list_size`` stops), read without pickles through
    :func:`training.state_checks.read_npz` (its size and every array's declared dtype and shape checked before the
    arrays are read), every array then checked against the others and every input and result for its range."""
    cap = max_data_bytes(hands, list_size, width)
    arrays = read_npz(path, max_bytes=cap, dtypes=DTYPES, max_array_bytes=cap, optional_arrays=tuple(ROOT_ARRAYS),
                      shapes_problem=lambda shapes: shapes_problem(shapes, width))
    for name, empty in ROOT_ARRAYS.items():
        arrays.setdefault(name, empty(width))
    problem = list_data_problem(arrays, width, list_size)
    if problem:
        raise CheckpointError(f"cannot resume from {path}: {problem}")
    return ListData(**arrays)


def shapes_problem(shapes: dict, width: int) -> str | None:
    """What is wrong with a data file's declared shapes (before its arrays are read), ``None`` when nothing is."""
    rows = {name: shape for name, shape in shapes.items() if name.endswith("_inputs")}
    for name, shape in rows.items():
        if len(shape) != 2 or shape[1] != width:
            return f"array {name!r} has shape {list(shape)}, it must be [rows, {width}] (the inputs of a position)"
    for name, shape in shapes.items():
        if name not in rows and len(shape) != 1:
            return f"array {name!r} has shape {list(shape)}, it must be a list (one dimension)"
    pairs = (("stop_values", "stop_inputs"), ("discard_chosen", "discard_lengths"), ("root_results", "root_inputs"))
    for name, other in pairs:
        if name in shapes and shapes[name][0] != shapes[other][0]:
            return f"array {name!r} has {shapes[name][0]} entries, {other!r} {shapes[other][0]}: one each"
    for lengths, inputs in (("stop_lengths", "stop_inputs"), ("discard_lengths", "discard_inputs")):
        if shapes[lengths][0] > shapes[inputs][0]:
            return f"array {lengths!r} lists {shapes[lengths][0]} lists, more than the {shapes[inputs][0]} rows"
    return None


def list_data_problem(arrays: dict, width: int, list_size: int) -> str | None:
    """What is wrong with a data file's arrays, ``None`` when nothing is (each problem names its array)."""
    stops, discards = arrays["stop_lengths"].astype(np.int64), arrays["discard_lengths"].astype(np.int64)
    for name, lengths, most in (("stop_lengths", stops, list_size), ("discard_lengths", discards, MAX_DISCARDS)):
        if ((lengths < 1) | (lengths > most)).any():
            return f"array {name!r} holds a list length outside 1 to {most}"
    if arrays["stop_inputs"].shape != (stops.sum(), width) or arrays["discard_inputs"].shape != (discards.sum(), width):
        return "the rows of 'stop_inputs' or 'discard_inputs' do not add up to the lists' lengths"
    for name in ("stop_inputs", "discard_inputs", "root_inputs"):
        if (arrays[name] < 0).any():
            return f"array {name!r} holds a negative input (a position's inputs are counts, >= 0)"
    chosen = arrays["discard_chosen"].astype(np.int64)
    if (chosen < 0).any() or (chosen >= discards).any():
        return "array 'discard_chosen' holds a choice that is not one of its list's rows"
    for name in ("seat0_results", "root_results"):
        if not np.isin(arrays[name], (0.0, 0.5, 1.0)).all():
            return f"array {name!r} holds a result other than 0, 0.5 or 1"
    return None
