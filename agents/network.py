"""A trained policy network that plays like a bot: ``act(observation) -> action id``.

The network is a multi-layer perceptron from the observation vector to 145 action logits,
laid out like the policy half of a Stable-Baselines3 ``MlpPolicy``::

    policy_net.0.weight  [hidden[0], obs_size]     policy_net.0.bias  [hidden[0]]
    policy_net.2.weight  [hidden[1], hidden[0]]    policy_net.2.bias  [hidden[1]]   (one pair per layer,
    ...                                                                              activations between)
    action_net.weight    [145, hidden[-1]]         action_net.bias    [145]

A network trained on an earlier, shorter observation layout (``obs_size`` one of
``skipbo_env.encoding.EARLIER_OBS_SIZES``) reads the first ``obs_size`` entries of the vector:
features are only ever appended, so that prefix keeps the meaning it was trained on.

Inference runs in numpy (one small matrix product per layer), so a policy plays on any CPU
without torch overhead and without a GPU. Illegal actions are masked out before the choice.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.encoding import GLOBAL_OFFSETS, SEAT_BLOCK, SEAT_START
from skipbo_env.rules import MAX_PLAYERS, MIN_PLAYERS

ACTIVATIONS = ("relu", "tanh")
PLAYERS_AT = GLOBAL_OFFSETS["num_players"]
"""Where the observation's one-hot table size starts (index ``n - MIN_PLAYERS``)."""


def parameter_shapes(obs_size: int, hidden: list[int]) -> dict[str, tuple[int, ...]]:
    """The name and shape of every tensor of a network (the layout in the module docstring)."""
    shapes = {}
    inputs = obs_size
    for layer, width in enumerate(hidden):
        shapes[f"policy_net.{2 * layer}.weight"] = (width, inputs)
        shapes[f"policy_net.{2 * layer}.bias"] = (width,)
        inputs = width
    shapes["action_net.weight"] = (NUM_ACTIONS, inputs)
    shapes["action_net.bias"] = (NUM_ACTIONS,)
    return shapes


class NetworkPolicy:
    """Plays the action the network rates highest among the legal ones (or samples from it).

    ``weights`` maps the names of :func:`parameter_shapes` to arrays. ``deterministic=False``
    samples from the masked softmax with a generator seeded by ``seed`` (and :meth:`reset`).
    """

    def __init__(self, weights: Mapping[str, np.ndarray], hidden: list[int], activation: str = "relu",
                 deterministic: bool = True, seed: int | None = None, metadata: dict | None = None) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation={activation!r} is not allowed: use one of {', '.join(ACTIVATIONS)}")
        self.hidden = list(hidden)
        self.activation = activation
        self.deterministic = deterministic
        self.metadata = dict(metadata or {})
        self.source = "the model"
        """Where the weights came from, as messages name it (:func:`agents.saved_model.load_saved_policy`: the file)."""
        self._layers = [
            (np.asarray(weights[f"policy_net.{2 * layer}.weight"], dtype=np.float32).T.copy(),
             np.asarray(weights[f"policy_net.{2 * layer}.bias"], dtype=np.float32))
            for layer in range(len(hidden))
        ]
        self._out = (np.asarray(weights["action_net.weight"], dtype=np.float32).T.copy(),
                     np.asarray(weights["action_net.bias"], dtype=np.float32))
        self.obs_size = self._layers[0][0].shape[0] if self._layers else self._out[0].shape[0]
        self._inputs = _read_inputs(self._layers[0][0]) if self._layers else None
        if self._inputs is not None:  # observation values with zero weights are left out of the product
            self._layers = [(self._layers[0][0][self._inputs], self._layers[0][1])] + self._layers[1:]
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """Raw action logits for one observation vector (or a batch of them), read up to ``obs_size``."""
        x = np.asarray(observation, dtype=np.float32)[..., :self.obs_size]
        if self._inputs is not None:
            x = x[..., self._inputs]
        for weight, bias in self._layers:
            x = x @ weight + bias
            x = np.maximum(x, 0.0) if self.activation == "relu" else np.tanh(x)
        weight, bias = self._out
        return x @ weight + bias

    def action_probabilities(self, observation: dict) -> np.ndarray:
        """The masked softmax over the 145 ids (zero for every illegal id)."""
        mask = np.asarray(observation["action_mask"], dtype=bool)
        logits = np.where(mask, self.logits(observation["observation"]), -np.inf)
        logits = logits - logits.max()
        probabilities = np.exp(logits.astype(np.float64))
        return probabilities / probabilities.sum()

    def check_num_players(self, num_players: int) -> None:
        """Refuse, in one line (``ValueError``), a table larger than the one the model was trained for (its
        metadata's ``rules.num_players``) when the network reads none of the values of the seat that table adds
        (trained with ``network.inputs: table``: it would play blind to that seat). A network that reads the
        whole observation (``network.inputs: all``, the default, as the shipped ``ppo-2p.zip``) reads every
        seat of any table, and so plays at every table size. Harnesses call it before the first game; ``act``
        checks every observation's table size as well."""
        declared = self.metadata.get("rules", {}).get("num_players") if isinstance(self.metadata.get("rules"),
                                                                                    dict) else None
        if self._inputs is None or not isinstance(declared, int) or num_players <= declared:
            return
        added = SEAT_START + SEAT_BLOCK * declared
        if added < self.obs_size and not np.any((self._inputs >= added) & (self._inputs < added + SEAT_BLOCK)):
            raise ValueError(f"{self.source} was trained for {declared} players and reads only the seats of a "
                             f"{declared}-player table (network.inputs: table); it does not play at a table of "
                             f"{num_players}: train one for {num_players} players, or with network.inputs: all")

    def act(self, observation: dict) -> int:
        mask = np.asarray(observation["action_mask"], dtype=bool)
        vector = np.asarray(observation["observation"])
        self.check_num_players(int(np.argmax(vector[PLAYERS_AT:PLAYERS_AT + MAX_PLAYERS - MIN_PLAYERS + 1]))
                               + MIN_PLAYERS)
        if not mask.any():
            raise ValueError("the action mask allows no action: the game is over or the mask is wrong")
        if self.deterministic:
            logits = np.where(mask, self.logits(observation["observation"]), -np.inf)
            return int(np.argmax(logits))
        probabilities = self.action_probabilities(observation)
        return int(self._rng.choice(NUM_ACTIONS, p=probabilities))

    def __repr__(self) -> str:
        mode = "argmax" if self.deterministic else "sampling"
        return f"NetworkPolicy(obs_size={self.obs_size}, hidden={self.hidden}, {self.activation}, {mode})"


def _read_inputs(first_weight: np.ndarray) -> np.ndarray | None:
    """The inputs a first layer ``[inputs, width]`` reads (a row not all zero), or ``None`` when it reads
    every one. A network trained on one table size (``network.inputs: table``)
    has zero rows for the absent seats' values; leaving them out gives the same logits, faster."""
    read = np.flatnonzero(first_weight.any(axis=1))
    return read if len(read) < len(first_weight) else None
