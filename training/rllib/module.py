"""RLModules (RLlib's new API stack) for Skip-Bo: the masked policy network and the bots.

:class:`MaskedPolicyModule` reads the environment's observation dict
``{"observation": float32[731], "action_mask": int8[145]}`` as it comes (no renaming to RLlib's
example key ``"observations"``). Its policy half has exactly the layout of
:mod:`agents.network` (``policy_net.0``, ``policy_net.2``, ..., ``action_net``), so exporting
to a project model file and warm-starting from one copy tensors by name; the value network
(``value_net``, ``value_head``) is separate, as in the SB3 path. Illegal ids get the logit
:data:`MASKED_LOGIT` before the action distribution is built, so they are never sampled and
never the argmax.

:class:`BotModule` plays an ``agents.load_policy`` spec (``random``, ``greedy``, ``planner``,
a model file, ...) row by row; it has no weights and is never trained (it is left out of
``policies_to_train``).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule

from agents.network import parameter_shapes
from skipbo_env.encoding import OBS_SIZE
from agents.loading import load_policy

FIRST_LAYER = "policy_net.0.weight"
"""The policy's input layer, ``[hidden[0], observation size]`` (the layout of :mod:`agents.network`)."""

MASKED_LOGIT = torch.finfo(torch.float32).min
"""The logit of an illegal id: finite, so the softmax gives it probability 0 without NaN."""

ACTIVATIONS = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}


def _mlp(inputs: int, hidden: list[int], activation: str) -> torch.nn.Sequential:
    """Linear layers at indices 0, 2, 4, ... with the activation between (the agents.network layout)."""
    layers: list[torch.nn.Module] = []
    for width in hidden:
        layers += [torch.nn.Linear(inputs, width), ACTIVATIONS[activation]()]
        inputs = width
    return torch.nn.Sequential(*layers)


class MaskedPolicyModule(TorchRLModule, ValueFunctionAPI):
    """Policy and value MLPs over ``observation``; ``action_mask`` masks the logits.

    ``model_config``: ``{"hidden": [256, 256], "activation": "relu"}``.
    """

    def setup(self) -> None:
        hidden = list(self.model_config["hidden"])
        activation = self.model_config["activation"]
        inputs = self.observation_space["observation"].shape[0]
        self.policy_net = _mlp(inputs, hidden, activation)
        self.action_net = torch.nn.Linear(hidden[-1], self.action_space.n)
        self.value_net = _mlp(inputs, hidden, activation)
        self.value_head = torch.nn.Linear(hidden[-1], 1)

    def _forward(self, batch: dict, **kwargs) -> dict:
        observation = batch[Columns.OBS]
        logits = self.action_net(self.policy_net(observation["observation"]))
        legal = observation["action_mask"] > 0
        return {Columns.ACTION_DIST_INPUTS: torch.where(legal, logits, torch.full_like(logits, MASKED_LOGIT))}

    def compute_values(self, batch: dict, embeddings: Any = None) -> torch.Tensor:
        features = self.value_net(batch[Columns.OBS]["observation"])
        return self.value_head(features).squeeze(-1)

    def raw_logits(self, observations: torch.Tensor) -> torch.Tensor:
        """The unmasked logits of a batch of observation vectors (what ``NetworkPolicy.logits`` gives)."""
        with torch.no_grad():
            return self.action_net(self.policy_net(observations))


def policy_weights(module_state: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The policy half of a :class:`MaskedPolicyModule` state, named as in :mod:`agents.network`."""
    return {name: np.array(value, dtype=np.float32, copy=True) for name, value in module_state.items()
            if name.startswith(("policy_net.", "action_net."))}


def read_whole_observation(weights: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """A model file's policy as weights of :class:`MaskedPolicyModule`, which reads all :data:`OBS_SIZE`
    values. A model of an earlier, shorter layout reads only a prefix (``agents.network``): its
    first layer gets zero weights for the values appended since, so the logits are the file's own."""
    weights = {name: np.asarray(value, dtype=np.float32) for name, value in weights.items()}
    first = weights[FIRST_LAYER]  # [hidden[0], the model's obs_size] (agents.saved_model checked it)
    appended = np.zeros((first.shape[0], OBS_SIZE - first.shape[1]), dtype=np.float32)
    weights[FIRST_LAYER] = np.concatenate([first, appended], axis=1)
    return weights


def check_policy_weights(weights: Mapping[str, Any], hidden: list[int], source: str) -> None:
    """Raise ``ValueError`` when ``weights`` do not fit the network ``hidden`` (names and shapes)."""
    expected = parameter_shapes(OBS_SIZE, list(hidden))
    if set(weights) != set(expected):
        raise ValueError(f"{source}: its network does not match network.hidden={list(hidden)} "
                         f"(tensors {sorted(weights)} instead of {sorted(expected)})")
    for name, shape in expected.items():
        if tuple(np.shape(weights[name])) != shape:
            raise ValueError(f"{source}: tensor {name} has shape {tuple(np.shape(weights[name]))}, "
                             f"network.hidden={list(hidden)} needs {shape}")


class BotModule(RLModule):
    """A fixed, non-learning player: ``agents.load_policy(model_config["spec"])`` asked row by row.

    Bots keep no state between decisions apart from their generator, so one instance serves
    every environment of an env runner; it is seeded by ``model_config["seed"]``.
    """

    def setup(self) -> None:
        self.spec = self.model_config["spec"]
        self.policy = load_policy(self.spec, seed=self.model_config.get("seed"))

    def _forward(self, batch: dict, **kwargs) -> dict:
        observation = batch[Columns.OBS]
        vectors = np.asarray(observation["observation"])
        masks = np.asarray(observation["action_mask"])
        actions = [self.policy.act({"observation": vector, "action_mask": mask})
                   for vector, mask in zip(vectors, masks)]
        return {Columns.ACTIONS: np.asarray(actions, dtype=np.int64)}

    def _forward_train(self, batch: dict, **kwargs) -> dict:
        raise NotImplementedError(f"the bot {self.spec!r} is a fixed player; it is never trained")

    def get_state(self, *args, **kwargs) -> dict:
        return {}

    def set_state(self, state: dict) -> None:
        """A bot has no weights to set."""


def policy_spec(observation_space, action_space, hidden: list[int], activation: str) -> RLModuleSpec:
    return RLModuleSpec(module_class=MaskedPolicyModule, observation_space=observation_space,
                        action_space=action_space, model_config={"hidden": list(hidden), "activation": activation})


def bot_spec(observation_space, action_space, spec: str, seed: int) -> RLModuleSpec:
    return RLModuleSpec(module_class=BotModule, observation_space=observation_space, action_space=action_space,
                        model_config={"spec": spec, "seed": seed})

