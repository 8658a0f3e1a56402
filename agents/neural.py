"""``neural``: a neural network's value of the positions a turn can reach, searched with the planner's turn search.

The network reads the observation encoding of a position (``skipbo_env.encoding``; only the values a
table of its size can set, less the turn counters) and gives the logit of the seat's chance to win
the hand from there. At a decision the bot searches every sequence of plays it can make this turn
(:class:`agents.planner.TurnSearch`'s search, compiled: :mod:`agents.batched.neural`), values each place
the sequence could stop by the network, plays the first play of the best, and when stopping is best
discards the card whose turn end the network values most. It draws nothing at random.

Its weights are learned by self-play (``backend: neural``, ``training/neural/trainer.py``) and saved as a JSON
file of integers (:func:`read_model`, numbers only: loading a file cannot run code). The kernel that
decides reads only the observation and the legal mask, so the bot plays the same on the rules engine
(:meth:`NeuralBot.act`) and on the batched engine (:meth:`NeuralBot.act_batch`, a whole batch in one
call).
"""

from __future__ import annotations

import json
import os

import numpy as np

from agents.batched.neural import decide, decide_rows, input_indices
from agents.policy import Bot
from skipbo_env.encoding import OBS_SIZE
from skipbo_env.files import read_file_text
from skipbo_env.rules import MAX_PLAYERS, MIN_PLAYERS

NAME = "neural"
FORMAT = "skipbo-neural/1"
SHIPPED_MODELS = {"neural-2p": os.path.join(os.path.dirname(__file__), "pretrained", "neural-2p.json")}
"""The shipped networks by name (``agents.load_policy("neural-2p")``): ``skipbo train neural_2p``'s model."""
MAX_MODEL_BYTES = 16 * 1024 * 1024
"""The largest model file read (a 512-wide first layer at six seats is about 6 MB)."""
MAX_WIDTH = 1024
"""The widest layer a model file may declare."""
MAX_WEIGHT = 2 ** 40
"""The largest magnitude of a quantized weight (the kernels' 64-bit sums stay exact below it)."""


class Network:
    """A quantized network as the kernels read it: ``arrays`` is
    ``(first, first_bias, second, second_bias, output, output_bias, input_of)`` (int64)."""

    def __init__(self, num_players: int, inputs: np.ndarray, first, first_bias, second, second_bias, output,
                 output_bias) -> None:
        self.num_players = num_players
        self.inputs = np.asarray(inputs, dtype=np.int64)
        input_of = np.full(OBS_SIZE + 1, -1, dtype=np.int64)
        input_of[self.inputs] = np.arange(len(self.inputs))
        self.arrays = tuple(np.ascontiguousarray(a, dtype=np.int64) for a in (
            first, first_bias, second, second_bias, output, np.array([output_bias]), input_of))

    @property
    def hidden(self) -> tuple[int, int]:
        return self.arrays[0].shape[1], self.arrays[2].shape[0]

    def to_dict(self) -> dict:
        first, first_bias, second, second_bias, output, output_bias, _ = self.arrays
        return {"format": FORMAT, "num_players": self.num_players, "inputs": self.inputs.tolist(),
                "hidden": list(self.hidden), "first": first.tolist(), "first_bias": first_bias.tolist(),
                "second": second.tolist(), "second_bias": second_bias.tolist(), "output": output.tolist(),
                "output_bias": int(output_bias[0])}


def network_from_dict(data, source: str = "model") -> Network:
    """The network of a model dict (:meth:`Network.to_dict`'s layout); ``ValueError`` naming ``source`` and the
    field for anything else."""
    def fail(message: str):
        raise ValueError(f"neural model {source}: {message}")

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        fail(f"expected a JSON object with \"format\": \"{FORMAT}\"")
    players = data.get("num_players")
    if not isinstance(players, int) or isinstance(players, bool) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        fail(f"num_players must be an integer from {MIN_PLAYERS} to {MAX_PLAYERS}")
    expected_inputs = input_indices(players)
    if data.get("inputs") != expected_inputs.tolist():
        fail(f"inputs must be the {len(expected_inputs)} input indices of a {players}-seat table")
    hidden = data.get("hidden")
    if (not isinstance(hidden, list) or len(hidden) != 2
            or not all(isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= MAX_WIDTH for h in hidden)):
        fail(f"hidden must be two layer widths from 1 to {MAX_WIDTH}")
    width, second_width = hidden
    shapes = {"first": (len(expected_inputs), width), "first_bias": (width,), "second": (second_width, width),
              "second_bias": (second_width,), "output": (second_width,)}
    arrays = {name: _integer_array(data.get(name), shape, name, fail) for name, shape in shapes.items()}
    bias = data.get("output_bias")
    if not isinstance(bias, int) or isinstance(bias, bool) or abs(bias) > MAX_WEIGHT:
        fail(f"output_bias must be an integer of magnitude at most {MAX_WEIGHT}")
    return Network(players, expected_inputs, output_bias=bias, **arrays)


def _integer_array(value, shape: tuple, name: str, fail) -> np.ndarray:
    try:
        array = np.array(value, dtype=object)
    except (ValueError, TypeError):
        array = None
    if array is None or array.shape != shape:
        fail(f"{name} must be a list of integers of shape {list(shape)}")
    flat = array.ravel()
    if not all(isinstance(v, int) and not isinstance(v, bool) and abs(v) <= MAX_WEIGHT for v in flat):
        fail(f"{name} must hold integers of magnitude at most {MAX_WEIGHT}")
    return flat.astype(np.int64).reshape(shape)


def model_path(name: str) -> str:
    """The file of a shipped network's name (:data:`SHIPPED_MODELS`), else ``name`` itself (a path)."""
    return SHIPPED_MODELS.get(name, name)


def read_model(path: str) -> Network:
    """The network of a model file (JSON numbers only, at most :data:`MAX_MODEL_BYTES`); ``ValueError`` with the
    reason for a file that is not one."""
    text = read_file_text(path, max_bytes=MAX_MODEL_BYTES, what="neural model")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise ValueError(f"neural model {path!r} is not valid JSON: {reason}") from None
    return network_from_dict(data, repr(path))


class NeuralBot(Bot):
    """The turn search valued by a neural network (``model``: a model file a ``backend: neural`` run wrote,
    ``neural:model=runs/NAME/model.json``, or a shipped one, :data:`SHIPPED_MODELS`). It draws nothing at
    random: given an observation it always decides the same way."""

    name = NAME
    concurrent_batches = True
    """``act_batch`` may run on parts of a batch on several threads at once (its kernel holds no GIL)."""

    def __init__(self, seed: int | None = None, *, model: str | None = None) -> None:
        super().__init__(seed)
        if model is None:
            raise ValueError("the neural bot needs a model file: neural:model=runs/NAME/model.json (written by "
                             f"skipbo train neural_2p), or play a shipped one: {', '.join(SHIPPED_MODELS)}")
        self.model_file = model
        self.network = read_model(model)

    @classmethod
    def of(cls, network: Network, label: str = "in memory") -> NeuralBot:
        """A bot playing ``network`` (training plays its current weights without writing a file)."""
        bot = cls.__new__(cls)
        Bot.__init__(bot, None)
        bot.model_file, bot.network = label, network
        return bot

    def __repr__(self) -> str:
        return f"NeuralBot(model={self.model_file!r})"

    def act(self, observation: dict) -> int:
        vector = np.ascontiguousarray(observation["observation"], dtype=np.float32)
        mask = np.ascontiguousarray(observation["action_mask"], dtype=bool).reshape(1, -1)
        return int(decide(vector, mask, 0, self.network.arrays))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The actions of a batch of observations (float32 ``[k, OBS_SIZE]``) and masks (bool ``[k, 145]``)."""
        observations = np.ascontiguousarray(observations, dtype=np.float32)
        masks = np.ascontiguousarray(masks, dtype=bool)
        out = np.empty(len(observations), dtype=np.int64)
        decide_rows(observations, masks, self.network.arrays, out)
        return out


__all__ = ["SHIPPED_MODELS", "NeuralBot", "Network", "model_path", "network_from_dict", "read_model"]
