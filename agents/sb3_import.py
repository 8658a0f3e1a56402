"""A MaskablePPO archive trained on this project's observation, turned into a safe model file.

A Stable-Baselines3 ``.zip`` holds ``policy.pth`` (the network's tensors) and ``data``, a JSON
record in which every object that is not plain JSON is cloudpickled under ``":serialized:"``.
:func:`read_sb3_policy` reads only the tensors (``torch.load(..., weights_only=True)``) and, of
``data``, only plain JSON values and the readable text SB3 writes beside each pickled object
(``policy_kwargs["activation_fn"]``, ``observation_space["_shape"]``): nothing is unpickled, so a
hostile archive cannot run code here.

Accepted: an ``MlpPolicy`` (``MaskableActorCriticPolicy`` or ``ActorCriticPolicy``) with a
flattening features extractor (no weights of its own), ReLU or Tanh activations (Tanh is SB3's
default), over the flat observation vector and the 145 ids. An archive records no layout: its input width names
it (``agents.saved_model.SIZE_LAYOUTS``), and the model file written records that ``layout_version``.
Its actor, ``mlp_extractor.policy_net.*`` and ``action_net.*``, becomes ``policy_net.*`` and
``action_net.*`` of :mod:`agents.network`; the critic is dropped. Anything else (a CNN or a dict
observation, other activations, shared layers in ``net_arch``) is refused with why.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

from agents.saved_model import (DAMAGED_ZIP, MAX_MODEL_BYTES, SIZE_LAYOUTS, SavedModelError, check_layout, is_zip,
                                load_tensor_bytes, read_model_bytes, read_zip_member)
from skipbo_env.actions import NUM_ACTIONS

SB3_WEIGHTS = "policy.pth"
SB3_DATA = "data"
SB3_VERSION = "_stable_baselines3_version"
MAX_DATA_BYTES = 16 * 2**20
"""The largest ``data`` member read (it holds the spaces as text: tens of kilobytes)."""
POLICY_MODULES = ("sb3_contrib.common.maskable.policies", "stable_baselines3.common.policies")
ACTIVATION_CLASSES = {"torch.nn.modules.activation.ReLU": "relu", "torch.nn.modules.activation.Tanh": "tanh"}
ACTOR_LAYER = re.compile(r"mlp_extractor\.policy_net\.(\d+)\.(weight|bias)")
CRITIC = re.compile(r"(mlp_extractor\.value_net\.\d+|value_net)\.(weight|bias)")


def read_sb3_policy(path: str | Path) -> tuple[dict, dict]:
    """``(state_dict, metadata)`` for :func:`agents.saved_model.save_model`, from an SB3 archive."""
    name = str(path)
    data = read_model_bytes(path)
    if not is_zip(data):
        raise SavedModelError(f"{name} is not a Stable-Baselines3 archive (not a zip file)")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = set(archive.namelist())
            if not {SB3_WEIGHTS, SB3_DATA} <= entries:
                raise SavedModelError(f"{name} is not a Stable-Baselines3 archive: it lacks {SB3_WEIGHTS} or {SB3_DATA}")
            record = _plain_json(read_zip_member(archive, SB3_DATA, MAX_DATA_BYTES, name), name)
            tensors = load_tensor_bytes(read_zip_member(archive, SB3_WEIGHTS, MAX_MODEL_BYTES, name), name)
            version = read_zip_member(archive, SB3_VERSION, 64, name).decode("ascii", "replace").strip() \
                if SB3_VERSION in entries else None
    except DAMAGED_ZIP as error:
        raise SavedModelError(f"{name} is a damaged zip archive ({type(error).__name__}: {error})") from None
    activation = _activation(record, name)
    state_dict, hidden = _actor_weights(tensors, name)
    obs_size = int(state_dict["policy_net.0.weight"].shape[1])
    _check_observation(record, obs_size, name)
    metadata = {"obs_size": obs_size, "layout_version": SIZE_LAYOUTS[obs_size], "hidden": hidden,
                "activation": activation,
                "imported_from": {"library": "stable-baselines3", "version": version, "file": Path(name).name,
                                  "num_timesteps": record.get("num_timesteps")}}
    return state_dict, metadata


def _plain_json(raw: bytes, name: str) -> dict:
    try:
        record = json.loads(raw)
    except (ValueError, RecursionError):
        raise SavedModelError(f"{name}: its {SB3_DATA} entry is not JSON") from None
    if not isinstance(record, dict):
        raise SavedModelError(f"{name}: its {SB3_DATA} entry is not a JSON object")
    policy = record.get("policy_class")
    module = policy.get("__module__") if isinstance(policy, dict) else None
    if module not in POLICY_MODULES:
        raise SavedModelError(f"{name}: the policy comes from {module!r}; only MlpPolicy of MaskablePPO or PPO "
                              f"({', '.join(POLICY_MODULES)}) can be imported")
    return record


def _activation(record: dict, name: str) -> str:
    """The activation named in ``policy_kwargs`` (as text; SB3's default Tanh when none is given)."""
    kwargs = record.get("policy_kwargs") or {}
    text = kwargs.get("activation_fn") if isinstance(kwargs, dict) else None
    if text is None:
        return "tanh"
    found = re.fullmatch(r"<class '([\w.]+)'>", str(text))
    if not found or found.group(1) not in ACTIVATION_CLASSES:
        raise SavedModelError(f"{name}: activation {text!r} cannot be imported: train with torch.nn.ReLU or "
                              "torch.nn.Tanh")
    return ACTIVATION_CLASSES[found.group(1)]


def _actor_weights(tensors, name: str) -> tuple[dict, list[int]]:
    """The actor's tensors under :mod:`agents.network`'s names, and its hidden widths."""
    if not isinstance(tensors, dict) or not all(isinstance(key, str) for key in tensors):
        raise SavedModelError(f"{name}: {SB3_WEIGHTS} is not a mapping of named tensors")
    layers, other = {}, []
    for key in tensors:
        actor = ACTOR_LAYER.fullmatch(key)
        if actor:
            layers.setdefault(int(actor.group(1)), {})[actor.group(2)] = tensors[key]
        elif not (CRITIC.fullmatch(key) or key in ("action_net.weight", "action_net.bias")):
            other.append(key)
    if other:
        raise SavedModelError(f"{name}: only a plain MlpPolicy can be imported; it has other weights "
                              f"({', '.join(sorted(other)[:4])}{', ...' if len(other) > 4 else ''})")
    if not layers or sorted(layers) != list(range(0, 2 * len(layers), 2)) or \
            any(set(pair) != {"weight", "bias"} for pair in layers.values()):
        raise SavedModelError(f"{name}: the actor is not a chain of linear layers with activations between "
                              f"(mlp_extractor.policy_net.0, .2, ...)")
    if "action_net.weight" not in tensors or "action_net.bias" not in tensors:
        raise SavedModelError(f"{name}: it has no action_net: not an actor-critic MlpPolicy")
    state_dict, hidden, inputs = {}, [], None
    for index in sorted(layers):
        weight, bias = layers[index]["weight"], layers[index]["bias"]
        if weight.ndim != 2 or tuple(bias.shape) != (weight.shape[0],) or inputs not in (None, weight.shape[1]):
            raise SavedModelError(f"{name}: layer mlp_extractor.policy_net.{index} has shape {tuple(weight.shape)}, "
                                  "which does not follow from the layer before")
        state_dict[f"policy_net.{index}.weight"], state_dict[f"policy_net.{index}.bias"] = weight, bias
        hidden.append(int(weight.shape[0]))
        inputs = weight.shape[0]
    action_weight, action_bias = tensors["action_net.weight"], tensors["action_net.bias"]
    if tuple(action_weight.shape) != (NUM_ACTIONS, inputs) or tuple(action_bias.shape) != (NUM_ACTIONS,):
        raise SavedModelError(f"{name}: action_net has shape {tuple(action_weight.shape)}; this game needs "
                              f"({NUM_ACTIONS}, {inputs}): the model was trained for another action space")
    state_dict["action_net.weight"], state_dict["action_net.bias"] = action_weight, action_bias
    return state_dict, hidden


def _check_observation(record: dict, obs_size: int, name: str) -> None:
    space = record.get("observation_space")
    shape = space.get("_shape") if isinstance(space, dict) else None
    if shape is not None and shape != [obs_size]:
        raise SavedModelError(f"{name}: its observation space has shape {shape}; only the flat vector can be imported")
    check_layout(SIZE_LAYOUTS.get(obs_size), obs_size, name)
