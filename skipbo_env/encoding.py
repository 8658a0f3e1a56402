"""The observation encoding: one fixed float32 vector for every table of 2-6 seats and every variant.

``encode_observation(game, seat)`` describes the position as ``seat`` sees it (its own hand,
everything public, nothing private of others); ``observe(game, seat)`` adds the action mask and
is the dict every policy's ``act`` receives; ``decode_observation(vec)`` turns a vector back
into a readable dict, so a bot needs nothing but the vector. The engine does not import this
module's callers; this module needs numpy only.

Seats are relative: seat block 0 is always "me", block 1 the seat on my left (who plays after
me), and so on in turn order. Blocks of seats that are not at the table are zero with
``present = 0``. In a partners game the partner's block has ``is_partner = 1``.

Every feature is stored as ``raw value * scale`` (scale 1 for flags and one-hot groups), so
``round(x / scale)`` recovers the exact integer. One-hot groups over card values use index
``value - 1`` (SKIP-BO = 13 is the last); an all-zero group means "no card".

``DISCARD_DEPTH = 8``: the top 8 cards of every discard pile are in the vector in order
(``discard_cards``, top card first); the cards below them, public too, are counted by value per
seat (``buried_discards_r``: every card under the top 8 of that seat's four piles), and like every
visible card removed from ``unseen``. What is left out is only the order of those buried cards
and which of the seat's piles each lies in (the pile sizes are there); ``Game.to_dict`` keeps it.

Layout (``OBS_SIZE = 812``; "x6" blocks repeat for relative seats 0-5, ``SEAT_BLOCK = 106``
values each, seat ``r`` starting at ``95 + 106 * r``; offsets inside a seat block are relative;
the turn-limit and buried-card features come after the seat blocks, see "Earlier layouts")::

    offset  size  scale    feature
    ------  ----  -------  ---------------------------------------------------------------
         0     5  1        num_players one-hot (index n - 2, n = 2..6)
         5     1  1        partners
         6     1  1        team_win_either (team_win == "either")
         7     1  1        team_stock_shared (team_stock == "shared")
         8     1  1        exhausted_draw_draw (exhausted_draw == "draw")
         9     1  1        decks
        10     1  1/30     stock_size (the deal size setting)
        11     1  1/1000   max_turns (0 = no limit)
        12     1  1/100    turn (turns completed in this hand)
        13     1  1/10     plays_this_turn
        14     1  1/6      quiet_turns
        15     1  1/162    draw_pile_size
        16     1  1/162    completed_size (cards in set-aside building piles)
        17    13  1/5      hand: my cards per value 1..13
        30    13  1/12..   unseen: copies per value 1..13 I cannot see (scale 1/12 for numbers,
                           1/18 for SKIP-BO: 1.0 = one deck's copies)
        43    48  1        building_next: 4 slots x one-hot of the value needed next (1..12)
        91     4  1/12     building_size: cards on each building slot (0 = empty slot)
    seat block (x6):
        +0     1  1        present (the seat is at the table)
        +1     1  1        is_partner
        +2     1  1        to_act (this seat acts now; all zero once the hand is over)
        +3    13  1        stock_top one-hot (all zero: stockpile empty)
       +16     1  1/30     stock_size
       +17     1  1/5      hand_size
       +18     4  1/10     discard_size per discard pile 0..3
       +22    52  1        discard_top: 4 piles x one-hot of the top card
       +74    32  1/13     discard_cards: 4 piles x DISCARD_DEPTH card values, top first, 0 = none
    after the seat blocks:
       731     1  1/100    max_turn_plays (the setting; 0 = no limit)
       732     1  1/100    turn_plays_left: plays left this turn, max_turn_plays - plays_this_turn
                           (0 = no limit, or the limit is reached)
       733     1  1        turn_play_limit_reached (no further play is legal this turn)
       734    13  1/12     buried_discards_0: my discard cards under the top DISCARD_DEPTH of
                           each pile, per value 1..13 (all four piles together)
       747    13  1/12     buried_discards_1: the same for relative seat 1
       760    13  1/12     buried_discards_2
       773    13  1/12     buried_discards_3
       786    13  1/12     buried_discards_4
       799    13  1/12     buried_discards_5 (absent seats: zero)

``unseen`` counts the cards whose place I cannot see: the draw pile, the other hands and the
stockpile cards under the tops. It is the deck minus my hand, every stockpile top, every
discard pile (all of it), the building piles and the completed piles.

Earlier layouts: this table is layout ``LAYOUT_VERSION = 3`` (``LAYOUT_SIZES`` has every version's size). The
first 731 entries are layout 1, before ``max_turn_plays`` existed, the first 734 layout 2, before the buried
discard cards were counted, unchanged (``PREFIX_LAYOUTS = (1, 2)``, ``EARLIER_OBS_SIZES = (731, 734)``), so a
saved model trained on an earlier layout reads the prefix of that size (``agents.saved_model`` accepts such a
model and ``agents.network.NetworkPolicy`` slices the vector). Every field has a name (``FIELDS``, the table's
names, ``seat<r>.<field>`` for a seat block's); a network that names the fields it reads (``agents.neural``)
reads them wherever a later layout puts them.

The observation box is the same for every table (so a saved model loads on any table): low 0,
high 1 for flags and one-hot groups, the largest float32 for the counts (they are unbounded:
``decks``, ``turn``).
"""

from __future__ import annotations

import numpy as np

from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.cards import NUM_BUILDING_PILES, NUM_DISCARD_PILES, NUM_VALUES, TOP_VALUE, deck_counts
from skipbo_env.game import IllegalActionError
from skipbo_env.rules import MAX_PLAYERS, MIN_PLAYERS

DISCARD_DEPTH = 8
MAX_SEATS = MAX_PLAYERS


class _Layout:
    """Allocates named ranges of the vector in order, with a scale per value."""

    def __init__(self) -> None:
        self.size = 0
        self.scales: list[float] = []
        self.one_hot: list[bool] = []
        self.rows: list[tuple[str, int, int]] = []
        self.seat_of: dict[str, int] = {}

    def add(self, name: str, size: int, scale: float | list[float] = 1.0, one_hot: bool = False,
            seat: int | None = None) -> int:
        """The field ``name`` of ``size`` values; ``seat``: the relative seat it describes (absent seats: zero)."""
        start = self.size
        self.scales.extend(scale if isinstance(scale, list) else [scale] * size)
        self.one_hot.extend([one_hot] * size)
        self.rows.append((name, start, size))
        if seat is not None:
            self.seat_of[name] = seat
        self.size += size
        return start


def seat_field(seat: int, name: str) -> str:
    """The layout's name of a seat block's field: ``seat_field(1, "hand_size")`` is ``"seat1.hand_size"``."""
    return f"seat{seat}.{name}"


def _build_layout() -> tuple[_Layout, dict[str, int], dict[str, int]]:
    layout = _Layout()
    glob = {
        "num_players": layout.add("num_players", MAX_PLAYERS - MIN_PLAYERS + 1, one_hot=True),
        "partners": layout.add("partners", 1, one_hot=True),
        "team_win_either": layout.add("team_win_either", 1, one_hot=True),
        "team_stock_shared": layout.add("team_stock_shared", 1, one_hot=True),
        "exhausted_draw_draw": layout.add("exhausted_draw_draw", 1, one_hot=True),
        "decks": layout.add("decks", 1),
        "stock_size": layout.add("stock_size", 1, 1 / 30),
        "max_turns": layout.add("max_turns", 1, 1 / 1000),
        "turn": layout.add("turn", 1, 1 / 100),
        "plays_this_turn": layout.add("plays_this_turn", 1, 1 / 10),
        "quiet_turns": layout.add("quiet_turns", 1, 1 / 6),
        "draw_pile_size": layout.add("draw_pile_size", 1, 1 / 162),
        "completed_size": layout.add("completed_size", 1, 1 / 162),
        "hand": layout.add("hand", NUM_VALUES, 1 / 5),
        "unseen": layout.add("unseen", NUM_VALUES, [1 / c for c in deck_counts(1)[1:]]),
        "building_next": layout.add("building_next", NUM_BUILDING_PILES * TOP_VALUE, one_hot=True),
        "building_size": layout.add("building_size", NUM_BUILDING_PILES, 1 / 12),
    }
    seat_fields: dict[str, int] = {}
    for seat in range(MAX_SEATS):
        base = layout.size
        fields = {
            "present": layout.add(seat_field(seat, "present"), 1, one_hot=True, seat=seat),
            "is_partner": layout.add(seat_field(seat, "is_partner"), 1, one_hot=True, seat=seat),
            "to_act": layout.add(seat_field(seat, "to_act"), 1, one_hot=True, seat=seat),
            "stock_top": layout.add(seat_field(seat, "stock_top"), NUM_VALUES, one_hot=True, seat=seat),
            "stock_size": layout.add(seat_field(seat, "stock_size"), 1, 1 / 30, seat=seat),
            "hand_size": layout.add(seat_field(seat, "hand_size"), 1, 1 / 5, seat=seat),
            "discard_size": layout.add(seat_field(seat, "discard_size"), NUM_DISCARD_PILES, 1 / 10, seat=seat),
            "discard_top": layout.add(seat_field(seat, "discard_top"), NUM_DISCARD_PILES * NUM_VALUES, one_hot=True,
                                      seat=seat),
            "discard_cards": layout.add(seat_field(seat, "discard_cards"), NUM_DISCARD_PILES * DISCARD_DEPTH, 1 / 13,
                                        seat=seat),
        }
        if seat == 0:
            seat_fields = {name: start - base for name, start in fields.items()}
    glob["max_turn_plays"] = layout.add("max_turn_plays", 1, 1 / 100)
    glob["turn_plays_left"] = layout.add("turn_plays_left", 1, 1 / 100)
    glob["turn_play_limit_reached"] = layout.add("turn_play_limit_reached", 1, one_hot=True)
    for seat in range(MAX_SEATS):
        glob[f"buried_discards_{seat}"] = layout.add(f"buried_discards_{seat}", NUM_VALUES, 1 / 12, seat=seat)
    return layout, glob, seat_fields


_LAYOUT, GLOBAL_OFFSETS, SEAT_OFFSETS = _build_layout()
OBS_SIZE = _LAYOUT.size
LAYOUT_VERSION = 3
"""The version of the layout table: it moves with every change of the table (a field added, moved, removed,
resized or rescaled). A saved model of the project's SB3 format, which reads raw positions, records it and loads
only on its own layout or on a prefix layout (:data:`PREFIX_LAYOUTS`); the neural format names its inputs by field
instead (``agents.neural``), so it loads on any layout that has its fields."""
LAYOUT_SIZES = {1: 731, 2: 734, 3: 812}
"""The vector size of every layout version (a model file that records only its size is of the version of it)."""
PREFIX_LAYOUTS = (1, 2)
"""The earlier layout versions whose vector is a prefix of this one's (module docstring, "Earlier layouts"): a
model of one of them reads that prefix. A layout that moves or removes a field has none."""
EARLIER_OBS_SIZES = tuple(LAYOUT_SIZES[version] for version in PREFIX_LAYOUTS)
"""Sizes of the :data:`PREFIX_LAYOUTS`, each a prefix of this one."""
SEAT_BLOCK = SEAT_OFFSETS["discard_cards"] + NUM_DISCARD_PILES * DISCARD_DEPTH
SEAT_START = GLOBAL_OFFSETS["building_size"] + NUM_BUILDING_PILES
SCALE = np.array(_LAYOUT.scales, dtype=np.float32)
OBS_LOW = np.zeros(OBS_SIZE, dtype=np.float32)
OBS_HIGH = np.where(np.array(_LAYOUT.one_hot), np.float32(1.0), np.finfo(np.float32).max).astype(np.float32)
LAYOUT_ROWS = tuple(_LAYOUT.rows)
"""(name, offset, size) of every field, in vector order; the module docstring's table."""
FIELDS = {name: (start, size) for name, start, size in LAYOUT_ROWS}
"""The layout table by field name: ``FIELDS["seat1.hand_size"]`` is its ``(offset, size)``. A network names what it
reads by these names (``agents.neural``), so it reads the same values wherever the layout puts them."""
FIELD_SEATS = dict(_LAYOUT.seat_of)
"""The relative seat each seat field describes (a seat block's fields and ``buried_discards_<seat>``)."""

_G = GLOBAL_OFFSETS
_S = SEAT_OFFSETS
_SEAT_BASES = [SEAT_START + SEAT_BLOCK * r for r in range(MAX_SEATS)]
_HAND = _G["hand"]
_BUILDING_NEXT = [_G["building_next"] + TOP_VALUE * slot for slot in range(NUM_BUILDING_PILES)]
_BUILDING_SIZE = [_G["building_size"] + slot for slot in range(NUM_BUILDING_PILES)]
_STOCK_TOP = [base + _S["stock_top"] - 1 for base in _SEAT_BASES]  # + card value
_HAND_SIZE = [base + _S["hand_size"] for base in _SEAT_BASES]
_TO_ACT = [base + _S["to_act"] for base in _SEAT_BASES]
_DISCARD_TOP = [[base + _S["discard_top"] + NUM_VALUES * p - 1 for p in range(NUM_DISCARD_PILES)]
                for base in _SEAT_BASES]  # + card value
_DISCARD_CARDS = [[base + _S["discard_cards"] + DISCARD_DEPTH * p for p in range(NUM_DISCARD_PILES)]
                  for base in _SEAT_BASES]
_BUILDING_AT = list(zip(_BUILDING_NEXT, _BUILDING_SIZE))
_DISCARDS_AT = [list(zip(tops, cards)) for tops, cards in zip(_DISCARD_TOP, _DISCARD_CARDS)]
_SHOWN_STOP = -DISCARD_DEPTH - 1  # pile[:_SHOWN_STOP:-1]: the top DISCARD_DEPTH cards, top first
_UNSEEN = slice(_G["unseen"], _G["unseen"] + NUM_VALUES)
_BURIED = [_G[f"buried_discards_{r}"] for r in range(MAX_SEATS)]
_BURIED_START = _BURIED[0]


def field_indices(names) -> np.ndarray:
    """The vector indices of the fields ``names`` (of :data:`FIELDS`), field after field; ``KeyError`` for a name
    the layout does not have."""
    index = [np.arange(FIELDS[name][0], FIELDS[name][0] + FIELDS[name][1]) for name in names]
    return np.concatenate(index).astype(np.int64) if index else np.zeros(0, dtype=np.int64)


def table_fields(num_players: int) -> tuple[str, ...]:
    """The fields a table of ``num_players`` seats can set, in vector order: all but the seat fields of the absent
    seats (their blocks and buried-card counts), which are always zero there."""
    return tuple(name for name, _, _ in LAYOUT_ROWS if FIELD_SEATS.get(name, 0) < num_players)


def table_inputs(num_players: int) -> np.ndarray:
    """Indices of the observation values a table of ``num_players`` seats can set (:func:`table_fields`). A network
    for one table size may read only these (``training`` does); it plays the same on the whole vector with zero
    weights for the rest."""
    return field_indices(table_fields(num_players))


def _buried_counts(piles) -> np.ndarray | None:
    """Cards per value 1..13 under the top ``DISCARD_DEPTH`` of each pile (``None`` when there are none)."""
    buried = [card for pile in piles if len(pile) > DISCARD_DEPTH for card in pile[:-DISCARD_DEPTH]]
    if not buried:
        return None
    return np.bincount(np.asarray(buried, dtype=np.intp), minlength=NUM_VALUES + 1)[1:]
_HAND_SLICE = slice(_HAND, _HAND + NUM_VALUES)


def _counter_index(num_players: int) -> np.ndarray:
    """Where the counters that may exceed 255 go, in the order ``encode_observation`` lists them."""
    index = [_G[name] for name in ("turn", "plays_this_turn", "quiet_turns", "draw_pile_size", "completed_size",
                                   "turn_plays_left")]
    for base in _SEAT_BASES[:num_players]:
        index.append(base + _S["stock_size"])
        index.extend(base + _S["discard_size"] + p for p in range(NUM_DISCARD_PILES))
    return np.array(index, dtype=np.intp)


_COUNTER_INDEX = {n: _counter_index(n) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}


class _TableConstants:
    """What depends only on the rules: the template of constant features, computed once per Rules."""

    __slots__ = ("rules", "template", "deck", "stock_seats", "counter_index")

    def __init__(self, rules) -> None:
        n = rules.num_players
        template = bytearray(OBS_SIZE)
        template[_G["num_players"] + n - MIN_PLAYERS] = 1
        template[_G["partners"]] = rules.partners
        template[_G["team_win_either"]] = rules.team_win == "either"
        template[_G["team_stock_shared"]] = rules.team_stock == "shared"
        template[_G["exhausted_draw_draw"]] = rules.exhausted_draw == "draw"
        for base in _SEAT_BASES[:n]:
            template[base + _S["present"]] = 1
        if rules.partners:
            template[_SEAT_BASES[n // 2] + _S["is_partner"]] = 1
        self.rules = rules
        self.template = bytes(template)
        self.deck = np.array(deck_counts(rules.decks)[1:], dtype=np.int64)
        shared = rules.team_stock == "shared"
        self.stock_seats = [s for s in range(n) if not shared or rules.team_of(s) == s]
        self.counter_index = np.concatenate(
            [np.array([_G["decks"], _G["stock_size"], _G["max_turns"], _G["max_turn_plays"]], dtype=np.intp),
             _COUNTER_INDEX[n]])


_CACHE_SIZE = 16
_constants_cache: dict[int, _TableConstants] = {}


def _constants(rules) -> _TableConstants:
    """The table constants of ``rules``, cached by identity (each entry keeps its Rules alive)."""
    constants = _constants_cache.get(id(rules))
    if constants is None or constants.rules is not rules:
        if len(_constants_cache) >= _CACHE_SIZE:
            _constants_cache.clear()
        constants = _constants_cache[id(rules)] = _TableConstants(rules)
    return constants


def encode_observation(game, seat: int) -> np.ndarray:
    """The position as ``seat`` sees it: a new float32 vector of ``OBS_SIZE`` (layout above).

    Small values (flags, one-hot entries, card values, hand and building sizes) are written into
    a byte buffer; the counters that may exceed 255 go through one list; ``unseen`` is one
    numpy subtraction. Everything is then scaled at once.
    """
    table = _constants(game.rules)
    rules = table.rules
    n = game.num_players
    if not 0 <= seat < n:
        raise ValueError(f"seat={seat!r} is not a seat of this game: use 0 to {n - 1}")
    small = bytearray(table.template)
    limit = rules.max_turn_plays or 0
    plays_left = max(limit - game.plays_this_turn, 0)
    small[_G["turn_play_limit_reached"]] = limit > 0 and plays_left == 0
    counters = [rules.decks, rules.stock_size, rules.max_turns or 0, limit, game.turn, game.plays_this_turn,
                game.quiet_turns, len(game.draw_pile), len(game.completed), plays_left]
    small[_HAND:_HAND + NUM_VALUES] = game.hand_counts[seat][1:]
    if game.outcome is None:
        small[_TO_ACT[(game.current_seat - seat) % n]] = 1
    seen = game.completed[:]
    for pile, (next_at, size_at) in zip(game.building, _BUILDING_AT):
        if pile:
            size = len(pile)
            small[next_at + size] = 1
            small[size_at] = size
            seen += pile
        else:
            small[next_at] = 1
    stocks = game.stocks
    for s in table.stock_seats:
        if stocks[s]:
            seen.append(stocks[s][-1])
    hand_sizes = game.hand_sizes
    discards = game.discards
    buried = []
    for r in range(n):
        s = seat + r
        if s >= n:
            s -= n
        stock = stocks[s]
        if stock:
            small[_STOCK_TOP[r] + stock[-1]] = 1
        small[_HAND_SIZE[r]] = hand_sizes[s]
        counters.append(len(stock))
        piles = discards[s]
        counters += map(len, piles)
        for pile, (top_at, cards_at) in zip(piles, _DISCARDS_AT[r]):
            if pile:
                seen += pile
                small[top_at + pile[-1]] = 1
                shown = pile[:_SHOWN_STOP:-1]
                small[cards_at:cards_at + len(shown)] = shown
                if len(pile) > DISCARD_DEPTH:
                    buried.append(r)
    vec = np.array(small, dtype=np.float32)
    vec[table.counter_index] = counters
    for r in dict.fromkeys(buried):
        vec[_BURIED[r]:_BURIED[r] + NUM_VALUES] = _buried_counts(discards[(seat + r) % n])
    seen_counts = np.bincount(np.frombuffer(bytes(seen), dtype=np.uint8), minlength=NUM_VALUES + 1)
    vec[_UNSEEN] = table.deck - seen_counts[1:]
    vec[_UNSEEN] -= vec[_HAND_SLICE]
    vec *= SCALE
    return vec


def action_mask(game, seat: int) -> np.ndarray:
    """int8[145]: 1 for each legal id when ``seat`` is to act, all zero otherwise."""
    if game.outcome is None and game.current_seat == seat:
        return np.frombuffer(bytearray(game.legal_mask()), dtype=np.int8)
    return np.zeros(NUM_ACTIONS, dtype=np.int8)


def as_action_id(action) -> int:
    """An action as a Python int (numpy integers and 0-d arrays accepted), or ``IllegalActionError``."""
    if isinstance(action, np.ndarray) and action.shape == ():
        action = action.item()
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
        raise IllegalActionError(f"{action!r} is not an action id: use an integer from 0 to {NUM_ACTIONS - 1}")
    return int(action)


def observe(game, seat: int) -> dict:
    """The policy input: ``{"observation": encode_observation(game, seat), "action_mask": int8[145]}``."""
    return {"observation": encode_observation(game, seat), "action_mask": action_mask(game, seat)}


# ---------------------------------------------------------------------- decoding
def decode_observation(vec) -> dict:
    """A readable dict of everything in the vector (keys listed in the module docstring's contract).

    Seats are relative as in the vector: ``seats[0]`` is me, ``seats[1]`` the seat on my left.
    ``discards`` hold only the top ``DISCARD_DEPTH`` cards of each pile, bottom to top;
    ``buried_counts[v]`` counts the seat's cards of value ``v`` below them. The
    dict ``observe`` returns is accepted too.
    """
    if isinstance(vec, dict):
        vec = vec["observation"]
    vec = np.asarray(vec, dtype=np.float64)
    if vec.shape != (OBS_SIZE,):
        raise ValueError(f"an observation vector has shape ({OBS_SIZE},), got {vec.shape}")
    raw = np.rint(vec / SCALE).astype(np.int64).tolist()
    n = int(np.argmax(vec[_G["num_players"]:_G["num_players"] + MAX_PLAYERS - MIN_PLAYERS + 1])) + MIN_PLAYERS
    hand_counts = [0] + raw[_G["hand"]:_G["hand"] + NUM_VALUES]
    seats = [_decode_seat(raw, r) for r in range(n)]
    partner = next((r for r, info in enumerate(seats) if info["is_partner"]), None)
    to_act = next((r for r, info in enumerate(seats) if info["to_act"]), None)
    return {
        "num_players": n,
        "partners": bool(raw[_G["partners"]]),
        "team_win": "either" if raw[_G["team_win_either"]] else "both",
        "team_stock": "shared" if raw[_G["team_stock_shared"]] else "own",
        "exhausted_draw": "draw" if raw[_G["exhausted_draw_draw"]] else "play_on",
        "stock_size": raw[_G["stock_size"]],
        "decks": raw[_G["decks"]],
        "max_turns": raw[_G["max_turns"]] or None,
        "max_turn_plays": raw[_G["max_turn_plays"]] or None,
        "hand": decode_hand(vec),
        "hand_counts": hand_counts,
        "building_next": [_one_hot_value(raw, _BUILDING_NEXT[slot] - 1, TOP_VALUE) or 1
                          for slot in range(NUM_BUILDING_PILES)],
        "building_sizes": [raw[i] for i in _BUILDING_SIZE],
        "seats": seats,
        "partner": partner,
        "to_act": to_act,
        "draw_pile_size": raw[_G["draw_pile_size"]],
        "completed_size": raw[_G["completed_size"]],
        "unseen_counts": [0] + raw[_UNSEEN],
        "plays_this_turn": raw[_G["plays_this_turn"]],
        "turn_plays_left": raw[_G["turn_plays_left"]],
        "turn_play_limit_reached": bool(raw[_G["turn_play_limit_reached"]]),
        "quiet_turns": raw[_G["quiet_turns"]],
        "turn": raw[_G["turn"]],
    }


def decode_hand(vec) -> list[int]:
    """The hand in the vector, ascending (``decode_observation(vec)["hand"]`` without decoding the rest)."""
    if isinstance(vec, dict):
        vec = vec["observation"]
    counts = np.rint(np.asarray(vec[_HAND_SLICE], dtype=np.float64) / SCALE[_HAND_SLICE]).astype(np.int64).tolist()
    return [value for value, count in enumerate(counts, start=1) for _ in range(count)]


def _one_hot_value(raw: list[int], before_first: int, size: int) -> int:
    """The value ``v`` (1..size) whose entry ``before_first + v`` is set, or 0 when none is."""
    for v in range(1, size + 1):
        if raw[before_first + v]:
            return v
    return 0


def _decode_seat(raw: list[int], r: int) -> dict:
    base = _SEAT_BASES[r]
    discards = []
    for p in range(NUM_DISCARD_PILES):
        start = base + _S["discard_cards"] + DISCARD_DEPTH * p
        shown = [card for card in raw[start:start + DISCARD_DEPTH] if card]
        discards.append(shown[::-1])
    return {
        "stock_top": _one_hot_value(raw, base + _S["stock_top"] - 1, NUM_VALUES),
        "stock_size": raw[base + _S["stock_size"]],
        "hand_size": raw[base + _S["hand_size"]],
        "discards": discards,
        "discard_sizes": raw[base + _S["discard_size"]:base + _S["discard_size"] + NUM_DISCARD_PILES],
        "buried_counts": [0] + raw[_BURIED[r]:_BURIED[r] + NUM_VALUES],
        "is_partner": bool(raw[base + _S["is_partner"]]),
        "to_act": bool(raw[base + _S["to_act"]]),
    }


# ---------------------------------------------------------------------- global state
STATE_HAND_SCALE = 1 / 5
STATE_STOCK_SCALE = 1 / 30
STATE_SIZE = OBS_SIZE + MAX_SEATS * 2 * NUM_VALUES + NUM_VALUES
"""Size of :func:`encode_state`'s vector (PettingZoo's ``state()``)."""


def encode_state(game) -> np.ndarray:
    """The whole position, private cards included, as one float32 vector (PettingZoo's ``state()``).

    Layout (``STATE_SIZE = OBS_SIZE + 169``), seats absolute (seat 0 first, absent seats zero)::

        offset            size  scale    feature
        0                 OBS   as above encode_observation(game, 0): everything public, seat 0's hand
        OBS + 26 * s        13  1/5      hand of seat s: cards per value 1..13   (s = 0..5)
        OBS + 26 * s + 13   13  1/30     stockpile of seat s: cards per value 1..13, the top included
        OBS + 156           13  1/12..   draw pile: cards per value 1..13 (scales of ``unseen``)

    Left out: the order of the cards in the stockpiles and the draw pile (what the next draws
    and the next stockpile tops will be), and the order of buried discard cards beyond what the
    observation carries. Whose turn it is stands in seat 0's observation (``to_act``).
    """
    vec = np.zeros(STATE_SIZE, dtype=np.float32)
    vec[:OBS_SIZE] = encode_observation(game, 0)
    start = OBS_SIZE
    for seat in range(game.num_players):
        vec[start:start + NUM_VALUES] = np.asarray(game.hand_counts[seat][1:]) * STATE_HAND_SCALE
        counts = np.bincount(np.asarray(game.stocks[seat], dtype=np.intp), minlength=NUM_VALUES + 1)[1:]
        vec[start + NUM_VALUES:start + 2 * NUM_VALUES] = counts * STATE_STOCK_SCALE
        start += 2 * NUM_VALUES
    draw = np.bincount(np.asarray(game.draw_pile, dtype=np.intp), minlength=NUM_VALUES + 1)[1:]
    vec[-NUM_VALUES:] = draw * SCALE[_UNSEEN]
    return vec


STATE_HIGH = np.concatenate([OBS_HIGH, np.full(STATE_SIZE - OBS_SIZE, np.finfo(np.float32).max, dtype=np.float32)])


def layout_table() -> str:
    """The layout as text rows ``offset size name``, generated from the code (tests compare it to the docstring)."""
    return "\n".join(f"{start:6d} {size:5d}  {name}" for name, start, size in LAYOUT_ROWS)


__all__ = [
    "DISCARD_DEPTH", "EARLIER_OBS_SIZES", "FIELDS", "FIELD_SEATS", "LAYOUT_ROWS", "LAYOUT_SIZES", "LAYOUT_VERSION",
    "MAX_SEATS", "OBS_HIGH", "OBS_LOW", "OBS_SIZE", "PREFIX_LAYOUTS", "SCALE", "SEAT_BLOCK", "SEAT_START",
    "STATE_HIGH", "STATE_SIZE", "action_mask", "as_action_id", "decode_hand", "decode_observation",
    "encode_observation", "encode_state", "field_indices", "layout_table", "observe", "seat_field", "table_fields",
    "table_inputs",
]
