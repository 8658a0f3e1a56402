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
from training.state_checks import CheckpointError, Field

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


def read_data_file(path: Path, width: int) -> ListData:
    """A generation's data file (the arrays of :class:`training.neural.value_games.ListData`, ``width`` inputs a row),
    read without pickles, every array checked against the others."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in ListData.__dataclass_fields__
                      if name in data.files or name not in ROOT_ARRAYS}
        for name, empty in ROOT_ARRAYS.items():
            arrays.setdefault(name, empty(width))
    except Exception as error:  # numpy raises ValueError, OSError, KeyError, zipfile errors for a broken file
        raise CheckpointError(f"cannot resume: {path} is not a readable data file ({type(error).__name__}: "
                              f"{error})") from None
    problem = list_data_problem(arrays, width)
    if problem:
        raise CheckpointError(f"cannot resume: {path} holds damaged data ({problem})")
    return ListData(**arrays)


def list_data_problem(arrays: dict, width: int) -> str | None:
    """What is wrong with a data file's arrays, ``None`` when nothing is."""
    stops, discards = arrays["stop_lengths"].astype(np.int64), arrays["discard_lengths"].astype(np.int64)
    if arrays["stop_inputs"].shape != (stops.sum(), width) or arrays["discard_inputs"].shape != (discards.sum(), width):
        return f"the rows are not {width} inputs wide or do not add up to the lists' lengths"
    if arrays["stop_values"].shape != (len(arrays["stop_inputs"]),) or not np.isfinite(arrays["stop_values"]).all():
        return "the teacher's values are missing or not finite"
    if (stops < 1).any() or (discards < 1).any():
        return "a list is empty"
    chosen = arrays["discard_chosen"].astype(np.int64)
    if chosen.shape != discards.shape or (chosen < 0).any() or (chosen >= discards).any():
        return "a discard list's choice is not one of its rows"
    if arrays["root_inputs"].shape != (len(arrays["root_results"]), width):
        return f"the decisions' positions are not {width} inputs wide or not one per result"
    for name in ("seat0_results", "root_results"):
        results = arrays[name]
        if not np.isfinite(results).all() or ((results < 0) | (results > 1)).any():
            return "the hands' results must be 0, 0.5 or 1"
    return None
