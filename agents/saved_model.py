"""Saving and loading trained policies safely: tensors plus plain JSON, never pickled objects.

A model file holds the policy network's weights (the layout of :mod:`agents.network`) and a
JSON metadata record: format, observation size, network shape, and how it was made (rules,
config, seed, steps, library versions). Two containers, the same content:

- ``model.zip``: a zip archive with ``skipbo-model.json`` (the metadata, readable with
  ``unzip -p model.zip skipbo-model.json``) and ``policy.pt`` (the weights as a dict of tensors);
- ``model.pt``: one ``torch.save`` file of ``{"format", "metadata" (a JSON string), "state_dict"}``.

Loading uses ``torch.load(..., weights_only=True)``, which accepts tensors and plain containers
only, so a file from a stranger cannot run code. The network reads raw positions of the observation vector, so a
model is pinned to the observation layout it was trained on: its metadata's ``layout_version``
(``skipbo_env.encoding.LAYOUT_VERSION`` when it was written; a file that records only its ``obs_size`` is of the
layout of that size, ``LAYOUT_SIZES``). It loads on that layout, or on a later one of which its layout is a prefix
(``PREFIX_LAYOUTS``: it reads that prefix), and is refused in one line on any other. A file that is not a model, a
model of another layout, or a
Stable-Baselines3 archive (whose ``data`` entry is cloudpickled) is refused with
:class:`SavedModelError` saying why, and so is every damaged or hostile file: a path that is not a
regular file (a FIFO or a device is refused before it is opened; a number is not a path), a file or zip
member larger than :data:`MAX_MODEL_BYTES` (checked against the zip directory's declared sizes
before reading, and again while reading in bounded chunks), an encrypted member or one
compressed other than stored or deflated, corrupt bytes, deeply nested metadata, and weights
that are not dense float32 tensors under string names.
"""

from __future__ import annotations

import io
import json
import os
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np

from agents.network import ACTIVATIONS, NetworkPolicy, parameter_shapes
from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.encoding import LAYOUT_SIZES, LAYOUT_VERSION, OBS_SIZE, PREFIX_LAYOUTS
from skipbo_env.files import FileRefused, json_text, read_file_bytes, write_bytes_atomically

MODEL_FORMAT = "skipbo-model/1"
METADATA_ENTRY = "skipbo-model.json"
WEIGHTS_ENTRY = "policy.pt"
MAX_MODEL_BYTES = 256 * 2**20
"""The largest model file, and the largest weights member of a model zip, that is read."""
MAX_METADATA_BYTES = 4 * 2**20
"""The largest metadata member of a model zip that is read."""
ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
READ_CHUNK = 2**20
DAMAGED_ZIP = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError,
               struct.error, OverflowError)
"""What :mod:`zipfile` raises for damaged or unsupported archives."""


class SavedModelError(ValueError):
    """A file that cannot be loaded as a skipbo model; the message says why."""


def save_model(path: str | Path, state_dict: dict, metadata: dict) -> Path:
    """Write a model file (``.zip`` or ``.pt``, by the suffix) atomically; returns the path.

    ``state_dict`` maps the :func:`agents.network.parameter_shapes` names to tensors or arrays;
    ``metadata`` must give ``obs_size``, ``hidden`` and ``activation`` and may add anything
    JSON-serialisable (rules, config, seed, versions).
    """
    path = Path(path)
    write_bytes_atomically(path, encode_model(state_dict, metadata, path.suffix, str(path)))
    return path


def encode_model(state_dict: dict, metadata: dict, suffix: str = ".zip", name: str = "model") -> bytes:
    """The bytes of a model file in the ``.zip`` or ``.pt`` container (see :func:`save_model`)."""
    import torch

    metadata = {"format": MODEL_FORMAT, "num_actions": NUM_ACTIONS, **metadata}
    if "layout_version" not in metadata and metadata.get("obs_size") in SIZE_LAYOUTS:
        metadata["layout_version"] = SIZE_LAYOUTS[metadata["obs_size"]]
    tensors = {key: torch.as_tensor(np.asarray(value, dtype=np.float32)).clone()
               for key, value in state_dict.items()}
    _check_weights(tensors, metadata, name)
    buffer = io.BytesIO()
    if suffix == ".zip":
        weights = io.BytesIO()
        torch.save(tensors, weights)
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(METADATA_ENTRY, json_text(metadata, indent=2, sort_keys=True))
            archive.writestr(WEIGHTS_ENTRY, weights.getvalue())
    elif suffix == ".pt":
        torch.save({"format": MODEL_FORMAT, "metadata": json_text(metadata, sort_keys=True),
                    "state_dict": tensors}, buffer)
    else:
        raise SavedModelError(f"cannot save a model as {name!r}: use a .zip or .pt file name")
    return buffer.getvalue()


def load_saved_policy(path: str | Path, deterministic: bool = True, seed: int | None = None) -> NetworkPolicy:
    """The policy stored in a model file, ready to ``act(observation)``; refuses anything else."""
    tensors, metadata = read_model(path)
    weights = {name: tensor.detach().numpy() for name, tensor in tensors.items()}
    policy = NetworkPolicy(weights, metadata["hidden"], metadata["activation"],
                           deterministic=deterministic, seed=seed, metadata=metadata)
    policy.source = f"the model {path}"
    return policy


def read_model(path: str | Path) -> tuple[dict, dict]:
    """``(tensors, metadata)`` of a model file, checked against the current observation size."""
    data = read_model_bytes(path)
    name = str(path)
    if not is_zip(data):
        raise SavedModelError(f"{name} is not a skipbo model file: it is neither a model .zip nor a torch tensor file")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = set(archive.namelist())
            if METADATA_ENTRY in entries:
                metadata = _parse_metadata(read_zip_member(archive, METADATA_ENTRY, MAX_METADATA_BYTES, name), name)
                weights = read_zip_member(archive, WEIGHTS_ENTRY, MAX_MODEL_BYTES, name) if WEIGHTS_ENTRY in entries else None
                return _checked(load_tensor_bytes(weights, name), metadata, name)
    except SavedModelError:
        raise
    except DAMAGED_ZIP as error:
        raise SavedModelError(f"{name} is a damaged zip archive ({type(error).__name__}: {error})") from None
    if {"data", "policy.pth"} <= entries:
        raise SavedModelError(
            f"{name} is a Stable-Baselines3 archive, whose 'data' entry holds pickled objects; "
            "it is not loaded. Use the model.zip that `skipbo train` exports into the run folder, or convert "
            f"it (tensors and plain JSON only) with: skipbo import-sb3 {name} OUT.zip"
        )
    payload = load_tensor_bytes(data, name)
    if not isinstance(payload, dict) or not isinstance(payload.get("format"), str) \
            or payload["format"] != MODEL_FORMAT:
        raise SavedModelError(f"{name} is not a skipbo model file (no {MODEL_FORMAT!r} record in it)")
    metadata = _parse_metadata(payload.get("metadata", ""), name)
    return _checked(payload.get("state_dict"), metadata, name)


def read_model_bytes(path) -> bytes:
    """The bytes of a model file: a path (never a file descriptor) to a regular file (never a FIFO or a
    device) of at most :data:`MAX_MODEL_BYTES` (never read past it); ``SavedModelError`` otherwise."""
    if isinstance(path, int) and not isinstance(path, bool):
        raise SavedModelError(f"no model file at {path!r}: give a path (a number is not a file)")
    if not isinstance(path, (str, os.PathLike)) or not os.path.exists(path):
        raise SavedModelError(f"no model file at {str(path)!r}")
    try:
        return read_file_bytes(path, max_bytes=MAX_MODEL_BYTES, what="model file")
    except FileRefused as error:
        raise SavedModelError(str(error)) from None


def read_zip_member(archive: zipfile.ZipFile, entry: str, limit: int, name: str) -> bytes:
    """One member of a model zip, checked before reading (encryption, method, declared size) and
    read in chunks that stop at ``limit`` whatever the header says."""
    info = archive.getinfo(entry)
    where = f"{name}: zip member {entry}"
    if info.flag_bits & 0x1:
        raise SavedModelError(f"{where} is encrypted; a model zip holds plain members")
    if info.compress_type not in ZIP_METHODS:
        raise SavedModelError(f"{where} uses compression method {info.compress_type}; a model zip uses "
                              f"{zipfile.ZIP_STORED} (stored) or {zipfile.ZIP_DEFLATED} (deflated)")
    if info.file_size > limit:
        raise SavedModelError(f"{where} declares {info.file_size:,} bytes, more than the {limit:,} it may hold")
    chunks, total = [], 0
    with archive.open(info) as stream:
        while chunk := stream.read(READ_CHUNK):
            total += len(chunk)
            if total > limit:
                raise SavedModelError(f"{where} holds more than the {limit:,} bytes it may hold")
            chunks.append(chunk)
    return b"".join(chunks)


def is_zip(data: bytes) -> bool:
    return data[:4] == b"PK\x03\x04" and zipfile.is_zipfile(io.BytesIO(data))


def load_tensor_bytes(data: bytes | None, name: str):
    import pickle
    import warnings

    import torch

    if data is None:
        raise SavedModelError(f"{name} is not a skipbo model file: it has no {WEIGHTS_ENTRY} entry")
    try:
        with warnings.catch_warnings():  # torch warns about a plain pickle's protocol before refusing it
            warnings.filterwarnings("ignore", message="Detected pickle protocol", category=UserWarning)
            return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        reason = next((line for line in lines if "unsupported" in line.lower()), "objects other than tensors")
        raise SavedModelError(
            f"refused to load {name}: it is not a file of plain tensors, and loading it would run "
            f"pickled Python code ({reason})"
        ) from None
    except Exception as error:  # torch raises RuntimeError, EOFError, ... for bytes that are not a torch file
        raise SavedModelError(f"{name} is not a skipbo model file ({type(error).__name__}: {error})") from None


def _parse_metadata(raw: bytes | str, name: str) -> dict:
    try:
        metadata = json.loads(raw)
    except (ValueError, TypeError, RecursionError):
        raise SavedModelError(f"{name} is not a skipbo model file: its metadata is not JSON") from None
    if not isinstance(metadata, dict) or metadata.get("format") != MODEL_FORMAT:
        raise SavedModelError(f"{name} is not a skipbo model file: metadata format is not {MODEL_FORMAT!r}")
    return metadata


def _checked(tensors, metadata: dict, name: str) -> tuple[dict, dict]:
    hidden, activation, obs_size = metadata.get("hidden"), metadata.get("activation"), metadata.get("obs_size")
    if not isinstance(hidden, list) or not hidden or \
            not all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in hidden):
        raise SavedModelError(f"{name}: metadata 'hidden' must be a list of layer sizes, not {hidden!r}")
    if activation not in ACTIVATIONS:
        raise SavedModelError(f"{name}: metadata 'activation' must be one of {ACTIVATIONS}, not {activation!r}")
    check_layout(metadata.get("layout_version", SIZE_LAYOUTS.get(obs_size)), obs_size, name)
    if metadata.get("num_actions") != NUM_ACTIONS:
        raise SavedModelError(f"{name}: the model has {metadata.get('num_actions')!r} actions, not {NUM_ACTIONS}")
    _check_weights(tensors, metadata, name)
    return tensors, metadata


SIZE_LAYOUTS = {size: version for version, size in LAYOUT_SIZES.items()}
"""The layout version of each vector size (a model file written before ``layout_version`` was recorded)."""


def check_layout(version, obs_size, name: str) -> None:
    """Refuse, in one line naming ``name``, the model's layout ``version`` and today's, a model of ``obs_size`` inputs
    trained on another layout than today's (:data:`skipbo_env.encoding.LAYOUT_VERSION`) or a prefix of it
    (``PREFIX_LAYOUTS``), or whose size is not its layout's."""
    readable = (LAYOUT_VERSION, *PREFIX_LAYOUTS)
    if version is None or isinstance(version, bool) or version not in readable:
        trained = (f"observation layout {version!r}" if version is not None
                   else f"observations of size {obs_size!r}, of no layout of this project")
        raise SavedModelError(
            f"{name} was trained on {trained}, but this version of skipbo_env encodes layout {LAYOUT_VERSION} "
            f"(observations of size {OBS_SIZE}) and reads models of layouts "
            f"{', '.join(f'{v} ({LAYOUT_SIZES[v]} values)' for v in sorted(readable))}: a network of raw positions "
            f"does not fit another layout; retrain it")
    if obs_size != LAYOUT_SIZES[version]:
        raise SavedModelError(f"{name}: the model reads {obs_size!r} inputs, but observation layout {version} has "
                              f"{LAYOUT_SIZES[version]}")


def _check_weights(tensors, metadata: dict, name: str) -> None:
    import torch

    if not isinstance(tensors, dict):
        raise SavedModelError(f"{name}: the weights are not a mapping of tensors")
    if not all(isinstance(key, str) for key in tensors):
        found = sorted({type(key).__name__ for key in tensors})
        raise SavedModelError(f"{name}: the weights must be named by strings, not by {', '.join(found)}")
    expected = parameter_shapes(metadata["obs_size"], metadata["hidden"])
    if set(tensors) != set(expected):
        missing, extra = sorted(set(expected) - set(tensors)), sorted(set(tensors) - set(expected))
        raise SavedModelError(f"{name}: the weights do not match the network (missing {missing}, unexpected {extra})")
    for key, shape in expected.items():
        tensor = tensors[key]
        if not isinstance(tensor, torch.Tensor) or tuple(tensor.shape) != shape:
            found = tuple(tensor.shape) if isinstance(tensor, torch.Tensor) else type(tensor).__name__
            raise SavedModelError(f"{name}: tensor {key} has shape {found}, expected {shape}")
        if tensor.layout is not torch.strided or tensor.dtype is not torch.float32:
            raise SavedModelError(f"{name}: tensor {key} is a {tensor.layout} {tensor.dtype} tensor; "
                                  "a skipbo model holds dense torch.float32 tensors")
        if not torch.isfinite(tensor).all():
            raise SavedModelError(f"{name}: tensor {key} holds NaN or infinite values")
