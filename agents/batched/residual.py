"""``residual``: the learned bot's value of a stop plus a learned correction, as kernels (``td.start: teacher``).

The teacher is a learned bot (:mod:`agents.batched.learned`, ``learned-2p``): it values a stop (a place the turn
could stop, its discard still to make) as ``v = STOCK * (w . features)``, 16 hand-made features, and discards by
the expert's planned discard, the legal discard of the best score ``s`` (:func:`agents.batched.expert.discard_scores`).
The residual model gives the logit of the seat's chance to win the hand:

- at a stop: ``a * v + b + c * r(inputs, features)``;
- at a turn end (after the discard ``d``, before the next seat moves): ``a * v + b + a_d * s_d + c * r(inputs,
  features)``, ``v`` and ``features`` those of the stop the discard is made from.

``inputs`` are the neural bot's inputs of the position (:mod:`agents.batched.neural`, read from the observation),
``features`` the teacher's 16 features of the stop, each entered as the integer ``rint(feature * FEATURE_UNIT)``,
and ``r`` a network of the neural bot's integer format whose first layer reads both (its rows: the inputs, then
the features), entered as ``bound * tanh(r / bound)`` where the model has a ``bound`` > 0 (:func:`bounded`).
``a > 0``, ``b``, ``a_d > 0``, ``c > 0`` and ``bound >= 0`` are numbers of the model (``scales = [a, b, a_d, c,
bound]``).
``c / a`` is what a unit of ``r`` is worth in the teacher's units: training keeps it fixed
(:mod:`training.td.residual`), so the correction's weight in the search does not follow the calibration.

**How it decides.** One search, the teacher's (:func:`agents.batched.search.turn_search`, the same plays in the
same order, the same memo), each stop valued by the teacher and corrected by ``r``: the search ranks
``v + r * c / a`` (the logit over ``a``, less the constant ``b / a``: in the teacher's units, so its margins are
the teacher's). When stopping is best, the discard is the legal one of the highest ``s_d + r(turn end) * c / a_d``
(the teacher's ties and margin). With ``r`` = 0 (its last layer zero: where training starts) both sums are the
teacher's own numbers, and the bot makes exactly the teacher's moves. With a bound, a kept stop or a discard whose
teacher's number is further below the best than ``r`` can make up (:func:`in_reach`) is not valued: where one
choice alone is in reach, the move is the teacher's without valuing ``r`` at all.

The kernels read the game's record (what the teacher reads, as :mod:`agents.batched.learned` does) and the
observation of the seat to act (what ``r`` reads), as :mod:`agents.batched.neural_teacher` does.
"""

from __future__ import annotations

import numpy as np

from skipbo_env.actions import END_TURN, FIRST_DISCARD
from skipbo_env.cards import HAND_SIZE, NUM_BUILDING_PILES, NUM_DISCARD_PILES, NUM_VALUES, TOP_VALUE, WILD
from skipbo_env.encoding import DISCARD_DEPTH
from skipbo_env.vector.jit import discard_value_of, jit
from agents.batched.expert import (
    CHANCE_ROWS, ODDS_ROW, ON_CARD_COUNTING, best_scored_discard, discard_scores, odds_of_unseen, rival_chances,
)
from agents.batched.learned import (
    BUFFER_SIZE, FEATURES_AT, INVERSE_SIZE_AT, SEAT_AT, learned_view, stop_value as teacher_value, view_decision,
)
from agents.batched.neural import (
    BUILDING_NEXT_AT, BUILDING_SIZE_AT, COMPLETED_AT, HAND_AT, HAND_SIZE_AT, STOCK_SIZE_AT, STOCK_TOP_AT, SUBUNITS,
    UNSEEN_AT, add_changes, change, decision_arrays, discard_changes, discard_pile_changes, float_layers,
    float_value, hand_changes, num_players_of, one_hot_value, pending_change, raw, read_observation, read_piles,
    seat_base, stock_changes, stop_input_changes, turn_end_inputs,
)
from agents.batched.search import (
    I_CAN_DRAW, I_OPPONENT_TOP, I_OPPONENTS, I_PARTNERS, I_STALLED, I_SWITCHES, SEAT_WEIGHTS, TIE_MARGIN, cards_in,
    legal_counts, play_into, position_arrays, root_rank, search_room, sorted_needs, subtree_search, turn_search,
    view_heights_of,
)
from agents.learned_parameters import NUM_FEATURES, NUM_PARAMETERS
from agents.planner_weights import WIN

FEATURE_UNIT = 256
"""A feature enters ``r``'s first layer as the integer ``rint(feature * FEATURE_UNIT)``."""
A, B, A_DISCARD, C, BOUND = range(5)
"""The model's numbers in ``scales``: the teacher's value's scale, the bias, the discard score's scale, the
correction's scale, and the most ``r`` may be worth in its own units (0: no bound)."""
EMPTIED, STOCK = 0, 1
"""Rows of a decision's shares of the first layer that are one a decision: the emptied hand's, then each
stockpile top's (:func:`decision_parts`)."""


# ---------------------------------------------------------------------------------- the correction r
@jit
def bounded(r, bound):
    """``r`` as the model enters it: ``bound * tanh(r / bound)`` (within ``±bound``, ``r`` itself near 0), or ``r``
    where ``bound`` is 0."""
    return bound * np.tanh(r / bound) if bound > 0 else r


@jit
def in_reach(values, legal, weight, bound):
    """Which choices of the teacher's numbers ``values`` (those ``legal``) a correction can still make best: all but
    those more than ``2 * bound * weight`` below the highest (``weight``: what a unit of ``r`` is worth in those
    numbers; ``bound`` 0: all). With a bound, the rest are not valued: ``r`` cannot lift them to the best."""
    reach = legal.copy()
    if bound > 0:
        highest = -np.inf
        for k in range(values.shape[0]):
            if legal[k]:
                highest = max(highest, values[k])
        for k in range(values.shape[0]):
            reach[k] = legal[k] and values[k] + 2.0 * bound * weight >= highest
    return reach


@jit
def feature_units(features, out):
    """``out`` := the features as ``r`` reads them: ``rint(feature * FEATURE_UNIT)``."""
    for i in range(NUM_FEATURES):
        out[i] = np.int64(np.rint(features[i] * FEATURE_UNIT))


@jit
def add_features(sums, first, units):
    """``sums`` += the first layer's feature rows (the last ``NUM_FEATURES`` rows of ``first``) times ``units``."""
    row = first.shape[0] - NUM_FEATURES
    for i in range(NUM_FEATURES):
        step = units[i]
        if step != 0:
            for h in range(sums.shape[0]):
                sums[h] += first[row + i, h] * step


# ---------------------------------------------------------------------------------- a stop's first layer, in parts
# A stop's inputs differ from the root's in groups that each depend on one part of the position alone (what
# ``agents.batched.neural.stop_input_changes`` adds up): the hand (and ``pending_discard``), each building pile
# rank's need, the completed pile, each discard pile's height, each stockpile's top. A group's share of the first
# layer's sums is worked out once per decision, the first time a stop holds that part, and every later stop adds
# it: the same integers, summed in another order (exact), without deriving each stop's inputs again.
@jit
def decision_parts(net):
    """Room for one decision's shares of the first layer's sums (:func:`residual_value`), none known yet."""
    width = net[0].shape[1]
    return (np.empty((2, NUM_DISCARD_PILES, DISCARD_DEPTH + 1, width), dtype=np.int64),
            np.zeros((2, NUM_DISCARD_PILES, DISCARD_DEPTH + 1), dtype=np.bool_),
            np.empty((NUM_BUILDING_PILES, TOP_VALUE + 1, width), dtype=np.int64),
            np.zeros((NUM_BUILDING_PILES, TOP_VALUE + 1), dtype=np.bool_),
            np.empty((3, width), dtype=np.int64), np.zeros(3, dtype=np.bool_))


@jit
def share(out, first, changed_at, changed_by, count):
    """``out`` := the first layer's sums of ``count`` changes."""
    out[:] = 0
    add_changes(out, first, changed_at, changed_by, count)


@jit
def add_row(sums, first, row, step):
    """``sums`` += ``step`` times row ``row`` of ``first`` (none for an input the network does not read: -1)."""
    if row >= 0 and step != 0:
        for h in range(sums.shape[0]):
            sums[h] += first[row, h] * step


# A part's share, worked out the first time a decision's stop holds it (``model``: :func:`residual_model`'s).
@jit
def emptied_share(hand, model):
    """The share of an emptied hand (the cards it draws, as expected; or the turn's end: ``pending_discard``)."""
    x, net, root, view_piles, view_heights0, info, view_heights, scales, layers, scratch, parts = model
    _, q, a0, expected, changed_at, changed_by, _, _ = root
    count = hand_changes(hand, info, x, expected, net[6], q, changed_at, changed_by, 0)
    count = pending_change(hand, info, net[6], q, changed_at, changed_by, count)
    share(parts[4][EMPTIED], net[0], changed_at, changed_by, count)
    parts[5][EMPTIED] = True


@jit
def building_share(rank, need, need0, model):
    """The share of building pile rank ``rank`` needing ``need`` (the root: ``need0``)."""
    x, net, root, view_piles, view_heights0, info, view_heights, scales, layers, scratch, parts = model
    _, q, a0, expected, changed_at, changed_by, _, _ = root
    input_of = net[6]
    at = BUILDING_NEXT_AT + TOP_VALUE * rank
    count = change(at + need0 - 1, 0, input_of, q, changed_at, changed_by, 0)
    count = change(at + need - 1, 1, input_of, q, changed_at, changed_by, count)
    count = change(BUILDING_SIZE_AT + rank, need - 1, input_of, q, changed_at, changed_by, count)
    share(parts[2][rank, need], net[0], changed_at, changed_by, count)
    parts[3][rank, need] = True


@jit
def pile_share(side, p, height, model):
    """The share of discard pile ``p`` of ``side`` (0 the seat's, 1 its partner's) down to ``height`` cards."""
    x, net, root, view_piles, view_heights0, info, view_heights, scales, layers, scratch, parts = model
    _, q, a0, expected, changed_at, changed_by, _, _ = root
    rel = 0 if side == 0 else num_players_of(x) // 2
    height0 = view_heights0[side, p]
    count = discard_pile_changes(rel, p, height0, height0, height, view_piles[side, p], x, net[6], q, changed_at,
                                 changed_by, 0)
    share(parts[0][side, p, height], net[0], changed_at, changed_by, count)
    parts[1][side, p, height] = True


@jit
def stock_share(side, model):
    """The share of ``side``'s stockpile top played (0 the seat's, 1 its partner's)."""
    x, net, root, view_piles, view_heights0, info, view_heights, scales, layers, scratch, parts = model
    _, q, a0, expected, changed_at, changed_by, _, _ = root
    count = stock_changes(0 if side == 0 else num_players_of(x) // 2, x, expected, net[6], q, changed_at,
                          changed_by, 0)
    share(parts[4][STOCK + side], net[0], changed_at, changed_by, count)
    parts[5][STOCK + side] = True


@jit
def residual_value(needs, hand, heights, done, needs0, hand0, heights0, piles, info, teacher, model, work):
    """The search's worth of a stop: ``v + r * c / a`` (the stop's logit less ``b``, over ``a``; ``teacher``: the
    teacher's chances and buffer, which holds the stop's features after it is valued). ``r`` is 0 at a stop whose
    plays took a discard-pile card the observation does not show (``r`` cannot read it); elsewhere its first
    layer's sums are the root's plus each changed part's share (:func:`decision_parts`), then the features' rows.
    (The sums are added here, not in functions of arrays: each array passed to one costs a count of its
    uses, at every stop: 7 ms of 66 a hand.)"""
    chances, buffer = teacher
    value = teacher_value(needs, hand, heights, done, needs0, hand0, heights0, piles, info, chances, buffer, work)
    x, net, root, view_piles, view_heights0, view_info, view_heights, scales, layers, scratch, parts = model
    if not view_heights_of(heights, heights0, view_heights0, view_heights):
        return value
    first, input_of = net[0], net[6]
    q, a0, sums = root[1], root[2], root[6]
    piles_share, piles_known, ranks_share, ranks_known, whole_share, whole_known = parts
    width = sums.shape[0]
    for h in range(width):
        sums[h] = a0[h]
    left = cards_in(hand)
    if left == 0:
        if not whole_known[EMPTIED]:
            emptied_share(hand, model)
        for h in range(width):
            sums[h] += whole_share[EMPTIED, h]
    else:  # neural.hand_changes with nothing drawn (the draw pile and pending_discard as at the root)
        for card in range(1, WILD + 1):
            row = input_of[HAND_AT + card - 1]
            if row >= 0:
                step = hand[card] * SUBUNITS - q[row]
                if step != 0:
                    for h in range(width):
                        sums[h] += first[row, h] * step
        row = input_of[seat_base(0) + HAND_SIZE_AT]
        if row >= 0:
            add_row(sums, first, row, left - q[row])
    order, order0 = sorted_needs(needs), sorted_needs(needs0)
    completed = 0
    for rank in range(NUM_BUILDING_PILES):
        need = order[rank]
        if need != order0[rank]:
            if not ranks_known[rank, need]:
                building_share(rank, need, order0[rank], model)
            for h in range(width):
                sums[h] += ranks_share[rank, need, h]
        completed += needs[rank] < needs0[rank]
    row = input_of[COMPLETED_AT]
    if row >= 0:
        add_row(sums, first, row, raw(x, COMPLETED_AT) + TOP_VALUE * completed - q[row])
    for side in range(2 if view_info[I_PARTNERS] else 1):
        for p in range(NUM_DISCARD_PILES):
            height = view_heights[side, p]
            if height != view_heights0[side, p]:
                if not piles_known[side, p, height]:
                    pile_share(side, p, height, model)
                for h in range(width):
                    sums[h] += piles_share[side, p, height, h]
    for side in range(2):
        if done[side]:
            if not whole_known[STOCK + side]:
                stock_share(side, model)
            for h in range(width):
                sums[h] += whole_share[STOCK + side, h]
    units = scratch[0]
    feature_units(buffer[FEATURES_AT:], units)
    add_features(sums, first, units)
    weights, exact_below = layers
    r = float_value(sums, net, weights, exact_below, scratch[1], scratch[2], root[7])
    return value + bounded(r, scales[BOUND]) * scales[C] / scales[A]


best_first_play = turn_search(residual_value, "residual")
"""The teacher's whole-turn search, each stop valued with its correction."""


# ---------------------------------------------------------------------------------- correcting the best stops only
# With ``top`` > 0 the correction ranks only the teacher's ``top`` best stops of a decision (by ``v``): the search
# is the teacher's own, which keeps those stops (and the first play toward each), and ``r`` is worked out for them
# alone. A correction learned from the results of the stops played is trusted only among stops the teacher
# itself nearly chose (as batch-constrained Q-learning keeps the learned choice among those the data's policy
# takes), and the decision costs the teacher's search plus ``top`` valuations.
@jit
def candidate_room(top):
    """Room for a decision's ``top`` best stops: their values ``v``, order found, first plays, positions (needs,
    hand, heights, done), and the state (stops seen, the first play being searched, the slot of the worst kept)."""
    return (np.empty(top, dtype=np.float64), np.empty(top, dtype=np.int64), np.empty(top, dtype=np.int64),
            np.empty((top, NUM_BUILDING_PILES), dtype=np.int64), np.empty((top, WILD + 1), dtype=np.int64),
            np.empty((top, 2, NUM_DISCARD_PILES), dtype=np.int64), np.empty((top, 2), dtype=np.int64),
            np.zeros(3, dtype=np.int64))


@jit
def keep_candidate(needs, hand, heights, done, value, candidates):
    """Keep the stop (the teacher's value ``value``) while it is among the best found: a full room drops its
    worst (the latest found of the lowest value) for a better one."""
    values, serials, firsts, kept_needs, kept_hands, kept_heights, kept_done, state = candidates
    top = values.shape[0]
    serial = state[0]
    state[0] += 1
    if serial < top:
        slot = serial
    else:
        slot = state[2]
        if value <= values[slot]:
            return
    values[slot], serials[slot], firsts[slot] = value, serial, state[1]
    kept_needs[slot], kept_hands[slot], kept_heights[slot], kept_done[slot] = needs, hand, heights, done
    if serial >= top - 1:
        worst = 0
        for k in range(1, top):
            if values[k] < values[worst] or (values[k] == values[worst] and serials[k] > serials[worst]):
                worst = k
        state[2] = worst


@jit
def candidate_value(needs, hand, heights, done, needs0, hand0, heights0, piles, info, teacher, candidates, work):
    """The teacher's value of a stop (``teacher``: its chances and buffer), the stop kept among the candidates."""
    chances, buffer = teacher
    value = teacher_value(needs, hand, heights, done, needs0, hand0, heights0, piles, info, chances, buffer, work)
    keep_candidate(needs, hand, heights, done, value, candidates)
    return value


search_candidates = subtree_search(candidate_value, "residual_top")
"""The teacher's search below a first play, keeping the best stops."""


@jit
def corrected_first_play(legal, g, needs0, hand0, piles, heights0, info, teacher, model, top, pick):
    """The first play toward the stop of the highest ``v + r * c / a`` among the teacher's ``top`` best stops by
    ``v`` (-1: stopping now, the discard), or the first play that wins, as the teacher's search finds it;
    ``pick`` >= 0: toward the ``pick``-th stop kept instead (in the order found; modulo how many were kept)."""
    win, candidates, work = kept_stops(legal, g, needs0, hand0, piles, heights0, info, teacher, top)
    if win >= 0:
        return win
    return best_candidate(candidates, needs0, hand0, heights0, piles, info, teacher, model, work, pick)


@jit
def kept_stops(legal, g, needs0, hand0, piles, heights0, info, teacher, top):
    """The teacher's search of the decision keeping its ``top`` best stops: ``(the first play that wins, or -1;
    the kept stops, :func:`candidate_room`'s; scratch room)``."""
    frames, memo_keys, memo_values, work = search_room(info)
    needs, hand, heights, done, moves, move_count, next_move, best, keys = frames
    memo_count = np.int64(0)  # not the literal 0: one compile of search_candidates
    candidates = candidate_room(top)
    state = candidates[7]
    state[1] = -1
    needs[0], hand[0], heights[0] = needs0, hand0, heights0
    candidate_value(needs[0], hand[0], heights[0], done[0], needs0, hand0, heights0, piles, info, teacher,
                    candidates, work)
    for rank in range(4):
        for action in range(FIRST_DISCARD):
            if not legal[g, action] or root_rank(action) != rank:
                continue
            state[1] = action
            if play_into(needs, hand, heights, done, 0, action, info):
                return action, candidates, work
            value, memo_keys, memo_values, memo_count = search_candidates(
                1, needs, hand, heights, done, needs0, hand0, heights0, piles, info, teacher, candidates, work,
                memo_keys, memo_values, memo_count, moves, move_count, next_move, best, keys)
            if value >= WIN:
                return action, candidates, work
    return -1, candidates, work


@jit
def best_candidate(candidates, needs0, hand0, heights0, piles, info, teacher, model, work, pick):
    """The first play toward the kept stop of the highest ``v + r * c / a`` (the earliest found among ties; with a
    bound, among those :func:`in_reach`), or with ``pick`` >= 0 toward the ``pick``-th kept (in the order found,
    modulo how many)."""
    values, serials, firsts, kept_needs, kept_hands, kept_heights, kept_done, state = candidates
    kept = min(state[0], values.shape[0])
    order = np.argsort(serials[:kept])
    if pick >= 0:
        return firsts[order[pick % order.shape[0]]]
    scales = model[7]
    reach = in_reach(values[:kept], np.ones(kept, dtype=np.bool_), scales[C] / scales[A], scales[BOUND])
    if reach.sum() == 1:
        return firsts[np.argmax(reach)]
    best_worth, best_first = -np.inf, -1
    for k in order:
        if not reach[k]:
            continue
        worth = residual_value(kept_needs[k], kept_hands[k], kept_heights[k], kept_done[k], needs0, hand0, heights0,
                               piles, info, teacher, model, work)
        if worth > best_worth + TIE_MARGIN:
            best_worth, best_first = worth, firsts[k]
    return best_first


# ---------------------------------------------------------------------------------- deciding
@jit
def root_stop(needs, hand, heights, piles, info, chances, buffer, units):
    """The teacher's value of stopping at the root (no play), its features into ``units`` as ``r`` reads them."""
    done = np.zeros(2, dtype=np.int64)
    work = np.empty(NUM_DISCARD_PILES, dtype=np.int64)
    value = teacher_value(needs, hand, heights, done, needs, hand, heights, piles, info, chances, buffer, work)
    feature_units(buffer[FEATURES_AT:], units)
    return value


@jit
def turn_end_correction(action, base, model):
    """``r`` (:func:`bounded`) of the turn end after discard ``action`` from the root (``base``: the first layer's
    sums of the root stop, its features included: a turn end has the features of the stop it discards from)."""
    x, net, root, view_piles, view_heights0, view_info, view_heights, scales, layers, scratch, parts = model
    _, q, a0, expected, changed_at, changed_by, sums, hidden = root
    count = discard_changes(discard_value_of(action), (action - FIRST_DISCARD) % NUM_DISCARD_PILES, view_piles,
                            view_heights0, x, net[6], q, changed_at, changed_by)
    sums[:] = base
    add_changes(sums, net[0], changed_at, changed_by, count)
    weights, exact_below = layers
    return bounded(float_value(sums, net, weights, exact_below, scratch[1], scratch[2], hidden), scales[BOUND])


@jit
def residual_discard(legal, g, needs, hand, piles, heights, info, chances, buffer, parameters, model):
    """The legal discard of the highest ``s_d + r(turn end) * c / a_d`` (the teacher's margin and ties; with a
    bound, among those :func:`in_reach`)."""
    scores = np.zeros(END_TURN - FIRST_DISCARD, dtype=np.float64)
    discard_scores(legal, g, needs, hand, piles, heights, info, chances[ODDS_ROW], parameters[NUM_FEATURES:], scores)
    scales = model[7]
    reach = in_reach(scores, legal[g, FIRST_DISCARD:END_TURN], scales[C] / scales[A_DISCARD], scales[BOUND])
    if reach.sum() == 1:
        return FIRST_DISCARD + np.argmax(reach)
    units = np.empty(NUM_FEATURES, dtype=np.int64)
    root_stop(needs, hand, heights, piles, info, chances, buffer, units)
    first, a0 = model[1][0], model[2][2]
    base = a0.copy()
    add_features(base, first, units)
    for action in range(FIRST_DISCARD, END_TURN):
        if reach[action - FIRST_DISCARD]:
            scores[action - FIRST_DISCARD] += turn_end_correction(action, base, model) * scales[C] / scales[A_DISCARD]
        elif legal[g, action]:
            scores[action - FIRST_DISCARD] = -np.inf
    return best_scored_discard(legal, g, scores)


@jit
def residual_model(x, net, scales, layers):
    """The arrays of one decision from observation ``x``: ``r``'s view (the neural bot's) and the model tuple
    the valuation reads (``layers``: ``r``'s :func:`agents.batched.neural.float_layers`, and room for a stop's
    feature units, first-layer outputs and second-layer totals)."""
    view_needs, view_hand, view_piles, view_heights, view_info, root = decision_arrays(x, net)
    scratch = (np.empty(NUM_FEATURES, dtype=np.int64), np.empty(net[0].shape[1], dtype=np.int64),
               np.empty(net[2].shape[0], dtype=np.float64))
    return (x, net, root, view_piles, view_heights, view_info, np.zeros_like(view_heights), scales, layers, scratch,
            decision_parts(net))


@jit
def is_zero(net):
    """Whether ``r`` is 0 at every position: its output layer's weights and bias all zero (where training
    starts)."""
    return not (net[4].any() or net[5].any())


@jit
def residual_decision(r, legal, g, cfg, parameters, x, net, scales, top, layers, zero, pick=-1):
    """The residual bot's action for the seat to act in game ``g`` (record ``r``, its observation ``x``); -1 when
    nothing is legal. ``parameters``: the teacher's (``agents.batched.learned.PARAMETERS``' layout); ``net``: ``r``
    in the neural bot's arrays (``first`` with a row per input, then per feature); ``scales``: ``[a, b, a_d, c,
    bound]``; ``top``: the teacher's best stops the correction ranks (0: all); ``layers``: ``net``'s
    :func:`agents.batched.neural.float_layers`; ``zero``: :func:`is_zero` of ``net``; ``pick`` >= 0 (with ``top``
    > 0): the move toward that kept stop instead of the best (:func:`best_candidate`)."""
    count, first, plays, discards = legal_counts(legal, g)
    if count <= 1:
        return first
    return view_action(legal, g, learned_view(r, cfg, parameters), parameters, x, net, scales, top, layers, zero,
                       pick)


@jit
def view_action(legal, g, view, parameters, x, net, scales, top, layers, zero, pick=-1):
    """:func:`residual_decision` of a decision with a choice, from the teacher's view of the turn
    (:func:`agents.batched.learned.learned_view`'s arrays)."""
    if zero and pick < 0:  # v + r c / a and s + r c / a_d are the teacher's numbers (adding 0.0 changes no float)
        return view_decision(legal, g, view, parameters)[0]
    count, first, plays, discards = legal_counts(legal, g)
    needs, hand, piles, heights, info, chances, buffer = view
    model = residual_model(x, net, scales, layers)
    if plays:
        if top > 0:
            best = corrected_first_play(legal, g, needs, hand, piles, heights, info, (chances, buffer), model, top,
                                        pick)
        else:
            best, _ = best_first_play(True, legal, g, needs, hand, piles, heights, info, (chances, buffer), model)
        if best >= 0:
            return best
    if not discards:
        return END_TURN if legal[g, END_TURN] else first
    return residual_discard(legal, g, needs, hand, piles, heights, info, chances, buffer, parameters, model)


# ---------------------------------------------------------------------------------- on the rules engine
@jit
def observed_view(x, parameters):
    """The teacher's view of the turn (:func:`agents.batched.learned.learned_view`'s arrays) from the observation
    ``x`` of a two-player table: the same numbers its record gives (the observation shows what the teacher reads:
    the visible piles, the stockpile tops and sizes, the ``unseen`` counts)."""
    needs, hand, piles, heights, info = position_arrays()
    read_observation(x, needs, hand, piles, heights, info)
    chances = np.zeros((CHANCE_ROWS, WILD + 1), dtype=np.float64)
    buffer = np.zeros(BUFFER_SIZE, dtype=np.float64)
    can_draw = info[I_CAN_DRAW]
    info[I_STALLED] = can_draw == 0
    info[I_SWITCHES] = ON_CARD_COUNTING
    unseen = np.zeros(WILD + 1, dtype=np.int64)
    for value in range(1, WILD + 1):
        unseen[value] = raw(x, UNSEEN_AT + value - 1)
    odds_of_unseen(unseen, chances[ODDS_ROW])
    rival = seat_base(1)
    rival_piles = np.zeros((NUM_DISCARD_PILES, DISCARD_DEPTH), dtype=np.int64)
    rival_heights = np.zeros(NUM_DISCARD_PILES, dtype=np.int64)
    read_piles(x, 1, rival_piles, rival_heights)
    target = one_hot_value(x, rival + STOCK_TOP_AT, NUM_VALUES)
    rival_chances(target, min(HAND_SIZE, raw(x, rival + HAND_SIZE_AT) + can_draw), rival_piles, rival_heights,
                  chances[ODDS_ROW], chances[0])
    info[I_OPPONENT_TOP] = target
    info[I_OPPONENTS] = 1
    buffer[:NUM_PARAMETERS] = parameters
    buffer[SEAT_AT] = SEAT_WEIGHTS[0]
    size = raw(x, rival + STOCK_SIZE_AT)
    buffer[INVERSE_SIZE_AT] = 1.0 / size if size else 0.0
    return needs, hand, piles, heights, info, chances, buffer


@jit
def observed_action(legal, x, parameters, net, scales, top, layers, zero):
    """The residual bot's action from the observation ``x`` of a two-player table and its mask ``legal[0]``
    (:func:`residual_decision`'s other arguments): the rules engine's twin of the batched engine's decision."""
    count, first, plays, discards = legal_counts(legal, 0)
    if count <= 1:
        return first
    return view_action(legal, 0, observed_view(x, parameters), parameters, x, net, scales, top, layers, zero)


@jit
def residual_actions(games, legal, cfg, rows, parameters, observations, net, scales, top, out):
    """``out[i]`` := the residual bot's action in game ``rows[i]`` (observation ``observations[i]``; ``top``: the
    teacher's best stops the correction ranks, 0 all)."""
    drawn_actions(games, legal, cfg, rows, parameters, observations, net, scales, top,
                  np.full(rows.shape[0], -1, dtype=np.int64), out)


@jit
def drawn_actions(games, legal, cfg, rows, parameters, observations, net, scales, top, picks, out):
    """:func:`residual_actions`, the move in game ``rows[i]`` made toward its ``picks[i]``-th kept stop where
    ``picks[i]`` >= 0 (``top`` > 0; learning draws it: :func:`candidate_rows`)."""
    layers = float_layers(net)
    zero = is_zero(net)
    for i in range(rows.shape[0]):
        g = rows[i]
        out[i] = residual_decision(games[g], legal, g, cfg, parameters, observations[i], net, scales, top, layers,
                                   zero, picks[i])


@jit
def candidate_rows(games, legal, cfg, rows, parameters, observations, net, top, out_blocks, out_values, out_firsts,
                   out_counts):
    """For the decision in game ``rows[i]``: ``out_blocks[i, k]`` := the inputs then the features
    (:data:`FEATURE_UNIT`) of the ``k``-th stop the teacher's search keeps (its ``top`` best by ``v``, in the order
    found), ``out_values[i, k]`` := its ``v``, ``out_firsts[i, k]`` := the first play toward it (-1: stopping now);
    ``out_counts[i]`` := how many, 0 where there is no choice among stops: no play, a play that wins, fewer than two
    kept, or one whose plays took a card the observation does not show (``r`` cannot read it)."""
    features_at = net[0].shape[0] - NUM_FEATURES
    units = np.empty(NUM_FEATURES, dtype=np.int64)
    for i in range(rows.shape[0]):
        g = rows[i]
        out_counts[i] = 0
        count, first, plays, discards = legal_counts(legal, g)
        if count <= 1 or not plays:
            continue
        needs, hand, piles, heights, info, chances, buffer = learned_view(games[g], cfg, parameters)
        win, candidates, work = kept_stops(legal, g, needs, hand, piles, heights, info, (chances, buffer), top)
        values, serials, firsts, kept_needs, kept_hands, kept_heights, kept_done, state = candidates
        kept = min(state[0], top)
        if win >= 0 or kept < 2:
            continue
        x = observations[i]
        view_needs, view_hand, view_piles, view_heights0, view_info, root = decision_arrays(x, net)
        q, expected, changed_at, changed_by = root[1], root[3], root[4], root[5]
        view_heights = np.zeros_like(view_heights0)
        order = np.argsort(serials[:kept])
        readable = True
        for k in range(kept):
            c = order[k]
            if not view_heights_of(kept_heights[c], heights, view_heights0, view_heights):
                readable = False
                break
            changes = stop_input_changes(kept_needs[c], kept_hands[c], view_heights, kept_done[c], needs,
                                         view_heights0, view_piles, view_info, x, expected, net[6], q, changed_at,
                                         changed_by)
            out_blocks[i, k] = q
            for m in range(changes):
                out_blocks[i, k, changed_at[m]] += changed_by[m]
            out_values[i, k] = teacher_value(kept_needs[c], kept_hands[c], kept_heights[c], kept_done[c], needs, hand,
                                             heights, piles, info, chances, buffer, work)
            feature_units(buffer[FEATURES_AT:], units)
            out_blocks[i, k, features_at:] = units
            out_firsts[i, k] = firsts[c]
        if readable:
            out_counts[i] = kept


# ---------------------------------------------------------------------------------- what learning records
@jit
def root_row(record, cfg, parameters, x, net, out):
    """``out`` := the inputs then the features (:data:`FEATURE_UNIT`) of the root stop of the decision in game
    record ``record`` (observation ``x``); returns the teacher's value ``v`` of it, the teacher's view of the turn
    and ``r``'s (:func:`agents.batched.learned.learned_view`, :func:`agents.batched.neural.decision_arrays`)."""
    teacher = learned_view(record, cfg, parameters)
    needs, hand, piles, heights, info, chances, buffer = teacher
    view = decision_arrays(x, net)
    units = np.empty(NUM_FEATURES, dtype=np.int64)
    value = root_stop(needs, hand, heights, piles, info, chances, buffer, units)
    out[:] = view[5][1]
    out[net[0].shape[0] - NUM_FEATURES:] = units
    return value, teacher, view


@jit
def turn_start_rows(games, cfg, rows, parameters, observations, net, out_rows):
    """``out_rows[i]`` := the inputs then the features of the root stop of the decision in game ``rows[i]``: at a
    turn's first decision, the turn's start."""
    for i in range(rows.shape[0]):
        root_row(games[rows[i]], cfg, parameters, observations[i], net, out_rows[i])


@jit
def turn_records(games, legal, cfg, rows, parameters, observations, net, actions, out_rows, out_values):
    """For the seat to act in game ``rows[i]`` that discards ``actions[i]``: ``out_rows[i, 0]`` := the inputs then
    the features (:data:`FEATURE_UNIT`) of the stop it discards from (the root), ``out_rows[i, 1]`` := those of
    the turn end; ``out_values[i]`` := (the teacher's value ``v`` of the stop, the discard's score ``s``)."""
    features_at = net[0].shape[0] - NUM_FEATURES
    scores = np.zeros(END_TURN - FIRST_DISCARD, dtype=np.float64)
    for i in range(rows.shape[0]):
        g = rows[i]
        value, teacher, view = root_row(games[g], cfg, parameters, observations[i], net, out_rows[i, 0])
        needs, hand, piles, heights, info, chances, buffer = teacher
        view_needs, view_hand, view_piles, view_heights, view_info, root = view
        out_values[i, 0] = value
        discard_scores(legal, g, needs, hand, piles, heights, info, chances[ODDS_ROW], parameters[NUM_FEATURES:],
                       scores)
        out_values[i, 1] = scores[actions[i] - FIRST_DISCARD]
        turn_end_inputs(actions[i], view_needs, view_hand, view_piles, view_heights, view_info, net, root,
                        out_rows[i, 1])
        out_rows[i, 1, features_at:] = out_rows[i, 0, features_at:]


@jit
def root_logits(games, legal, cfg, rows, parameters, observations, net, scales, out):
    """``out[i]`` := the model's logit of stopping at the root of the decision in game ``rows[i]`` as its search
    values it: ``a * (v + r * c / a) + b`` (for tests)."""
    for i in range(rows.shape[0]):
        g = rows[i]
        needs, hand, piles, heights, info, chances, buffer = learned_view(games[g], cfg, parameters)
        model = residual_model(observations[i], net, scales, float_layers(net))
        done = np.zeros(2, dtype=np.int64)
        work = np.empty(NUM_DISCARD_PILES, dtype=np.int64)
        worth = residual_value(needs, hand, heights, done, needs, hand, heights, piles, info, (chances, buffer),
                               model, work)
        out[i] = scales[A] * worth + scales[B]
