"""``neural``: a neural network's value of the positions a turn can reach, searched with the planner's turn search.

The network reads the observation encoding of a position (``skipbo_env.encoding``; only the values a
table of its size can set, less the turn counters) and gives the logit of the seat's chance to win
the hand from there. At a decision the bot searches every sequence of plays it can make this turn
(:class:`agents.planner.TurnSearch`'s search, compiled: :mod:`agents.batched.neural`), values each place
the sequence could stop by the network, plays the first play of the best, and when stopping is best
discards the card whose turn end the network values most. It draws nothing at random.

Its weights are learned by self-play (``backend: neural``, ``training/neural/trainer.py``) and saved as a JSON
file of integers (:func:`read_model`, numbers only: loading a file cannot run code; a file whose weights could
make a sum of the kernels pass :data:`MAX_SUM`, :func:`largest_sum`, is refused, so every sum is exact). The file names
the observation fields its first layer reads (``inputs``: ``{"field", "size"}`` of the encoding's layout table,
``skipbo_env.encoding.FIELDS``, then ``pending_discard``), and loading maps them to today's offsets
(:func:`rows_of_today`): a field added to the observation since reads with zero weights, and a moved one where it
is now, so the network plays the same moves on any layout that has its fields. A network
reads the seats of the table size it was trained for, and refuses to play at another. The kernel that
decides reads only the observation and the legal mask, so the bot plays the same on the rules engine
(:meth:`NeuralBot.act`) and on the batched engine (:meth:`NeuralBot.act_batch`, a whole batch in one
call).
"""

from __future__ import annotations

import json

import numpy as np

from agents.batched.neural import (
    EXTRA_INPUTS, FIRST_SHIFT, INPUT_SLOTS, MULTIPLIER, SECOND_SHIFT, decide, decide_rows, field_inputs, input_fields,
    input_indices, input_size,
)
from agents.policy import Bot
from agents.shipped import NEURAL as NEURAL_KIND, of_kind
from skipbo_env.cards import CARDS_PER_DECK
from skipbo_env.encoding import GLOBAL_OFFSETS, LAYOUT_ROWS, OBS_HIGH
from skipbo_env.files import read_file_text
from skipbo_env.rules import MAX_COUNTER, MAX_DECKS, MAX_PLAYERS, MIN_PLAYERS

NAME = "neural"
FORMAT = "skipbo-neural/2"
"""The model file's format: ``inputs`` names the first layer's rows by field (:func:`input_list`)."""
FIRST_FORMAT = "skipbo-neural/1"
"""The first format: ``inputs`` lists observation indices of layout 3 (:data:`FIRST_FORMAT_LAYOUT`), then 812 for
``pending_discard``; read by converting the indices to the fields they fall in."""
SHIPPED_MODELS = of_kind(NEURAL_KIND)
"""The shipped networks by name (``agents.load_policy("neural-2p")``), read from the table of shipped players
(:mod:`agents.shipped`): ``skipbo train neural_2p``'s model and ``td-scratch-2p``, the network TD(λ) taught from
self-play results alone (``skipbo train td_scratch_2p``)."""
MAX_MODEL_BYTES = 16 * 1024 * 1024
"""The largest model file read (a 512-wide first layer at six seats is about 6 MB)."""
MAX_WIDTH = 1024
"""The widest layer a model file may declare."""
MAX_WEIGHT = 2 ** 40
"""The largest magnitude of a quantized weight; the sums the weights make are bounded by :data:`MAX_SUM`."""
MAX_SUM = 2 ** 62
"""The largest magnitude any sum of the kernels may reach for a model to load (:func:`largest_sum`): half the
int64 range, so the float64 arithmetic that bounds the sums cannot round an overflow out of sight."""
COUNTER_MAX = 2 * (MAX_COUNTER + 1)
"""More than the largest raw value an observation's turn counters can hold: ``max_turns`` and ``max_turn_plays``
go up to ``skipbo_env.rules.MAX_COUNTER`` (2**31 - 1), and the float32 encoding rounds them by a few hundred."""
PLAYERS_AT = GLOBAL_OFFSETS["num_players"]
COUNTERS = ("max_turns", "max_turn_plays", "turn", "plays_this_turn", "turn_plays_left")
_SEAT_FIELDS = (("present", 1), ("is_partner", 1), ("to_act", 1), ("stock_top", 13), ("stock_size", 1),
                ("hand_size", 1), ("discard_size", 4), ("discard_top", 52), ("discard_cards", 32))
FIRST_FORMAT_LAYOUT = (
    ("num_players", 5), ("partners", 1), ("team_win_either", 1), ("team_stock_shared", 1),
    ("exhausted_draw_draw", 1), ("decks", 1), ("stock_size", 1), ("max_turns", 1), ("turn", 1),
    ("plays_this_turn", 1), ("quiet_turns", 1), ("draw_pile_size", 1), ("completed_size", 1), ("hand", 13),
    ("unseen", 13), ("building_next", 48), ("building_size", 4),
    *((f"seat{seat}.{name}", size) for seat in range(6) for name, size in _SEAT_FIELDS),
    ("max_turn_plays", 1), ("turn_plays_left", 1), ("turn_play_limit_reached", 1),
    *((f"buried_discards_{seat}", 13) for seat in range(6)),
    ("pending_discard", 1),
)
"""``(field, size)`` of observation layout 3 (``skipbo_env.encoding.LAYOUT_VERSION`` 3, 812 values) in vector order,
then ``pending_discard`` at 812: what a :data:`FIRST_FORMAT` file's indices meant, frozen here."""


class Network:
    """A quantized network as the kernels read it: ``arrays`` is
    ``(first, first_bias, second, second_bias, output, output_bias, input_of)`` (int64). ``inputs``: the index of
    each first-layer row's input today (:func:`agents.batched.neural.input_indices`)."""

    def __init__(self, num_players: int, inputs: np.ndarray, first, first_bias, second, second_bias, output,
                 output_bias) -> None:
        self.num_players = num_players
        self.inputs = np.asarray(inputs, dtype=np.int64)
        input_of = np.full(INPUT_SLOTS, -1, dtype=np.int64)
        input_of[self.inputs] = np.arange(len(self.inputs))
        self.arrays = tuple(np.ascontiguousarray(a, dtype=np.int64) for a in (
            first, first_bias, second, second_bias, output, np.array([output_bias]), input_of))

    @property
    def hidden(self) -> tuple[int, int]:
        return self.arrays[0].shape[1], self.arrays[2].shape[0]

    def to_dict(self) -> dict:
        first, first_bias, second, second_bias, output, output_bias, _ = self.arrays
        return {"format": FORMAT, "num_players": self.num_players, "inputs": input_list(self.inputs),
                "hidden": list(self.hidden), "first": first.tolist(), "first_bias": first_bias.tolist(),
                "second": second.tolist(), "second_bias": second_bias.tolist(), "output": output.tolist(),
                "output_bias": int(output_bias[0])}


def network_from_dict(data, source: str = "model") -> Network:
    """The network of a model dict (:meth:`Network.to_dict`'s layout); ``ValueError`` naming ``source`` and the
    field for anything else."""
    def fail(message: str):
        raise ValueError(f"neural model {source}: {message}")

    if not isinstance(data, dict) or data.get("format") not in (FORMAT, FIRST_FORMAT):
        fail(f"expected a JSON object with \"format\": \"{FORMAT}\" (or \"{FIRST_FORMAT}\")")
    players = data.get("num_players")
    if not isinstance(players, int) or isinstance(players, bool) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        fail(f"num_players must be an integer from {MIN_PLAYERS} to {MAX_PLAYERS}")
    inputs = first_format_inputs(data.get("inputs"), fail) if data["format"] == FIRST_FORMAT else data.get("inputs")
    fields = named_inputs(inputs, fail)
    hidden = data.get("hidden")
    if (not isinstance(hidden, list) or len(hidden) != 2
            or not all(isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= MAX_WIDTH for h in hidden)):
        fail(f"hidden must be two layer widths from 1 to {MAX_WIDTH}")
    width, second_width = hidden
    shapes = {"first": (sum(size for _, size in fields), width), "first_bias": (width,),
              "second": (second_width, width), "second_bias": (second_width,), "output": (second_width,)}
    arrays = {name: integer_array(data.get(name), shape, name, fail) for name, shape in shapes.items()}
    arrays["first"] = rows_of_today(fields, arrays["first"], players, fail)
    bias = data.get("output_bias")
    if not isinstance(bias, int) or isinstance(bias, bool) or abs(bias) > MAX_WEIGHT:
        fail(f"output_bias must be an integer of magnitude at most {MAX_WEIGHT}")
    network = Network(players, input_indices(players), output_bias=bias, **arrays)
    reach = largest_sum(network)
    if reach > MAX_SUM:
        fail(f"its weights are too large to be summed exactly in 64-bit integers: a sum of the network could "
             f"reach 2**{np.log2(reach):.1f}, and a model's sums must stay within 2**{np.log2(MAX_SUM):.0f}")
    return network


def input_list(inputs: np.ndarray) -> list[dict]:
    """A model file's ``inputs``: ``{"field": name, "size": values}`` for each field (of the encoding's layout table,
    ``skipbo_env.encoding.FIELDS``, or an extra input such as ``pending_discard``) the first layer's rows read, in
    the rows' order, from the index of each row's input (whole fields only)."""
    owner = {start + k: name for name, start, size in LAYOUT_ROWS for k in range(size)}
    owner.update({index: name for name, index in EXTRA_INPUTS.items()})
    listed, at = [], 0
    while at < len(inputs):
        name = owner[int(inputs[at])]
        size = input_size(name)
        if not np.array_equal(inputs[at:at + size], field_inputs([name])):
            raise ValueError(f"the network reads part of the field {name!r}; a model file names whole fields")
        listed.append({"field": name, "size": size})
        at += size
    return listed


def named_inputs(inputs, fail) -> list[tuple[str, int]]:
    """``(field, size)`` of each entry of a model file's ``inputs`` (:func:`input_list`'s layout); ``fail`` says why
    for anything else."""
    if (not isinstance(inputs, list) or not all(isinstance(entry, dict) and set(entry) == {"field", "size"}
                                                and isinstance(entry["field"], str) for entry in inputs)
            or not all(isinstance(entry["size"], int) and not isinstance(entry["size"], bool)
                       and 1 <= entry["size"] <= INPUT_SLOTS for entry in inputs)):
        fail('inputs must be a list of {"field": name, "size": values}, one per field the first layer reads')
    fields = [(entry["field"], entry["size"]) for entry in inputs]
    names = [name for name, _ in fields]
    if len(set(names)) != len(names):
        fail(f"inputs must name each field once ({next(n for n in names if names.count(n) > 1)!r} is named twice)")
    return fields


def first_format_inputs(indices, fail) -> list[dict]:
    """The :data:`FIRST_FORMAT` file's input indices (of layout 3, :data:`FIRST_FORMAT_LAYOUT`) as fields."""
    owner, starts, at = {}, {}, 0
    for name, size in FIRST_FORMAT_LAYOUT:
        starts[name] = at
        owner.update({at + k: name for k in range(size)})
        at += size
    sizes = dict(FIRST_FORMAT_LAYOUT)
    listed, k = [], 0
    if not isinstance(indices, list) or not all(isinstance(i, int) and i in owner for i in indices):
        fail(f"inputs must be the input indices of layout 3 (0 to {at - 1}) in a {FIRST_FORMAT} file")
    while k < len(indices):
        name = owner[indices[k]]
        if indices[k:k + sizes[name]] != list(range(starts[name], starts[name] + sizes[name])):
            fail(f"inputs must cover whole fields in order; {name!r} (indices {starts[name]} to "
                 f"{starts[name] + sizes[name] - 1}) is read in part")
        listed.append({"field": name, "size": sizes[name]})
        k += sizes[name]
    return listed


def rows_of_today(fields: list[tuple[str, int]], first: np.ndarray, players: int, fail) -> np.ndarray:
    """``first`` (a row per value of ``fields``, in their order) as the rows of today's inputs of a ``players`` table
    (:func:`agents.batched.neural.input_fields`): each field's rows where today's layout reads it, zero rows for a
    field the model does not read (one added after it was trained); a field today's table does not have is
    dropped when its rows are zero (the network never used it), refused otherwise."""
    today = input_fields(players)
    start, at = {}, 0
    for name in today:
        start[name] = at
        at += input_size(name)
    rows = np.zeros((at, first.shape[1]), dtype=np.int64)
    read = 0
    for name, size in fields:
        if name in start:
            if size != input_size(name):
                fail(f"inputs: the field {name!r} has {size} values in the model and {input_size(name)} in today's "
                     "observation layout; the model does not fit")
            rows[start[name]:start[name] + size] = first[read:read + size]
        elif first[read:read + size].any():
            fail(f"inputs: the model reads the field {name!r}, which the observation of a {players}-seat table does "
                 "not have today; it does not fit")
        read += size
    return rows


def input_maxima() -> np.ndarray:
    """float64[INPUT_SLOTS]: the largest integer each network input can take (the kernels' ``q``): 1 for a flag
    or one-hot value (and ``pending_discard``), :data:`COUNTER_MAX` for the turn counters, ``MAX_DECKS`` for
    ``decks``, and every card of the largest deck for the other counts; times the input's ``MULTIPLIER``."""
    maxima = np.where(OBS_HIGH == 1, 1.0, float(MAX_DECKS * CARDS_PER_DECK))
    maxima[GLOBAL_OFFSETS["decks"]] = MAX_DECKS
    maxima[[GLOBAL_OFFSETS[name] for name in COUNTERS]] = COUNTER_MAX
    return np.append(maxima, np.ones(len(EXTRA_INPUTS))) * MULTIPLIER


def largest_sum(network: Network, maxima: np.ndarray | None = None) -> float:
    """A bound on the magnitude of every sum the kernels (:mod:`agents.batched.neural`) form with ``network``'s
    weights, for every input within :func:`input_maxima`: the first layer's sums at most ``S1`` (bias plus each
    weight times its input's largest value), and twice that while a plan's changes are added to the root's
    sums (each changed input steps by at most its largest value, once); the second layer's at most ``S2``
    (bias plus each weight times ``S1 >> FIRST_SHIFT``); the output's bias plus each weight times
    ``S2 >> SECOND_SHIFT``. A model loads only when this is at most :data:`MAX_SUM`, so every sum is exact.
    ``maxima``: the largest magnitude of each first-layer row's integer (default: the inputs', a network reading
    more rows than the inputs gives its own)."""
    first, first_bias, second, second_bias, output, output_bias, _ = (
        np.abs(array).astype(np.float64) for array in network.arrays)
    first_sums = first_bias + (input_maxima()[network.inputs] if maxima is None else maxima) @ first
    second_sums = second_bias + second @ (first_sums / 2 ** FIRST_SHIFT)
    output_sum = output_bias[0] + output @ (second_sums / 2 ** SECOND_SHIFT)
    return float(max(2 * first_sums.max(), second_sums.max(), output_sum))


def integer_array(value, shape: tuple, name: str, fail) -> np.ndarray:
    """``value`` (a model file's list) as an int64 array of ``shape``; ``fail(message)`` names ``name`` otherwise."""
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
    return network_from_dict(read_model_numbers(path, "neural model"), repr(path))


def read_model_numbers(path: str, what: str):
    """The JSON of a model file (numbers only: reading it cannot run code; at most :data:`MAX_MODEL_BYTES`, no
    integer of more than :data:`MAX_DIGITS` digits); ``ValueError`` naming ``what`` and the reason otherwise."""
    text = read_file_text(path, max_bytes=MAX_MODEL_BYTES, what=what)
    try:
        return json.loads(text, parse_int=_bounded_int)
    except (ValueError, RecursionError) as error:  # JSONDecodeError, a number too long, nesting too deep
        reason = "nested too deeply" if isinstance(error, RecursionError) else " ".join(str(error).split())
        raise ValueError(f"{what} {path!r} is not valid JSON: {reason}") from None


MAX_DIGITS = 20
"""The most digits of an integer in a model file (a weight is at most :data:`MAX_WEIGHT`, 13 digits)."""


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"it holds an integer of {len(text.lstrip('-')):,} digits; a weight has at most {MAX_DIGITS}")
    return int(text)


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

    def check_num_players(self, num_players: int) -> None:
        """Refuse, in one line (``ValueError``), a table of another size than the network's: it reads only the
        seats of a table of its size (:func:`agents.batched.neural.input_indices`), so elsewhere it would decide
        blind to the other seats. Harnesses call it before the first game; ``act`` and ``act_batch`` check every
        observation's table size as well."""
        n = self.network.num_players
        if num_players != n:
            raise ValueError(f"neural model {self.model_file} was trained for {n} players and reads only the seats "
                             f"of a {n}-player table; it does not play at a table of {num_players}: train one "
                             f"for {num_players} players (rules.num_players: {num_players})")

    def check_table(self, observations: np.ndarray) -> None:
        """:meth:`check_num_players` for the table size of every observation of a batch (float32 ``[k, OBS_SIZE]``)."""
        seats = observations[:, PLAYERS_AT:PLAYERS_AT + MAX_PLAYERS - MIN_PLAYERS + 1].argmax(axis=1) + MIN_PLAYERS
        other = seats[seats != self.network.num_players]
        if len(other):
            self.check_num_players(int(other[0]))

    def act(self, observation: dict) -> int:
        vector = np.ascontiguousarray(observation["observation"], dtype=np.float32)
        mask = np.ascontiguousarray(observation["action_mask"], dtype=bool).reshape(1, -1)
        self.check_table(vector.reshape(1, -1))
        return int(decide(vector, mask, 0, self.network.arrays))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The actions of a batch of observations (float32 ``[k, OBS_SIZE]``) and masks (bool ``[k, 145]``)."""
        observations = np.ascontiguousarray(observations, dtype=np.float32)
        masks = np.ascontiguousarray(masks, dtype=bool)
        self.check_table(observations)
        out = np.empty(len(observations), dtype=np.int64)
        decide_rows(observations, masks, self.network.arrays, out)
        return out


__all__ = ["SHIPPED_MODELS", "NeuralBot", "Network", "model_path", "network_from_dict", "read_model"]
