"""``neural``: the planner's whole-turn search with a neural network's value of where a turn stops, as kernels.

The bot reads nothing but the observation vector (``skipbo_env.encoding``) and the legal mask, so the
same kernel decides for the rules engine (one vector, ``agents.neural.NeuralBot.act``) and for a whole
batch of the batched engine (``act_batch``): the two engines play the same games for a seed.

**What the network values.** A *stop* is a position where the seat could stop playing this turn: the
observation as it would read after a sequence of plays, with the discard still to make (the input
``pending_discard`` is 1). A *turn end* is the position after the discard (``pending_discard`` 0). Both are
encoded as the observation encodes a position (:data:`INPUTS`: the values a table of this size can set,
less the turn counters, which say nothing about who wins), from the seat's own view, and the network gives
the logit of the chance that the seat wins the hand from there. What the seat cannot know yet is entered
as its expectation from the ``unseen`` counts: the stockpile card under a played top, and the cards drawn
after the hand is emptied. Cards under the top ``DISCARD_DEPTH`` of a discard pile do not come into view
in the search.

**How it decides.** The search is the planner's, built from the turn-search library (:mod:`agents.batched.search`): every
sequence of plays from the visible cards, the same order, the same memo; the worth of stopping in a search
position is the network's value of that stop, its discard still to make (a stop with an empty hand and
nothing to draw is the turn's end). The search first lists every stop it reaches (:func:`search_stops`),
each stop's first-layer sums derived from the stop one play before by what that play changes; the network
then values them in one batch, and the best value reachable from each stop is carried back along the
search's links (:func:`best_first_play`). When stopping is best (or nothing can be played) the discard is
the legal one whose turn end the network values most (ties: the lowest id), the turn ends valued in one
batch too.

**Exact arithmetic.** The network runs in 64-bit integers (``agents.neural`` quantizes the trained
float weights): its first layer is updated from the stop before by the few inputs a play changes, and
every sum is exact, so neither the order of the additions nor the path to a stop changes a decision
(``tests/agents/test_neural_search.py`` holds the bot to the moves it made when each stop was derived
from the root).

The inputs a plan changes are written as ``(input, new value)`` pairs; an input's integer value is the
observation's raw integer (``round(x / scale)``) times :data:`SUBUNITS` for the inputs that can hold an
expectation (hand counts, stockpile tops), times 1 for the rest.
"""

from __future__ import annotations

import numpy as np

from skipbo_env.actions import (
    DISCARD_SOURCE, END_TURN, FIRST_DISCARD, PARTNER_DISCARD_SOURCE, PARTNER_STOCK_SOURCE, STOCK_SOURCE,
)
from skipbo_env.cards import HAND_SIZE, NUM_BUILDING_PILES, NUM_DISCARD_PILES, NUM_VALUES, TOP_VALUE, WILD
from skipbo_env.encoding import (
    DISCARD_DEPTH, FIELDS, GLOBAL_OFFSETS, MAX_SEATS, OBS_SIZE, SCALE, SEAT_BLOCK, SEAT_OFFSETS, SEAT_START,
    seat_field, table_fields,
)
from skipbo_env.vector.jit import discard_value_of, exact_sum_jit, jit, pile_of, source_of
from agents.batched.search import (
    EMPTY, I_CAN_DRAW, I_EITHER, I_HAND_SIZE, I_PARTNER_SEAT, I_PARTNER_SIZE, I_PARTNER_TOP, I_PARTNERS,
    I_PILE_CARDS, I_SHARED, I_STOCK_SIZE, I_STOCK_TOP, MAX_MOVES, MEMO_START, TIE_MARGIN, cards_in, legal_counts,
    list_moves, memo_grown, memo_slot, play_into, position_arrays, position_key, root_rank, sorted_needs,
)
from agents.planner_weights import WIN

NAME = "neural"
SUBUNITS = 64
"""The integer steps of one card in the inputs that can hold an expectation (hand counts, stockpile tops)."""
FIRST_SHIFT = 8
"""The first layer's sums are in units of 2**-20; its outputs, after the ReLU, are shifted to units of 2**-12."""
SECOND_SHIFT = 12
"""The second layer's sums are in units of 2**-24; shifted to units of 2**-12 after its ReLU."""
OUTPUT_UNIT = 2.0 ** -24
"""The output layer's sums are in units of 2**-24 of a logit."""
FIRST_BITS, SECOND_BITS, OUTPUT_BITS = 20, 12, 12
"""Fractional bits of the quantized weights: first layer (per raw input unit), second layer, output layer."""

TURN_COUNTERS = ("turn", "plays_this_turn", "quiet_turns", "turn_plays_left", "turn_play_limit_reached")
"""Observation values the network does not read: counters of the turn and the hand's length, the same for
every stop of a turn (and the seats' ``to_act`` flags)."""

_G, _S = GLOBAL_OFFSETS, SEAT_OFFSETS
HAND_AT = _G["hand"]
UNSEEN_AT = _G["unseen"]
BUILDING_NEXT_AT = _G["building_next"]
BUILDING_SIZE_AT = _G["building_size"]
DRAW_AT = _G["draw_pile_size"]
COMPLETED_AT = _G["completed_size"]
PARTNERS_AT = _G["partners"]
SHARED_AT = _G["team_stock_shared"]
EITHER_AT = _G["team_win_either"]
NUM_PLAYERS_AT = _G["num_players"]
BURIED_AT = _G["buried_discards_0"]
STOCK_TOP_AT = _S["stock_top"]
STOCK_SIZE_AT = _S["stock_size"]
HAND_SIZE_AT = _S["hand_size"]
DISCARD_SIZE_AT = _S["discard_size"]
DISCARD_TOP_AT = _S["discard_top"]
DISCARD_CARDS_AT = _S["discard_cards"]
EXTRA_INPUTS = {"pending_discard": OBS_SIZE}
"""The inputs that are not observation fields, by name, and the index each takes after the observation's values
(``input_of`` has one entry per observation value, then one per extra input): ``pending_discard``, 1 at a stop
whose discard is still to make, 0 at a turn end."""
PENDING = EXTRA_INPUTS["pending_discard"]
"""The index of the extra input ``pending_discard``."""
INPUT_SLOTS = OBS_SIZE + len(EXTRA_INPUTS)
"""The length of ``input_of``: every observation value, then every extra input."""


def input_fields(num_players: int) -> tuple[str, ...]:
    """The names of what the network of a ``num_players`` table reads, in the order of its first layer's rows: the
    fields the table can set (``skipbo_env.encoding.table_fields``) less :data:`TURN_COUNTERS` and the seats'
    ``to_act`` flags, then the :data:`EXTRA_INPUTS`."""
    skipped = set(TURN_COUNTERS) | {seat_field(seat, "to_act") for seat in range(MAX_SEATS)}
    return tuple(name for name in table_fields(num_players) if name not in skipped) + tuple(EXTRA_INPUTS)


def input_size(name: str) -> int:
    """How many values the input ``name`` (an observation field or an extra input) has; ``KeyError`` for another."""
    return 1 if name in EXTRA_INPUTS else FIELDS[name][1]


def field_inputs(names) -> np.ndarray:
    """The indices of the inputs ``names`` today (fields through the encoding's layout table, then
    :data:`EXTRA_INPUTS`), name after name: what the kernels' ``input_of`` maps to the first layer's rows."""
    index = [[EXTRA_INPUTS[name]] if name in EXTRA_INPUTS else range(FIELDS[name][0], sum(FIELDS[name]))
             for name in names]
    return np.array([i for part in index for i in part], dtype=np.int64)


def input_indices(num_players: int) -> np.ndarray:
    """The indices of :func:`input_fields` (the observation's values the network reads, then :data:`PENDING`)."""
    return field_inputs(input_fields(num_players))


def expectation_inputs() -> np.ndarray:
    """bool[INPUT_SLOTS]: the values that can hold an expectation (stored times :data:`SUBUNITS`)."""
    out = np.zeros(INPUT_SLOTS, dtype=bool)
    out[HAND_AT:HAND_AT + NUM_VALUES] = True
    for rel in range(MAX_SEATS):
        start = SEAT_START + SEAT_BLOCK * rel + STOCK_TOP_AT
        out[start:start + NUM_VALUES] = True
    return out


MULTIPLIER = np.where(expectation_inputs(), SUBUNITS, 1).astype(np.int64)
"""int64[INPUT_SLOTS]: what an input's raw integer is multiplied by."""
RAW_PER_VALUE = np.concatenate([1.0 / SCALE.astype(np.float64), np.ones(len(EXTRA_INPUTS))])
"""float64[INPUT_SLOTS]: raw integer per unit of the observation's value."""
INPUT_SCALE = np.concatenate([SCALE.astype(np.float64), np.ones(len(EXTRA_INPUTS))]) / MULTIPLIER
"""float64[INPUT_SLOTS]: the observation's value per integer step of an input (what the float network reads)."""


# ---------------------------------------------------------------------------------- the network
@jit
def add_changes(sums, first, changed_at, changed_by, count):
    """``sums`` += ``changed_by[k]`` times row ``changed_at[k]`` of ``first``, for each of the ``count`` changes."""
    for k in range(count):
        row = changed_at[k]
        step = changed_by[k]
        for h in range(sums.shape[0]):
            sums[h] += first[row, h] * step


@jit
def network_value(sums, second, second_bias, output, output_bias, work):
    """The logit of the first layer's sums ``sums`` (int64, units 2**-20), through both later layers (``work``:
    room for the second layer's outputs). Every sum is of integers, so any order of the additions gives it
    (the loops are written to let the compiler use vector instructions)."""
    hidden = work
    for j in range(second.shape[0]):
        total = second_bias[j]
        for h in range(sums.shape[0]):
            total += second[j, h] * (max(sums[h], 0) >> FIRST_SHIFT)
        hidden[j] = max(total, 0) >> SECOND_SHIFT
    out = output_bias
    for j in range(second.shape[0]):
        out += output[j] * hidden[j]
    return out * OUTPUT_UNIT


EXACT_FLOAT = 2 ** 52
"""Integers below this are exact in float64, and so is every sum of them that stays below it."""


@jit
def exact_below_of(second, second_bias):
    """The first-layer output below which every float64 sum of the second layer (``second[unit, input]``, its
    bias ``second_bias``) is an exact integer, in any order (see :func:`network_values`)."""
    widest = 0  # the largest sum of a second-layer unit's weight magnitudes
    largest_bias = 0
    for j in range(second.shape[0]):
        total = 0
        for h in range(second.shape[1]):
            total += abs(second[j, h])
        widest = max(widest, total)
        largest_bias = max(largest_bias, abs(second_bias[j]))
    return (EXACT_FLOAT - largest_bias) // max(widest, 1) if largest_bias < EXACT_FLOAT else 0


@jit
def float_layers(net):
    """What :func:`float_value` needs of a network, worked out once: the second layer's weights as float64,
    transposed (a first-layer output's row), and :func:`exact_below_of` it."""
    second, second_bias = net[2], net[3]
    return np.ascontiguousarray(second.T.astype(np.float64)), exact_below_of(second, second_bias)


@jit
def float_value(sums, net, weights, exact_below, outputs, totals, work):
    """:func:`network_value` of the first layer's sums ``sums``, its second layer in float64 where that is exact
    (``weights, exact_below``: :func:`float_layers`; ``outputs``, ``totals``, ``work``: room for a first-layer
    output, a second-layer total and a second-layer output per unit)."""
    first, first_bias, second, second_bias, output, output_bias, input_of = net
    largest = 0
    for h in range(sums.shape[0]):
        outputs[h] = max(sums[h], 0) >> FIRST_SHIFT
        largest = max(largest, outputs[h])
    if largest >= exact_below:
        return network_value(sums, second, second_bias, output, output_bias[0], work)
    for j in range(totals.shape[0]):
        totals[j] = second_bias[j]
    for h in range(outputs.shape[0]):
        if outputs[h]:  # after the ReLU, about half are zero
            a = np.float64(outputs[h])
            for j in range(totals.shape[0]):
                totals[j] += weights[h, j] * a
    out = output_bias[0]
    for j in range(totals.shape[0]):
        out += output[j] * (max(np.int64(totals[j]), 0) >> SECOND_SHIFT)
    return out * OUTPUT_UNIT


BLOCK = 4
"""Positions :func:`network_values` runs through the second layer together (:func:`block_logits`'s four sums a
unit), each weight read once for all."""


@jit
def unit_layers(net):
    """What :func:`network_values` needs of a network: the second layer's weights as float64, a row a unit, its
    bias and the output layer's weights, each with a unit of zeros added when their count is odd (it sums two
    units at a time); and :func:`exact_below_of` the second layer."""
    second, second_bias, output = net[2], net[3], net[4]
    count = second.shape[0]
    units = count + count % 2
    by_unit = np.zeros((units, second.shape[1]), dtype=np.float64)
    bias = np.zeros(units, dtype=np.int64)
    out = np.zeros(units, dtype=np.int64)
    by_unit[:count] = second
    bias[:count] = second_bias
    out[:count] = output
    return by_unit, bias, out, exact_below_of(second, second_bias)


@jit
def network_values(sums, count, net, layers, values):
    """``values[i]`` := the logit of the first-layer sums ``sums[i]``, for the first ``count`` rows: a batch of
    positions valued in one call, as :func:`network_value` values one (``layers``: :func:`unit_layers` of
    ``net``, worked out once for many decisions). The second layer runs in float64 where
    that is exact: its weights and the first layer's outputs are integers, and when no sum of their products
    (its bias included) can reach :data:`EXACT_FLOAT`, every float64 sum, in any order, is the integer sum (a
    block with a row that could go past it is valued in integers). It runs :data:`BLOCK` rows and two
    second-layer units at a time, each a dot product over the first layer's outputs: eight sums that read each
    weight once for four rows and each output once for two units."""
    first, first_bias, second, second_bias, output, output_bias, input_of = net
    by_unit, unit_bias, unit_output_weights, exact_below = layers
    outputs = np.zeros((BLOCK, sums.shape[1]), dtype=np.float64)
    work = np.empty(second.shape[0], dtype=np.int64)
    for start in range(0, count, BLOCK):
        rows = min(BLOCK, count - start)
        if not block_outputs(sums, start, rows, exact_below, outputs):
            for i in range(start, start + rows):
                values[i] = network_value(sums[i], second, second_bias, output, output_bias[0], work)
            continue
        logits = block_logits(outputs, by_unit, unit_bias, unit_output_weights, output_bias[0])
        for k in range(rows):
            values[start + k] = logits[k] * OUTPUT_UNIT


@jit
def block_outputs(sums, start, rows, exact_below, outputs):
    """``outputs[k]`` := the first layer's outputs of row ``start + k`` of ``sums`` as float64 (rows past
    ``rows``: zeros); whether every one is below ``exact_below`` (the block's float sums are then exact)."""
    largest = 0
    for k in range(rows):
        for h in range(sums.shape[1]):
            output = max(sums[start + k, h], 0) >> FIRST_SHIFT
            largest = max(largest, output)
            outputs[k, h] = output
    outputs[rows:] = 0
    return largest < exact_below


@exact_sum_jit
def block_logits(outputs, by_unit, second_bias, output, output_bias):
    """The integer logits of the :data:`BLOCK` rows of first-layer outputs ``outputs``, two second-layer units at
    a time (:func:`unit_layers`: ``by_unit[j]`` unit ``j``'s weights, an even count of units)."""
    l0 = l1 = l2 = l3 = output_bias
    for j in range(0, by_unit.shape[0], 2):
        s0 = s1 = s2 = s3 = t0 = t1 = t2 = t3 = 0.0
        for h in range(by_unit.shape[1]):
            v, w = by_unit[j, h], by_unit[j + 1, h]
            a0, a1, a2, a3 = outputs[0, h], outputs[1, h], outputs[2, h], outputs[3, h]
            s0 += v * a0
            s1 += v * a1
            s2 += v * a2
            s3 += v * a3
            t0 += w * a0
            t1 += w * a1
            t2 += w * a2
            t3 += w * a3
        l0 += unit_output(s0, t0, j, second_bias, output)
        l1 += unit_output(s1, t1, j, second_bias, output)
        l2 += unit_output(s2, t2, j, second_bias, output)
        l3 += unit_output(s3, t3, j, second_bias, output)
    return l0, l1, l2, l3


@jit
def unit_output(s, t, j, second_bias, output):
    """Units ``j`` and ``j + 1``'s share of a logit, from their float sums ``s`` and ``t`` (exact integers)."""
    return (output[j] * (max(np.int64(s) + second_bias[j], 0) >> SECOND_SHIFT)
            + output[j + 1] * (max(np.int64(t) + second_bias[j + 1], 0) >> SECOND_SHIFT))


@jit
def root_sums(q, first, first_bias, out):
    """The first layer's sums of the input vector ``q`` (int64 per input)."""
    out[:] = first_bias
    for i in range(q.shape[0]):
        step = q[i]
        if step != 0:
            for h in range(out.shape[0]):
                out[h] += first[i, h] * step


# ---------------------------------------------------------------------------------- reading the observation
@jit
def raw(x, index):
    """The raw integer of observation value ``index``."""
    return np.int64(np.rint(np.float64(x[index]) * RAW_PER_VALUE[index]))


@jit
def one_hot_value(x, start, size):
    """1 + the index of the set entry of a one-hot group (0 when none is set)."""
    for k in range(size):
        if x[start + k] > 0.5:
            return k + 1
    return 0


@jit
def seat_base(rel):
    return SEAT_START + SEAT_BLOCK * rel


@jit
def read_piles(x, rel, piles, heights):
    """The visible discard piles of relative seat ``rel``, bottom to top (``piles[p, :heights[p]]``)."""
    base = seat_base(rel) + DISCARD_CARDS_AT
    for p in range(NUM_DISCARD_PILES):
        shown = 0
        for k in range(DISCARD_DEPTH):
            if raw(x, base + DISCARD_DEPTH * p + k) == 0:
                break
            shown += 1
        for k in range(shown):
            piles[p, shown - 1 - k] = raw(x, base + DISCARD_DEPTH * p + k)
        heights[p] = shown


@jit
def num_players_of(x):
    return one_hot_value(x, NUM_PLAYERS_AT, 5) + 1


@jit
def read_observation(x, needs, hand, piles, heights, info):
    """What the planner's search reads (``agents.batched.search.read_position``), from an observation vector."""
    for slot in range(NUM_BUILDING_PILES):
        needs[slot] = one_hot_value(x, BUILDING_NEXT_AT + TOP_VALUE * slot, TOP_VALUE)
    hand_size = 0
    for value in range(1, WILD + 1):
        hand[value] = raw(x, HAND_AT + value - 1)
        hand_size += hand[value]
    read_piles(x, 0, piles[0], heights[0])
    partners = x[PARTNERS_AT] > 0.5
    shared = x[SHARED_AT] > 0.5
    partner = num_players_of(x) // 2
    if partners:
        read_piles(x, partner, piles[1], heights[1])
    info[I_STOCK_TOP] = one_hot_value(x, seat_base(0) + STOCK_TOP_AT, NUM_VALUES)
    info[I_STOCK_SIZE] = raw(x, seat_base(0) + STOCK_SIZE_AT)
    if partners and not shared:
        info[I_PARTNER_TOP] = one_hot_value(x, seat_base(partner) + STOCK_TOP_AT, NUM_VALUES)
        info[I_PARTNER_SIZE] = raw(x, seat_base(partner) + STOCK_SIZE_AT)
    info[I_PARTNERS] = partners
    info[I_SHARED] = shared
    info[I_EITHER] = x[EITHER_AT] > 0.5
    info[I_CAN_DRAW] = raw(x, DRAW_AT) + raw(x, COMPLETED_AT)
    info[I_PARTNER_SEAT] = partners and not shared
    info[I_HAND_SIZE] = hand_size
    info[I_PILE_CARDS] = heights.sum()


@jit
def root_inputs(x, input_of, q, expected):
    """``q`` := the integer inputs of the observation ``x`` as a stop (``pending_discard`` 1); ``expected[v]`` :=
    ``SUBUNITS`` times the chance that an unknown card is of value ``v`` (from the ``unseen`` counts). The
    building piles are entered in the order of the value they need (``search.sorted_needs``: the piles are
    alike under the rules, so the network reads them in one order, and the search's memo, which treats equal
    piles as one, stays exact)."""
    for i in range(OBS_SIZE):
        k = input_of[i]
        if k >= 0:
            q[k] = raw(x, i) * MULTIPLIER[i]
    q[input_of[PENDING]] = 1
    needs = np.empty(NUM_BUILDING_PILES, dtype=np.int64)
    for slot in range(NUM_BUILDING_PILES):
        needs[slot] = one_hot_value(x, BUILDING_NEXT_AT + TOP_VALUE * slot, TOP_VALUE)
    order = sorted_needs(needs)
    for rank in range(NUM_BUILDING_PILES):
        for value in range(1, TOP_VALUE + 1):
            q[input_of[BUILDING_NEXT_AT + TOP_VALUE * rank + value - 1]] = order[rank] == value
        q[input_of[BUILDING_SIZE_AT + rank]] = order[rank] - 1
    total = 0
    for value in range(1, WILD + 1):
        total += raw(x, UNSEEN_AT + value - 1)
    expected[0] = 0
    for value in range(1, WILD + 1):
        expected[value] = (SUBUNITS * raw(x, UNSEEN_AT + value - 1)) // total if total > 0 else 0


# ---------------------------------------------------------------------------------- what a plan changes
@jit
def change(index, value, input_of, q, changed_at, changed_by, count):
    """Note that observation input ``index`` takes the integer ``value``; returns the new count of changes."""
    k = input_of[index]
    if k < 0:
        return count
    step = value - q[k]
    if step != 0:
        changed_at[count] = k
        changed_by[count] = step
        count += 1
    return count


@jit
def discard_pile_changes(rel, p, h0, h_from, h, pile_cards, x, input_of, q, changed_at, changed_by, count):
    """The inputs of discard pile ``p`` of relative seat ``rel`` after its top ``h0 - h`` visible cards were
    played (``pile_cards``: the visible cards, bottom to top), where ``q`` holds them after ``h0 - h_from``."""
    base = seat_base(rel)
    size_at = base + DISCARD_SIZE_AT + p
    count = change(size_at, raw(x, size_at) - (h0 - h), input_of, q, changed_at, changed_by, count)
    top_at = base + DISCARD_TOP_AT + NUM_VALUES * p
    old_top = pile_cards[h_from - 1] if h_from > 0 else 0
    new_top = pile_cards[h - 1] if h > 0 else 0
    if new_top != old_top:  # one-hot entries of one group: each changed once
        if old_top:
            count = change(top_at + old_top - 1, 0, input_of, q, changed_at, changed_by, count)
        if new_top:
            count = change(top_at + new_top - 1, 1, input_of, q, changed_at, changed_by, count)
    cards_at = base + DISCARD_CARDS_AT + DISCARD_DEPTH * p
    for k in range(DISCARD_DEPTH):
        value = pile_cards[h - 1 - k] if k < h else 0
        count = change(cards_at + k, value, input_of, q, changed_at, changed_by, count)
    return count


@jit
def stock_changes(rel, x, expected, input_of, q, changed_at, changed_by, count):
    """The inputs of relative seat ``rel``'s stockpile after its top was played: one card fewer, the new top
    expected from the unseen cards."""
    base = seat_base(rel)
    count = change(base + STOCK_SIZE_AT, raw(x, base + STOCK_SIZE_AT) - 1, input_of, q, changed_at, changed_by, count)
    for value in range(1, WILD + 1):
        count = change(base + STOCK_TOP_AT + value - 1, expected[value], input_of, q, changed_at, changed_by, count)
    return count


@jit
def hand_changes(hand, info, x, expected, input_of, q, changed_at, changed_by, count):
    """The inputs of the seat's hand ``hand`` (when it is empty, the cards it will draw, as expected from the
    unseen cards) and of the draw pile they come from."""
    left = cards_in(hand)
    drawn = min(HAND_SIZE, info[I_CAN_DRAW]) if left == 0 else 0
    for value in range(1, WILD + 1):
        held = hand[value] * SUBUNITS if drawn == 0 else drawn * expected[value]
        count = change(HAND_AT + value - 1, held, input_of, q, changed_at, changed_by, count)
    count = change(seat_base(0) + HAND_SIZE_AT, left if drawn == 0 else drawn, input_of, q, changed_at, changed_by,
                   count)
    return change(DRAW_AT, max(0, raw(x, DRAW_AT) - drawn), input_of, q, changed_at, changed_by, count)


@jit
def building_changes(needs, needs_from, needs0, x, input_of, q, changed_at, changed_by, count):
    """The inputs of the building piles at ``needs`` (the piles in the order of their needs), where ``q`` holds
    them at ``needs_from``, and of the completed pile (the root's needs: ``needs0``)."""
    order, order_from = sorted_needs(needs), sorted_needs(needs_from)
    for rank in range(NUM_BUILDING_PILES):
        if order[rank] != order_from[rank]:
            at = BUILDING_NEXT_AT + TOP_VALUE * rank
            count = change(at + order_from[rank] - 1, 0, input_of, q, changed_at, changed_by, count)
            count = change(at + order[rank] - 1, 1, input_of, q, changed_at, changed_by, count)
            count = change(BUILDING_SIZE_AT + rank, order[rank] - 1, input_of, q, changed_at, changed_by, count)
    completed = 0
    for slot in range(NUM_BUILDING_PILES):
        completed += needs[slot] < needs0[slot]
    return change(COMPLETED_AT, raw(x, COMPLETED_AT) + TOP_VALUE * completed, input_of, q, changed_at, changed_by,
                  count)


@jit
def piles_changes(heights, heights_from, heights0, piles, info, x, input_of, q, changed_at, changed_by, count):
    """The inputs of the discard piles (the seat's and its partner's) at ``heights``, where ``q`` holds them at
    ``heights_from``."""
    partner = num_players_of(x) // 2
    for side in range(2):
        if side == 1 and not info[I_PARTNERS]:
            break
        rel = 0 if side == 0 else partner
        for p in range(NUM_DISCARD_PILES):
            if heights[side, p] != heights_from[side, p]:
                count = discard_pile_changes(rel, p, heights0[side, p], heights_from[side, p], heights[side, p],
                                             piles[side, p], x, input_of, q, changed_at, changed_by, count)
    return count


@jit
def stop_changes(needs, hand, heights, done, needs0, heights0, piles, info, x, expected, input_of, q, changed_at,
                 changed_by):
    """The inputs that differ between the root and the stop at a search position; returns how many."""
    count = hand_changes(hand, info, x, expected, input_of, q, changed_at, changed_by, 0)
    count = building_changes(needs, needs0, needs0, x, input_of, q, changed_at, changed_by, count)
    count = piles_changes(heights, heights0, heights0, piles, info, x, input_of, q, changed_at, changed_by, count)
    if done[0]:
        count = stock_changes(0, x, expected, input_of, q, changed_at, changed_by, count)
    if done[1]:
        count = stock_changes(num_players_of(x) // 2, x, expected, input_of, q, changed_at, changed_by, count)
    return count


@jit
def discard_changes(value, p, piles, heights, x, input_of, q, changed_at, changed_by):
    """The inputs that differ between the root (a stop) and the turn end after discarding ``value`` on pile ``p``."""
    base = seat_base(0)
    return discard_changes_at(value, p, raw(x, HAND_AT + value - 1), raw(x, base + HAND_SIZE_AT),
                              raw(x, base + DISCARD_SIZE_AT + p), piles[0, p], heights[0, p], x, input_of, q,
                              changed_at, changed_by)


@jit
def discard_changes_at(value, p, held, hand_size, length, pile_cards, h, x, input_of, q, changed_at, changed_by):
    """The inputs that differ between a stop (inputs ``q``: ``held`` cards of ``value`` in a hand of
    ``hand_size``, discard pile ``p`` of ``length`` cards whose visible ones are ``pile_cards[:h]``) and the turn
    end after discarding ``value`` on pile ``p``."""
    count = change(PENDING, 0, input_of, q, changed_at, changed_by, 0)
    count = change(HAND_AT + value - 1, (held - 1) * SUBUNITS, input_of, q, changed_at, changed_by, count)
    base = seat_base(0)
    count = change(base + HAND_SIZE_AT, hand_size - 1, input_of, q, changed_at, changed_by, count)
    count = change(base + DISCARD_SIZE_AT + p, length + 1, input_of, q, changed_at, changed_by, count)
    top_at = base + DISCARD_TOP_AT + NUM_VALUES * p
    if h > 0 and pile_cards[h - 1] != value:
        count = change(top_at + pile_cards[h - 1] - 1, 0, input_of, q, changed_at, changed_by, count)
    count = change(top_at + value - 1, 1, input_of, q, changed_at, changed_by, count)
    cards_at = base + DISCARD_CARDS_AT + DISCARD_DEPTH * p
    count = change(cards_at, value, input_of, q, changed_at, changed_by, count)
    for k in range(1, DISCARD_DEPTH):
        below = pile_cards[h - k] if k <= h else 0
        count = change(cards_at + k, below, input_of, q, changed_at, changed_by, count)
    if h == DISCARD_DEPTH:
        at = BURIED_AT + pile_cards[0] - 1
        count = change(at, raw(x, at) + 1, input_of, q, changed_at, changed_by, count)
    return count


# ---------------------------------------------------------------------------------- the search
MAX_CHANGES = 4 * NUM_VALUES + 3 * NUM_BUILDING_PILES + 2 * NUM_DISCARD_PILES * (3 + DISCARD_DEPTH) + 2 * (
    NUM_VALUES + 1) + 8
"""More than the inputs one stop or turn end can change."""


@jit
def pending_change(hand, info, input_of, q, changed_at, changed_by, count):
    """``pending_discard`` of a stop: 0 at one with an empty hand and nothing to draw (the turn's end), else 1."""
    ended = cards_in(hand) == 0 and info[I_CAN_DRAW] == 0
    return change(PENDING, 0 if ended else 1, input_of, q, changed_at, changed_by, count)


@jit
def stop_input_changes(needs, hand, heights, done, needs0, heights0, piles, info, x, expected, input_of, q,
                       changed_at, changed_by):
    """The inputs that differ between the root and the stop at a search position (a stop with an empty hand and
    nothing to draw is the turn's end: ``pending_discard`` 0); returns how many."""
    count = stop_changes(needs, hand, heights, done, needs0, heights0, piles, info, x, expected, input_of, q,
                         changed_at, changed_by)
    return pending_change(hand, info, input_of, q, changed_at, changed_by, count)


@jit
def add_group(sums, first, changed_at, changed_by, count, sign):
    """``sums`` += ``sign`` times the change of ``count`` inputs (:func:`add_changes`)."""
    for k in range(count):
        changed_by[k] *= sign
    add_changes(sums, first, changed_at, changed_by, count)


HAND_KINDS = WILD
"""Play kinds (what a play's source changes in the first layer): a hand card of value ``v`` that leaves cards
in the hand (kind ``v - 1``) or empties it (``HAND_KINDS + v - 1``), a stockpile top (``STOCK_KIND + side``),
the top of a discard pile seen at height ``h`` (``PILE_KIND + (side * 4 + pile) * DISCARD_DEPTH + h - 1``)."""
STOCK_KIND = 2 * HAND_KINDS
PILE_KIND = STOCK_KIND + 2
PLAY_KINDS = PILE_KIND + 2 * NUM_DISCARD_PILES * DISCARD_DEPTH


@jit
def play_kind(action, hand_after, heights_before):
    """The kind of a play (:data:`HAND_KINDS`): within one decision, every play of a kind changes the first
    layer's sums by the same amount, whatever else the position holds."""
    source = source_of(action)
    if source < STOCK_SOURCE:
        return source + (HAND_KINDS if cards_in(hand_after) == 0 else 0)
    if source == STOCK_SOURCE:
        return STOCK_KIND
    if source == PARTNER_STOCK_SOURCE:
        return STOCK_KIND + 1
    side = 0 if source < PARTNER_STOCK_SOURCE else 1
    p = source - (DISCARD_SOURCE if side == 0 else PARTNER_DISCARD_SOURCE)
    return PILE_KIND + (side * NUM_DISCARD_PILES + p) * DISCARD_DEPTH + heights_before[side, p] - 1


@jit
def source_changes(action, e, hand, heights, done, heights0, piles, info, x, expected, input_of, q, changed_at,
                   changed_by):
    """The inputs of the part of search position ``e`` that ``action`` plays from (the hand, a stockpile, a
    discard pile) that differ from the root's; returns how many."""
    source = source_of(action)
    if source < STOCK_SOURCE:
        count = hand_changes(hand[e], info, x, expected, input_of, q, changed_at, changed_by, 0)
        return pending_change(hand[e], info, input_of, q, changed_at, changed_by, count)
    if source == STOCK_SOURCE or source == PARTNER_STOCK_SOURCE:
        side = 0 if source == STOCK_SOURCE else 1
        if not done[e, side]:
            return 0
        return stock_changes(0 if side == 0 else num_players_of(x) // 2, x, expected, input_of, q, changed_at,
                             changed_by, 0)
    side = 0 if source < PARTNER_STOCK_SOURCE else 1
    p = source - (DISCARD_SOURCE if side == 0 else PARTNER_DISCARD_SOURCE)
    rel = 0 if side == 0 else num_players_of(x) // 2
    return discard_pile_changes(rel, p, heights0[side, p], heights0[side, p], heights[e, side, p], piles[side, p], x,
                                input_of, q, changed_at, changed_by, 0)


@jit
def raised_rank(needs_before, need):
    """When a pile that needs ``need`` (< ``TOP_VALUE``) gets its card, the piles' sorted order changes in one
    rank: the last that needs ``need`` now needs ``need + 1`` (its one-hot entry moves up one, its size grows
    by one). That rank."""
    order = sorted_needs(needs_before)
    rank = 0
    for r in range(NUM_BUILDING_PILES):
        if order[r] == need:
            rank = r
    return rank


@jit
def kind_delta(action, d, hand, heights, done, heights0, piles, info, x, expected, net, q, changed_at, changed_by,
               net_steps, touched, out):
    """``out`` := the change of the first layer's sums by the source of ``action`` (the play from search depth
    ``d - 1`` to ``d``): the inputs :func:`source_changes` gives after it less those before it, each input
    once (``net_steps``, all zero, and ``touched``: scratch room)."""
    first, first_bias, second, second_bias, output, output_bias, input_of = net
    out[:] = 0
    touches = 0
    for e, sign in ((d, 1), (d - 1, -1)):
        count = source_changes(action, e, hand, heights, done, heights0, piles, info, x, expected, input_of, q,
                               changed_at, changed_by)
        for k in range(count):
            net_steps[changed_at[k]] += sign * changed_by[k]
            touched[touches] = changed_at[k]
            touches += 1
    count = 0
    for t in range(touches):
        k = touched[t]
        if net_steps[k] != 0:
            changed_at[count] = k
            changed_by[count] = net_steps[k]
            count += 1
            net_steps[k] = 0
    add_changes(out, first, changed_at, changed_by, count)


@jit
def building_delta(d, needs, needs0, x, input_of, first, q, changed_at, changed_by, sums):
    """``sums`` += the change of the building piles' inputs (and the completed pile's) from search depth
    ``d - 1`` to ``d``, as :func:`building_changes` says from the root: for a play that completes a pile, or
    moves the count of completed piles."""
    for e, sign in ((d, 1), (d - 1, -1)):
        count = building_changes(needs[e], needs0, needs0, x, input_of, q, changed_at, changed_by, 0)
        add_group(sums, first, changed_at, changed_by, count, sign)


MAX_POSITIONS = 4096
"""The positions one decision's search expands at most (a network that hoards discards would otherwise make
its search explode; the hand-written bots' searches are not bounded): past that, the positions it enters
are valued without looking past them."""
FIRST_STOPS = 256
"""Room for a decision's stops at first (it doubles when full)."""


@jit
def grown(array):
    """``array`` (its first axis) twice as long, holding the same rows first."""
    out = np.empty((2 * array.shape[0],) + array.shape[1:], dtype=array.dtype)
    out[:array.shape[0]] = array
    return out


@jit
def search_stops(legal, g, needs0, hand0, piles, heights0, info, net, root):
    """Every stop the planner's whole-turn search reaches from the root (``agents.batched.search``'s
    ``best_first_play``: the same sequences of plays in the same order, the same memo, the same bound), with
    the first-layer sums of each, derived from the stop one play before by the inputs that play changed.

    Returns ``(sums, count, wins, links, link_count, choices, choice_count)``: ``sums[:count]`` the stops'
    first-layer sums (row 0 the root); ``wins[s]`` whether a play from stop ``s`` wins the hand;
    ``links[:link_count]`` the pairs ``(stop, next)``, ``next`` a stop one play after ``stop``, each listed once
    all of ``next``'s own pairs are; ``choices[:choice_count]`` the legal first plays in the search's order
    (``agents.batched.search.root_rank``) with the stop each leads to (-1: it wins the hand)."""
    first, first_bias, second, second_bias, output, output_bias, input_of = net
    x, q, a0, expected, changed_at, changed_by, work_sums, hidden = root
    depth = 3 + info[I_HAND_SIZE] + info[I_PILE_CARDS] + 2
    needs = np.empty((depth, NUM_BUILDING_PILES), dtype=np.int64)
    hand = np.empty((depth, WILD + 1), dtype=np.int64)
    heights = np.empty((depth, 2, NUM_DISCARD_PILES), dtype=np.int64)
    done = np.zeros((depth, 2), dtype=np.int64)
    stop_at = np.zeros(depth, dtype=np.int64)
    moves = np.empty((depth, MAX_MOVES), dtype=np.int64)
    move_count = np.zeros(depth, dtype=np.int64)
    next_move = np.zeros(depth, dtype=np.int64)
    keys = np.zeros(depth, dtype=np.int64)
    memo_keys = np.full(MEMO_START, EMPTY, dtype=np.int64)
    memo_stops = np.empty(MEMO_START, dtype=np.int64)
    memo_count = 0
    sums = np.empty((FIRST_STOPS, first.shape[1]), dtype=np.int64)
    wins = np.zeros(FIRST_STOPS, dtype=np.bool_)
    links = np.empty((FIRST_STOPS, 2), dtype=np.int64)
    link_count = 0
    choices = np.empty((FIRST_DISCARD, 2), dtype=np.int64)
    choice_count = 0
    needs[0] = needs0
    hand[0] = hand0
    heights[0] = heights0
    count = stop_input_changes(needs[0], hand[0], heights[0], done[0], needs0, heights0, piles, info, x, expected,
                               input_of, q, changed_at, changed_by)
    sums[0] = a0
    add_changes(sums[0], first, changed_at, changed_by, count)
    width = first.shape[1]
    deltas = np.empty((PLAY_KINDS, width), dtype=np.int64)  # what a play of each kind changes (play_kind)
    known = np.zeros(PLAY_KINDS, dtype=np.bool_)
    net_steps = np.zeros(q.shape[0], dtype=np.int64)
    touched = np.empty(2 * MAX_CHANGES, dtype=np.int64)
    stops = 1
    for rank in range(4):
        for action in range(FIRST_DISCARD):
            if not legal[g, action] or root_rank(action) != rank:
                continue
            choices[choice_count, 0] = action
            choices[choice_count, 1] = -1
            choice_count += 1
            if play_into(needs, hand, heights, done, 0, action, info):
                continue
            d = 1
            entering = True
            while True:
                if entering:
                    entering = False
                    key = position_key(needs[d], hand[d], heights[d], done[d], hand0, heights0)
                    slot = memo_slot(memo_keys, key)
                    if memo_keys[slot] == key:
                        seen = memo_stops[slot]
                        if d == 1:
                            choices[choice_count - 1, 1] = seen
                            break
                        d -= 1
                        if link_count == links.shape[0]:
                            links = grown(links)
                        links[link_count, 0] = stop_at[d]
                        links[link_count, 1] = seen
                        link_count += 1
                        continue
                    keys[d] = key
                    if stops == sums.shape[0]:
                        sums, wins = grown(sums), grown(wins)
                    # the stop's first-layer sums: the stop before's, plus what the play changed (worked
                    # out here, not in a function of many arrays: each array passed costs a count of its uses)
                    play = moves[d - 1, next_move[d - 1] - 1] if d > 1 else action
                    kind = play_kind(play, hand[d], heights[d - 1])
                    if not known[kind]:
                        kind_delta(play, d, hand, heights, done, heights0, piles, info, x, expected, net, q,
                                   changed_at, changed_by, net_steps, touched, deltas[kind])
                        known[kind] = True
                    before = stop_at[d - 1]
                    slot = pile_of(play)
                    need = needs[d - 1, slot]
                    raised = raised_rank(needs[d - 1], need)
                    at = BUILDING_NEXT_AT + TOP_VALUE * raised
                    off, on, size = input_of[at + need - 1], input_of[at + need], input_of[BUILDING_SIZE_AT + raised]
                    if (need < TOP_VALUE and (need < needs0[slot]) == (need + 1 < needs0[slot])
                            and min(off, on, size) >= 0):  # the building pile's change: three rows, in one pass
                        for h in range(width):
                            sums[stops, h] = (sums[before, h] + deltas[kind, h] + first[on, h] - first[off, h]
                                              + first[size, h])
                    else:
                        for h in range(width):
                            sums[stops, h] = sums[before, h] + deltas[kind, h]
                        building_delta(d, needs, needs0, x, input_of, first, q, changed_at, changed_by, sums[stops])
                    wins[stops] = False
                    stop_at[d] = stops
                    stops += 1
                    if memo_count >= MAX_POSITIONS:
                        move_count[d] = 0
                    else:
                        move_count[d] = list_moves(needs[d], hand[d], heights[d], done[d], piles, info, moves[d])
                    next_move[d] = 0
                if next_move[d] < move_count[d]:
                    play = moves[d, next_move[d]]
                    next_move[d] += 1
                    if play_into(needs, hand, heights, done, d, play, info):
                        wins[stop_at[d]] = True
                    else:
                        d += 1
                        entering = True
                    continue
                if 2 * (memo_count + 1) > memo_keys.shape[0]:
                    memo_keys, memo_stops = memo_grown(memo_keys, memo_stops)
                slot = memo_slot(memo_keys, keys[d])
                memo_keys[slot] = keys[d]
                memo_stops[slot] = stop_at[d]
                memo_count += 1
                if d == 1:
                    choices[choice_count - 1, 1] = stop_at[d]
                    break
                d -= 1
                if link_count == links.shape[0]:
                    links = grown(links)
                links[link_count, 0] = stop_at[d]
                links[link_count, 1] = stop_at[d + 1]
                link_count += 1
    return sums, stops, wins, links, link_count, choices, choice_count


@jit
def best_first_play(legal, g, needs0, hand0, piles, heights0, info, net, layers, root):
    """The planner's ``best_first_play`` with the network's valuation: the first play of the best sequence, -1
    when stopping (discarding) is best; and how many stops were valued. The stops are found first
    (:func:`search_stops`), valued in one batch, and the best value reachable from each is then carried back
    along the search's links: a position's worth is the best of stopping there, winning, and the positions
    one play on (:data:`agents.planner_weights.WIN` for a win)."""
    sums, count, wins, links, link_count, choices, choice_count = search_stops(legal, g, needs0, hand0, piles,
                                                                               heights0, info, net, root)
    values = np.empty(count, dtype=np.float64)
    network_values(sums, count, net, layers, values)
    stop_value = values[0]
    for s in range(1, count):
        if wins[s] and WIN > values[s]:
            values[s] = WIN
    for k in range(link_count):
        reached = values[links[k, 1]]
        if reached > values[links[k, 0]]:
            values[links[k, 0]] = reached
    best_value, best_action = stop_value, -1
    for c in range(choice_count):
        stop = choices[c, 1]
        value = WIN if stop < 0 else values[stop]
        if value > best_value + TIE_MARGIN:
            best_value, best_action = value, choices[c, 0]
    return best_action, count


@jit
def decision_arrays(x, net):
    """The arrays of one decision from observation ``x``: the search's view and the valuation's ``root``."""
    first, first_bias, second, second_bias, output, output_bias, input_of = net
    needs, hand, piles, heights, info = position_arrays()
    read_observation(x, needs, hand, piles, heights, info)
    q = np.zeros(first.shape[0], dtype=np.int64)
    expected = np.zeros(WILD + 1, dtype=np.int64)
    root_inputs(x, input_of, q, expected)
    a0 = np.empty(first.shape[1], dtype=np.int64)
    root_sums(q, first, first_bias, a0)
    root = (x, q, a0, expected, np.zeros(MAX_CHANGES, dtype=np.int64), np.zeros(MAX_CHANGES, dtype=np.int64),
            np.empty(first.shape[1], dtype=np.int64), np.empty(second.shape[0], dtype=np.int64))
    return needs, hand, piles, heights, info, root


@jit
def best_discard(mask, g, needs, hand, piles, heights, info, net, layers, root):
    """The legal discard whose turn end the network values most (ties: the lowest id), -1 if none is legal; and
    how many turn ends were valued (in one batch)."""
    first, first_bias, second, second_bias, output, output_bias, input_of = net
    x, q, a0, expected, changed_at, changed_by, work_sums, hidden = root
    actions = np.empty(END_TURN - FIRST_DISCARD, dtype=np.int64)
    sums = np.empty((END_TURN - FIRST_DISCARD, first.shape[1]), dtype=np.int64)
    count = 0
    for action in range(FIRST_DISCARD, END_TURN):
        if not mask[g, action]:
            continue
        value = discard_value_of(action)
        p = (action - FIRST_DISCARD) % NUM_DISCARD_PILES
        changes = discard_changes(value, p, piles, heights, x, input_of, q, changed_at, changed_by)
        sums[count] = a0
        add_changes(sums[count], first, changed_at, changed_by, changes)
        actions[count] = action
        count += 1
    values = np.empty(count, dtype=np.float64)
    network_values(sums, count, net, layers, values)
    best, best_value = -1, 0.0
    for k in range(count):
        if best < 0 or values[k] > best_value:
            best, best_value = actions[k], values[k]
    return best, count


@jit
def turn_end_inputs(action, needs, hand, piles, heights, info, net, root, out):
    """``out`` := the inputs of the turn end after discard ``action`` from the root."""
    first, first_bias, second, second_bias, output, output_bias, input_of = net
    x, q, a0, expected, changed_at, changed_by, sums, hidden = root
    out[:] = q
    value = discard_value_of(action)
    p = (action - FIRST_DISCARD) % NUM_DISCARD_PILES
    count = discard_changes(value, p, piles, heights, x, input_of, q, changed_at, changed_by)
    for k in range(count):
        out[changed_at[k]] += changed_by[k]


@jit
def decide_valued(x, mask, g, net, layers):
    """:func:`decide`'s action, and how many positions (stops and turn ends) the network valued to choose it
    (``layers``: :func:`unit_layers` of ``net``)."""
    count, first_legal, plays, discards = legal_counts(mask, g)
    if count <= 1:
        return first_legal, 0
    needs, hand, piles, heights, info, root = decision_arrays(x, net)
    valued = 0
    if plays:
        best, valued = best_first_play(mask, g, needs, hand, piles, heights, info, net, layers, root)
        if best >= 0:
            return best, valued
    if not discards:
        return (END_TURN if mask[g, END_TURN] else first_legal), valued
    best, turn_ends = best_discard(mask, g, needs, hand, piles, heights, info, net, layers, root)
    return best, valued + turn_ends


@jit
def decide(x, mask, g, net):
    """The neural bot's action for observation ``x`` with legal mask ``mask[g]``; -1 when nothing is legal.
    ``net``: ``(first, first_bias, second, second_bias, output, output_bias, input_of)``, the quantized network
    (``first[input, hidden]``) and each observation index's input (-1 for a value it does not read)."""
    return decide_valued(x, mask, g, net, unit_layers(net))[0]


@jit
def decide_rows_valued(observations, masks, net, out, valued):
    """``out[i]`` = the neural bot's action for ``observations[i]`` and ``masks[i]``; ``valued[i]`` = the
    positions its network valued to choose it."""
    layers = unit_layers(net)
    for i in range(observations.shape[0]):
        out[i], valued[i] = decide_valued(observations[i], masks, i, net, layers)


@jit
def decide_rows(observations, masks, net, out):
    """``out[i]`` = the neural bot's action for ``observations[i]`` and ``masks[i]``."""
    decide_rows_valued(observations, masks, net, out, np.empty(observations.shape[0], dtype=np.int64))


def warm_up(observations: np.ndarray, masks: np.ndarray) -> None:
    """Compile (or load from numba's cache) the neural bot's kernels, as the engines and the training call them,
    on a few positions (``observations`` float32 ``[k, OBS_SIZE]``, ``masks`` bool ``[k, NUM_ACTIONS]`` of a
    two-seat table), with a small network of zeros."""
    count, width, second_width = len(input_indices(2)), 4, 2
    input_of = np.full(INPUT_SLOTS, -1, dtype=np.int64)
    input_of[input_indices(2)] = np.arange(count)
    net = (np.zeros((count, width), dtype=np.int64), np.zeros(width, dtype=np.int64),
           np.zeros((second_width, width), dtype=np.int64), np.zeros(second_width, dtype=np.int64),
           np.zeros(second_width, dtype=np.int64), np.zeros(1, dtype=np.int64), input_of)
    actions = np.empty(len(observations), dtype=np.int64)
    decide_rows(observations, masks, net, actions)
    decide(np.ascontiguousarray(observations[0]), np.ascontiguousarray(masks[:1]), 0, net)
