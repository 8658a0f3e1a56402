"""Checks of the values a training run reads back on ``skipbo train --resume``, as a saved position is checked.

Every backend describes the fields of its ``state.json`` with the :class:`Field` values below and reads
the file with :func:`read_state`; a value of the wrong type, out of range, NaN or infinite stops the run
with one :class:`~training.checkpoint.CheckpointError` line naming the file and the field::

    from training.state_checks import COUNT, SECONDS, finite_numbers, generator_state, read_state

    FIELDS = {"generation": COUNT, "wall_seconds": SECONDS, "mu": finite_numbers(length=19),
              "rng": generator_state()}
    state = read_state(checkpoint / "state.json", FIELDS)   # the whole JSON object, every field checked

The API:

- :class:`Field` ``(describe, accepts)``: what one value must be, in words (``"an integer >= 0"``) and as
  a test. The ready-made fields: :data:`COUNT` (an integer >= 0), :data:`SECONDS` (a finite number >= 0),
  :data:`NUMBER` (a finite number), :data:`PROBABILITY` (a finite number from 0 to 1), :data:`TEXT`,
  :data:`MAPPING` (any JSON object), :data:`LIST` (any JSON list).
- Builders: :func:`finite_numbers` (a list of finite numbers, of a given length, each within bounds),
  :func:`list_of` (a list whose every item is a field), :func:`mapping_of` (an object whose every value
  is a field), :func:`record` (an object with these fields,
  others allowed), :func:`optional` (``null`` or the field), :func:`one_of` (one of some values),
  :func:`generator_state` (a ``numpy`` PCG64 state, as ``Generator.bit_generator.state`` gives it).
- :func:`check_fields` ``(state, fields, path)``: check a dict already read; :func:`read_state`
  ``(path, fields)``: read a JSON object (:func:`training.checkpoint.read_json_object`) and check it.
- :func:`check_finite_tensors` ``(tree, path)``: every floating-point tensor in a nested container (a
  ``state_dict``, an optimizer's state) is finite; an integer/bool tensor or a plain number passes.
- :func:`read_json_object` ``(path)``: the JSON object of a state file, read as every named file is
  (:func:`skipbo_env.files.read_file_bytes`: a regular file, at most :data:`MAX_STATE_BYTES`).
- :func:`read_npz` ``(path, max_bytes=, dtypes=, max_array_bytes=, shapes_problem=)``: the arrays of an ``.npz``
  file read the same way, each array's ``.npy`` header (name, dtype, declared shape) checked before any array is
  read into memory, never with pickles, every float finite.

A refusal reads ``cannot resume from PATH: 'FIELD' must be WHAT, not VALUE`` (the value shortened), or
``... 'FIELD' must be WHAT, but it is missing``. Every backend (SB3 PPO, RLlib, sNES, and any new one) checks its state
with these helpers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from skipbo_env.files import FileRefused, read_file_bytes

SHOWN = 60
"""Characters of a refused value shown in the message."""
MAX_STATE_BYTES = 64 * 2**20
"""The largest state file read (a long run's evaluation history is a few megabytes)."""


class CheckpointError(ValueError):
    """A run folder or checkpoint that cannot be resumed; the message names the file and what is wrong."""


def read_json_object(path: str | Path, max_bytes: int = MAX_STATE_BYTES) -> dict:
    """The JSON object in ``path``; :class:`CheckpointError` naming the file when it is not a regular file
    within ``max_bytes``, not JSON, nested too deeply, or holds anything but an object."""
    try:
        data = json.loads(read_file_bytes(path, max_bytes=max_bytes, what="state file").decode("utf-8"))
    except FileRefused as error:
        raise CheckpointError(f"cannot resume: {error}") from None
    except RecursionError:
        raise CheckpointError(f"{path} is not valid JSON (it is nested too deeply)") from None
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise CheckpointError(f"{path} is not valid JSON ({type(error).__name__}: {error})") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path} must hold a JSON object, not {type(data).__name__}")
    return data


@dataclass(frozen=True)
class Field:
    """What one value of a state file must be: ``describe`` in words, ``accepts(value)`` as a test."""

    describe: str
    accepts: Callable[[Any], bool]


def is_integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value) -> bool:
    """An int or float that is finite (JSON's ``NaN`` and ``Infinity`` are not numbers here)."""
    return (is_integer(value) or isinstance(value, float)) and math.isfinite(value)


MAX_COUNT = 2**63 - 1
"""The largest counter read back (a step, a game or a generation count: numpy's and TensorBoard's int64)."""
MAX_SECONDS = 1e12
"""The largest clock read back (some 30,000 years)."""
COUNT = Field("an integer >= 0 (below 2**63)", lambda value: is_integer(value) and 0 <= value <= MAX_COUNT)
SECONDS = Field(f"a finite number of seconds >= 0 (at most {MAX_SECONDS:g})",
                lambda value: is_number(value) and 0 <= value <= MAX_SECONDS)
NUMBER = Field("a finite number", is_number)
PROBABILITY = Field("a finite number from 0 to 1", lambda value: is_number(value) and 0 <= value <= 1)
TEXT = Field("a string", lambda value: isinstance(value, str))
MAPPING = Field("a JSON object", lambda value: isinstance(value, dict))
LIST = Field("a list", lambda value: isinstance(value, list))


def finite_numbers(length: int | None = None, minimum: float | None = None, maximum: float | None = None) -> Field:
    """A list of finite numbers, of ``length`` items when given, each from ``minimum`` to ``maximum``."""
    words = "a list of " + (f"{length} " if length is not None else "") + "finite numbers"
    if minimum is not None and maximum is not None:
        words += f" from {minimum:g} to {maximum:g}"
    elif minimum is not None or maximum is not None:
        words += f" >= {minimum:g}" if minimum is not None else f" <= {maximum:g}"

    def accepts(value) -> bool:
        return (isinstance(value, list) and (length is None or len(value) == length)
                and all(is_number(item) and (minimum is None or item >= minimum)
                        and (maximum is None or item <= maximum) for item in value))

    return Field(words, accepts)


def list_of(item: Field, min_length: int = 0, max_length: int | None = None) -> Field:
    """A list of ``min_length`` to ``max_length`` items, each accepted by ``item``."""
    size = f" of at least {min_length}" if min_length else ""
    if max_length is not None:
        size = f" of {min_length} to {max_length}"
    return Field(f"a list{size} of {item.describe}",
                 lambda value: isinstance(value, list) and len(value) >= min_length
                 and (max_length is None or len(value) <= max_length) and all(item.accepts(v) for v in value))


def record(fields: dict[str, Field]) -> Field:
    """A JSON object holding at least ``fields`` (others are allowed and not checked)."""
    words = "an object {" + ", ".join(f"{key!r}: {field.describe}" for key, field in fields.items()) + "}"
    return Field(words, lambda value: isinstance(value, dict)
                 and all(key in value and field.accepts(value[key]) for key, field in fields.items()))


def mapping_of(value: Field) -> Field:
    """A JSON object whose every value is accepted by ``value`` (the keys are strings, as in all JSON)."""
    return Field(f"an object whose values are each {value.describe}",
                 lambda data: isinstance(data, dict) and all(value.accepts(v) for v in data.values()))


def optional(field: Field) -> Field:
    """``null`` or ``field``."""
    return Field(f"null or {field.describe}", lambda value: value is None or field.accepts(value))


def one_of(*values) -> Field:
    """Exactly one of ``values`` (compared with ``==`` and by type, so ``True`` is not ``1``)."""
    return Field("one of " + ", ".join(map(repr, values)),
                 lambda value: any(type(value) is type(allowed) and value == allowed for allowed in values))


def generator_state(bit_generator: str = "PCG64") -> Field:
    """A numpy generator's ``bit_generator.state`` (``np.random.default_rng`` makes PCG64), checked value by
    value and then by setting it on a fresh generator."""
    words = (f"a {bit_generator} generator state {{'bit_generator': {bit_generator!r}, 'state': {{'state': int, "
             "'inc': int}}, 'has_uint32': 0 or 1, 'uinteger': int}")

    def accepts(value) -> bool:
        import numpy as np

        if not (isinstance(value, dict) and value.get("bit_generator") == bit_generator
                and isinstance(value.get("state"), dict) and set(value["state"]) == {"state", "inc"}
                and all(is_integer(v) and 0 <= v < 2**128 for v in value["state"].values())
                and value.get("has_uint32") in (0, 1) and is_integer(value.get("has_uint32"))
                and is_integer(value.get("uinteger")) and 0 <= value["uinteger"] < 2**32):
            return False
        try:
            getattr(np.random, bit_generator)().state = value
        except (TypeError, ValueError, KeyError, OverflowError):
            return False
        return True

    return Field(words, accepts)


def shown(value) -> str:
    """``repr(value)``, at most :data:`SHOWN` characters."""
    text = repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def check_fields(state: dict, fields: dict[str, Field], path: str | Path) -> dict:
    """``state`` when every field of ``fields`` is present and accepted; else :class:`CheckpointError` naming
    ``path`` and the first field that is not."""
    for key, field in fields.items():
        if key not in state:
            raise CheckpointError(f"cannot resume from {path}: {key!r} must be {field.describe}, but it is missing")
        if not field.accepts(state[key]):
            raise CheckpointError(f"cannot resume from {path}: {key!r} must be {field.describe}, "
                                  f"not {shown(state[key])}")
    return state


def read_state(path: str | Path, fields: dict[str, Field]) -> dict:
    """The JSON object in ``path`` (a state file), every field of ``fields`` checked (:func:`check_fields`)."""
    return check_fields(read_json_object(Path(path)), fields, path)


def check_finite_tensors(tree, path: str | Path, where: str = "") -> None:
    """Refuse (:class:`CheckpointError` naming ``path`` and the entry) a NaN or infinite value in any
    floating-point tensor or float of a nested container (dicts, lists, tuples) read from a tensor file."""
    import torch

    if isinstance(tree, dict):
        for key, value in tree.items():
            check_finite_tensors(value, path, f"{where}/{key}" if where else str(key))
    elif isinstance(tree, (list, tuple)):
        for index, value in enumerate(tree):
            check_finite_tensors(value, path, f"{where}/{index}" if where else str(index))
    elif isinstance(tree, torch.Tensor):
        if (tree.is_floating_point() or tree.is_complex()) and not bool(torch.isfinite(tree).all()):
            raise CheckpointError(f"cannot resume from {path}: tensor {where[:80]!r} holds NaN "
                                  "or infinite values")
    elif isinstance(tree, float) and not math.isfinite(tree):
        raise CheckpointError(f"cannot resume from {path}: {where[:80]!r} is {tree}")


NPZ_HEADER_READERS = {(1, 0): "read_array_header_1_0", (2, 0): "read_array_header_2_0"}
"""The ``.npy`` header versions a checkpoint's ``.npz`` members are read with (numpy writes 1.0, or 2.0 for a
header past 64 KiB)."""


def read_npz(path: str | Path, *, max_bytes: int, dtypes: dict[str, str], max_array_bytes: int,
             optional_arrays: tuple[str, ...] = (),
             shapes_problem: Callable[[dict[str, tuple]], str | None] | None = None) -> dict:
    """The arrays of the ``.npz`` file ``path`` (a checkpoint's weights or a data file), read as every named file
    is (a regular file of at most ``max_bytes``) and never with pickles. Before any array is read into memory its
    ``.npy`` header is read and refused (:class:`CheckpointError` naming the file and the array) unless: it is one of
    ``dtypes`` (all present but ``optional_arrays``) and of that dtype, all together declare at most
    ``max_array_bytes``, and ``shapes_problem`` (given every array's declared shape) finds nothing wrong. A
    floating-point array holding NaN or an infinity is refused too."""
    import io
    import zipfile

    import numpy as np

    try:
        data = read_file_bytes(path, max_bytes=max_bytes, what=f"{Path(path).name} file")
    except FileRefused as error:
        raise CheckpointError(f"cannot resume: {error}") from None

    def refuse(problem: str) -> CheckpointError:
        return CheckpointError(f"cannot resume from {path}: {problem}")

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        headers = {}
        for member in archive.namelist():
            name = member.removesuffix(".npy")
            if name not in dtypes or name in headers:
                raise refuse(f"it holds {member!r}: an array of its kind is one of {', '.join(dtypes)}, each once")
            with archive.open(member) as stream:
                version = np.lib.format.read_magic(stream)
                if version not in NPZ_HEADER_READERS:
                    raise refuse(f"array {name!r} has .npy format {version}, not one numpy writes (1.0 or 2.0)")
                shape, _, dtype = getattr(np.lib.format, NPZ_HEADER_READERS[version])(stream)
            if dtype != np.dtype(dtypes[name]):
                raise refuse(f"array {name!r} is {dtype}, it must be {np.dtype(dtypes[name])}")
            headers[name] = (shape, dtype)
    except CheckpointError:
        raise
    except Exception as error:  # zipfile and numpy raise BadZipFile, ValueError, EOFError, ... for a broken file
        raise refuse(f"it is not a readable .npz file ({type(error).__name__}: {' '.join(str(error).split())[:200]})"
                     ) from None
    missing = [name for name in dtypes if name not in headers and name not in optional_arrays]
    if missing:
        raise refuse(f"array {missing[0]!r} is missing")
    declared = {name: math.prod(shape) * dtype.itemsize for name, (shape, dtype) in headers.items()}
    if sum(declared.values()) > max_array_bytes:
        largest = max(declared, key=declared.get)
        raise refuse(f"its arrays declare {sum(declared.values()):,} bytes ({largest!r} has shape "
                     f"{list(headers[largest][0])}), more than the {max_array_bytes:,} the run's config allows")
    problem = shapes_problem({name: shape for name, (shape, _) in headers.items()}) if shapes_problem else None
    if problem:
        raise refuse(problem)
    arrays = {}
    try:
        for name in headers:
            with archive.open(f"{name}.npy") as stream:
                arrays[name] = np.lib.format.read_array(stream, allow_pickle=False)
    except Exception as error:
        raise refuse(f"array {name!r} cannot be read ({type(error).__name__}: {' '.join(str(error).split())[:200]})"
                     ) from None
    for name, array in arrays.items():
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            raise refuse(f"array {name!r} holds NaN or infinite values")
    return arrays
