"""``residual``: the learned bot's value plus a learned correction, searched with the planner's turn search.

The model (``td.start: teacher``, ``training/td/``) values a place the turn could stop as ``a * v + b + c * r``: ``v``
the teacher's (``pretrained-2p``, the shipped ``learned-2p``) value of it, ``r`` a small network of the neural
bot's format reading the stop's observation inputs and the teacher's 16 features; a turn end adds ``a_d`` times the
teacher's score of the discard. With ``r`` = 0 it plays exactly the teacher's moves. The kernels are
:mod:`agents.batched.residual`; they read the game's record (as the teacher's kernel does) and the observation, so
the bot plays on the batched engine (``act_rows``); on the rules engine (``act``) it reads the same numbers from
the observation (:func:`agents.batched.residual.observed_view`) and makes the same moves. Two players.

**The model file** (``skipbo-residual/2``, written by a ``td.start: teacher`` run as ``model.json``): JSON numbers
only, read by :func:`read_model` and checked like the neural bot's (:func:`agents.neural.read_model`): ``teacher``
(``learned-2p``), ``feature_unit`` (:data:`agents.batched.residual.FEATURE_UNIT`), ``scales`` ``[a, b, a_d, c]``
(finite, ``a``, ``a_d`` and ``c`` > 0; a ``skipbo-residual/1`` file has ``[a, b, a_d]`` and ``c`` = 1),
``correction`` (``r``'s input part in the neural bot's format),
``feature_first`` (``r``'s first-layer rows of the 16 features) and, optionally, ``search_top`` (the teacher's best
stops of a decision by ``v`` that the correction ranks, from 1 to :data:`MAX_SEARCH_TOP`; absent or 0: every stop)
and ``bound`` (``r`` enters as ``bound * tanh(r / bound)``, in ``r``'s units, finite, at most :data:`MAX_SCALE`;
absent or 0: no bound).
"""

from __future__ import annotations

import math

import numpy as np

from agents.batched.learned import SHIPPED, variant_of
from agents.batched.neural import float_layers, num_players_of
from agents.batched.residual import BOUND, FEATURE_UNIT, is_zero, observed_action, residual_actions
from agents.learned_parameters import NAME as LEARNED, NUM_FEATURES
from agents.neural import (
    MAX_SUM, Network, input_maxima, integer_array, largest_sum, network_from_dict, read_model_numbers,
)
from agents.policy import Bot
from skipbo_env.cards import CARDS_PER_DECK
from skipbo_env.rules import MAX_DECKS

NAME = "residual"
FORMAT = "skipbo-residual/2"
FIRST_FORMAT = "skipbo-residual/1"
"""The first format: three scales, ``c`` = 1 (the first teacher-start run's files)."""
TEACHER = "learned-2p"
"""The teacher: the shipped two-player learned bot (``pretrained-2p``)."""
MAX_FEATURE = MAX_DECKS * CARDS_PER_DECK
"""More than any feature's magnitude: each is a count of cards, a chance, or a chance times a seat weight or over a
stockpile's size."""
MAX_SCALE = 1e6
"""The largest magnitude of a model file's ``scales`` or ``bound``."""
MAX_SEARCH_TOP = 4096
"""The most stops a decision's correction may rank apart from all of them (room kept for each)."""


def teacher_parameters() -> np.ndarray:
    """The parameters of the teacher :data:`TEACHER`."""
    return SHIPPED[variant_of(LEARNED, TEACHER)]


def residual_dict(network: Network, scales, search_top: int = 0) -> dict:
    """The model file's numbers of ``r`` (``network``, its first layer a row per input, then per feature),
    ``scales`` ``[a, b, a_d, c, bound]`` and ``search_top`` (0: every stop)."""
    document = network.to_dict()
    inputs = len(network.inputs)
    first = document.pop("first")
    return {"format": FORMAT, "teacher": TEACHER, "feature_unit": FEATURE_UNIT,
            "scales": [float(x) for x in scales[:BOUND]], "bound": float(scales[BOUND]),
            "correction": {**document, "first": first[:inputs]}, "feature_first": first[inputs:],
            "search_top": int(search_top)}


def residual_from_dict(data, source: str = "model") -> tuple[Network, np.ndarray, int]:
    """``r``, ``[a, b, a_d, c, bound]`` and ``search_top`` of a model dict (:func:`residual_dict`'s layout, or the
    first format's); ``ValueError`` naming ``source`` and the field for anything else."""
    def fail(message: str):
        raise ValueError(f"residual model {source}: {message}")

    if not isinstance(data, dict) or data.get("format") not in (FORMAT, FIRST_FORMAT):
        fail(f"expected a JSON object with \"format\": \"{FORMAT}\" (or \"{FIRST_FORMAT}\")")
    names = "[a, b, a_d, c]" if data["format"] == FORMAT else "[a, b, a_d]"
    positive = (0, 2, 3) if data["format"] == FORMAT else (0, 2)
    if data.get("teacher") != TEACHER:
        fail(f"teacher must be {TEACHER!r} (the only teacher the kernels play)")
    if data.get("feature_unit") != FEATURE_UNIT:
        fail(f"feature_unit must be {FEATURE_UNIT}")
    scales = data.get("scales")
    if (not isinstance(scales, list) or len(scales) != len(names.split(","))
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                       and abs(x) <= MAX_SCALE for x in scales) or any(scales[i] <= 0 for i in positive)):
        fail(f"scales must be {names}, finite numbers of magnitude at most {MAX_SCALE:g}, all but b > 0")
    scales = scales if data["format"] == FORMAT else [*scales, 1.0]
    bound = data.get("bound", 0.0)
    if (not isinstance(bound, (int, float)) or isinstance(bound, bool) or not math.isfinite(bound)
            or not 0 <= bound <= MAX_SCALE):
        fail(f"bound must be a number from 0 (no bound) to {MAX_SCALE:g}")
    search_top = data.get("search_top", 0)
    if not isinstance(search_top, int) or isinstance(search_top, bool) or not 0 <= search_top <= MAX_SEARCH_TOP:
        fail(f"search_top must be an integer from 0 (every stop) to {MAX_SEARCH_TOP}")
    correction = network_from_dict(data.get("correction"), f"{source} (its correction)")
    if correction.num_players != 2:
        fail("its correction must be of a 2-player table (the teacher's)")
    first, first_bias, second, second_bias, output, output_bias, _ = correction.arrays
    features = integer_array(data.get("feature_first"), (NUM_FEATURES, first.shape[1]), "feature_first", fail)
    network = Network(2, correction.inputs, np.vstack([first, features]), first_bias, second, second_bias, output,
                      int(output_bias[0]))
    maxima = np.concatenate([input_maxima()[network.inputs], np.full(NUM_FEATURES, MAX_FEATURE * FEATURE_UNIT)])
    reach = largest_sum(network, maxima)
    if reach > MAX_SUM:
        fail(f"its weights are too large to be summed exactly in 64-bit integers: a sum could reach "
             f"2**{np.log2(reach):.1f}, and a model's sums must stay within 2**{np.log2(MAX_SUM):.0f}")
    return network, np.array([*scales, bound], dtype=np.float64), search_top


def read_model(path: str) -> tuple[Network, np.ndarray, int]:
    """``r``, ``[a, b, a_d, c, bound]`` and ``search_top`` of a model file (JSON numbers only); ``ValueError`` with the
    reason otherwise."""
    return residual_from_dict(read_model_numbers(path, "residual model"), repr(path))


class ResidualBot(Bot):
    """The residual model of a model file (``residual:model=runs/NAME/model.json``, written by a ``td.start:
    teacher`` run) over the teacher's value, on either engine. It draws nothing at random."""

    name = NAME

    def __init__(self, seed: int | None = None, *, model: str | None = None) -> None:
        super().__init__(seed)
        if model is None:
            raise ValueError("the residual bot needs a model file: residual:model=runs/NAME/model.json (written by "
                             "skipbo train td_teacher_2p)")
        self.model_file = model
        self.network, self.scales, self.search_top = read_model(model)
        self.parameters = teacher_parameters()

    @classmethod
    def of(cls, network: Network, scales, label: str = "in memory", search_top: int = 0) -> ResidualBot:
        """A bot playing ``r`` = ``network`` with ``scales`` ``[a, b, a_d, c, bound]`` over the teacher's
        ``search_top`` best stops (0: all; training plays its current weights without writing a file)."""
        bot = cls.__new__(cls)
        Bot.__init__(bot, None)
        bot.model_file, bot.network, bot.search_top = label, network, int(search_top)
        bot.scales = np.asarray(scales, dtype=np.float64)
        bot.parameters = teacher_parameters()
        return bot

    def __repr__(self) -> str:
        return f"ResidualBot(model={self.model_file!r})"

    def check_num_players(self, num_players: int) -> None:
        """Refuse, in one line (``ValueError``), a table of another size than two (the teacher's)."""
        if num_players != 2:
            raise ValueError(f"residual model {self.model_file} plays two players (its teacher's table), not "
                             f"{num_players}")

    def act(self, observation: dict) -> int:
        """The action for an observation of the rules engine: the teacher's view read from the observation
        (:func:`agents.batched.residual.observed_view`), the same decision as :meth:`act_rows` on the batched
        engine's record."""
        vector = np.ascontiguousarray(observation["observation"], dtype=np.float32)
        mask = np.ascontiguousarray(observation["action_mask"], dtype=bool).reshape(1, -1)
        self.check_num_players(int(num_players_of(vector)))
        return int(observed_action(mask, vector, self.parameters, self.network.arrays, self.scales,
                                   self.search_top, *self.layers()))

    def layers(self) -> tuple:
        """``r``'s float layers and whether it is zero (worked out once)."""
        if not hasattr(self, "_layers"):
            self._layers = (float_layers(self.network.arrays), bool(is_zero(self.network.arrays)))
        return self._layers

    def act_rows(self, engine, rows: np.ndarray, observations: np.ndarray, masks=None) -> np.ndarray:
        """The actions of the seats to act in the games ``rows`` of the batched engine ``engine`` (their
        observations; the legal moves are the engine's own masks), the rows split among its kernel threads."""
        rows = np.asarray(rows, dtype=np.int64)
        observations = np.ascontiguousarray(observations, dtype=np.float32)
        out = np.empty(len(rows), dtype=np.int64)
        engine.run_parts(lambda a, b: residual_actions(engine.games, engine.action_mask, engine.cfg, rows[a:b],
                                                       self.parameters, observations[a:b], self.network.arrays,
                                                       self.scales, self.search_top, out[a:b]), len(rows))
        return out
