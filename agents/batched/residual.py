"""``residual``: the learned bot's value of a stop plus a learned correction, as kernels (``td.start: teacher``).

The teacher is a learned bot (:mod:`agents.batched.learned`, ``learned-2p``): it values a stop (a place the turn
could stop, its discard still to make) as ``v = STOCK * (w . features)``, 16 hand-made features, and discards by
the expert's planned discard, the legal discard of the best score ``s`` (:func:`agents.batched.expert.discard_scores`).
The residual model gives the logit of the seat's chance to win the hand:

- at a stop: ``a * v + b + r(inputs, features)``;
- at a turn end (after the discard ``d``, before the next seat moves): ``a * v + b + a_d * s_d + r(inputs,
  features)``, ``v`` and ``features`` those of the stop the discard is made from.

``inputs`` are the neural bot's inputs of the position (:mod:`agents.batched.neural`, read from the observation),
``features`` the teacher's 16 features of the stop, each entered as the integer ``rint(feature * FEATURE_UNIT)``,
and ``r`` a network of the neural bot's integer format whose first layer reads both (its rows: the inputs, then
the features). ``a > 0``, ``a_d > 0`` and ``b`` are numbers of the model (``scales = [a, b, a_d]``).

**How it decides.** One search, the teacher's (:func:`agents.batched.search.turn_search`, the same plays in the
same order, the same memo), each stop valued by the teacher and corrected by ``r``: the search ranks ``v + r / a``
(the logit over ``a``, less the constant ``b / a``: in the teacher's units, so its margins are the teacher's).
When stopping is best, the discard is the legal one of the highest ``s_d + r(turn end) / a_d`` (the teacher's
ties and margin). With ``r`` = 0 (its last layer zero: where training starts) both sums are the teacher's own
numbers, and the bot makes exactly the teacher's moves.

The kernels read the game's record (what the teacher reads, as :mod:`agents.batched.learned` does) and the
observation of the seat to act (what ``r`` reads), as :mod:`agents.batched.neural_teacher` does.
"""

from __future__ import annotations

import numpy as np

from skipbo_env.actions import END_TURN, FIRST_DISCARD
from skipbo_env.cards import NUM_DISCARD_PILES
from skipbo_env.vector.jit import discard_value_of, jit
from agents.batched.expert import ODDS_ROW, best_scored_discard, discard_scores
from agents.batched.learned import FEATURES_AT, learned_view, stop_value as teacher_value
from agents.batched.neural import (
    add_changes, decision_arrays, discard_changes, network_value, stop_input_changes, turn_end_inputs,
)
from agents.batched.neural_teacher import view_heights_of
from agents.batched.search import legal_counts, turn_search
from agents.learned_parameters import NUM_FEATURES

FEATURE_UNIT = 256
"""A feature enters ``r``'s first layer as the integer ``rint(feature * FEATURE_UNIT)``."""
A, B, A_DISCARD = range(3)
"""The model's numbers in ``scales``: the teacher's value's scale, the bias, the discard score's scale."""


# ---------------------------------------------------------------------------------- the correction r
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


@jit
def correction(sums, count, units, model):
    """``r`` of a position whose inputs differ from the root's by the ``count`` changes in ``root``'s change
    arrays and whose features are ``units``; ``sums``: room for the first layer's sums."""
    x, net, root, view_piles, view_heights0, view_info, view_heights, scales = model
    first, first_bias, second, second_bias, output, output_bias, input_of = net
    _, q, a0, expected, changed_at, changed_by, _, hidden = root
    sums[:] = a0
    add_changes(sums, first, changed_at, changed_by, count)
    add_features(sums, first, units)
    return network_value(sums, second, second_bias, output, output_bias[0], hidden)


@jit
def stop_correction(needs, hand, heights, done, needs0, heights0, features, model):
    """``r`` of the stop at a search position (the teacher's ``features`` of it); 0 for a stop whose plays took a
    discard-pile card the observation does not show (``r`` cannot read it)."""
    x, net, root, view_piles, view_heights0, view_info, view_heights, scales = model
    _, q, a0, expected, changed_at, changed_by, sums, _ = root
    if not view_heights_of(heights, heights0, view_heights0, view_heights):
        return 0.0
    count = stop_input_changes(needs, hand, view_heights, done, needs0, view_heights0, view_piles, view_info, x,
                               expected, net[6], q, changed_at, changed_by)
    units = np.empty(NUM_FEATURES, dtype=np.int64)
    feature_units(features, units)
    return correction(sums, count, units, model)


@jit
def residual_value(needs, hand, heights, done, needs0, hand0, heights0, piles, info, teacher, model, work):
    """The search's worth of a stop: ``v + r / a`` (the stop's logit less ``b``, over ``a``; ``teacher``: the
    teacher's chances and buffer, which holds the stop's features after it is valued)."""
    chances, buffer = teacher
    value = teacher_value(needs, hand, heights, done, needs0, hand0, heights0, piles, info, chances, buffer, work)
    r = stop_correction(needs, hand, heights, done, needs0, heights0, buffer[FEATURES_AT:], model)
    return value + r / model[7][A]


best_first_play = turn_search(residual_value, "residual")
"""The teacher's whole-turn search, each stop valued with its correction."""


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
def turn_end_correction(action, units, model):
    """``r`` of the turn end after discard ``action`` from the root (the root stop's features ``units``)."""
    x, net, root, view_piles, view_heights0, view_info, view_heights, scales = model
    _, q, a0, expected, changed_at, changed_by, sums, _ = root
    count = discard_changes(discard_value_of(action), (action - FIRST_DISCARD) % NUM_DISCARD_PILES, view_piles,
                            view_heights0, x, net[6], q, changed_at, changed_by)
    return correction(sums, count, units, model)


@jit
def residual_discard(legal, g, needs, hand, piles, heights, info, chances, buffer, parameters, model):
    """The legal discard of the highest ``s_d + r(turn end) / a_d`` (the teacher's margin and ties)."""
    scores = np.zeros(END_TURN - FIRST_DISCARD, dtype=np.float64)
    discard_scores(legal, g, needs, hand, piles, heights, info, chances[ODDS_ROW], parameters[NUM_FEATURES:], scores)
    units = np.empty(NUM_FEATURES, dtype=np.int64)
    root_stop(needs, hand, heights, piles, info, chances, buffer, units)
    for action in range(FIRST_DISCARD, END_TURN):
        if legal[g, action]:
            scores[action - FIRST_DISCARD] += turn_end_correction(action, units, model) / model[7][A_DISCARD]
    return best_scored_discard(legal, g, scores)


@jit
def residual_model(x, net, scales):
    """The arrays of one decision from observation ``x``: ``r``'s view (the neural bot's) and the model tuple
    the valuation reads."""
    view_needs, view_hand, view_piles, view_heights, view_info, root = decision_arrays(x, net)
    return (x, net, root, view_piles, view_heights, view_info, np.zeros_like(view_heights), scales)


@jit
def residual_decision(r, legal, g, cfg, parameters, x, net, scales):
    """The residual bot's action for the seat to act in game ``g`` (record ``r``, its observation ``x``); -1 when
    nothing is legal. ``parameters``: the teacher's (``agents.batched.learned.PARAMETERS``' layout); ``net``: ``r``
    in the neural bot's arrays (``first`` with a row per input, then per feature); ``scales``: ``[a, b, a_d]``."""
    count, first, plays, discards = legal_counts(legal, g)
    if count <= 1:
        return first
    needs, hand, piles, heights, info, chances, buffer = learned_view(r, cfg, parameters)
    model = residual_model(x, net, scales)
    if plays:
        best, _ = best_first_play(True, legal, g, needs, hand, piles, heights, info, (chances, buffer), model)
        if best >= 0:
            return best
    if not discards:
        return END_TURN if legal[g, END_TURN] else first
    return residual_discard(legal, g, needs, hand, piles, heights, info, chances, buffer, parameters, model)


@jit
def residual_actions(games, legal, cfg, rows, parameters, observations, net, scales, out):
    """``out[i]`` := the residual bot's action in game ``rows[i]`` (observation ``observations[i]``)."""
    for i in range(rows.shape[0]):
        g = rows[i]
        out[i] = residual_decision(games[g], legal, g, cfg, parameters, observations[i], net, scales)


# ---------------------------------------------------------------------------------- what learning records
@jit
def turn_records(games, legal, cfg, rows, parameters, observations, net, actions, out_rows, out_values):
    """For the seat to act in game ``rows[i]`` that discards ``actions[i]``: ``out_rows[i, 0]`` := the inputs then
    the features (:data:`FEATURE_UNIT`) of the stop it discards from (the root), ``out_rows[i, 1]`` := those of
    the turn end; ``out_values[i]`` := (the teacher's value ``v`` of the stop, the discard's score ``s``)."""
    features_at = net[0].shape[0] - NUM_FEATURES
    scores = np.zeros(END_TURN - FIRST_DISCARD, dtype=np.float64)
    for i in range(rows.shape[0]):
        g = rows[i]
        needs, hand, piles, heights, info, chances, buffer = learned_view(games[g], cfg, parameters)
        view_needs, view_hand, view_piles, view_heights, view_info, root = decision_arrays(observations[i], net)
        units = np.empty(NUM_FEATURES, dtype=np.int64)
        out_values[i, 0] = root_stop(needs, hand, heights, piles, info, chances, buffer, units)
        discard_scores(legal, g, needs, hand, piles, heights, info, chances[ODDS_ROW], parameters[NUM_FEATURES:],
                       scores)
        out_values[i, 1] = scores[actions[i] - FIRST_DISCARD]
        out_rows[i, 0] = root[1]
        turn_end_inputs(actions[i], view_needs, view_hand, view_piles, view_heights, view_info, net, root,
                        out_rows[i, 1])
        for side in range(2):
            out_rows[i, side, features_at:] = units


@jit
def root_logits(games, legal, cfg, rows, parameters, observations, net, scales, out):
    """``out[i]`` := the model's logit of stopping at the root of the decision in game ``rows[i]`` as its search
    values it: ``a * (v + r / a) + b`` (for tests)."""
    for i in range(rows.shape[0]):
        g = rows[i]
        needs, hand, piles, heights, info, chances, buffer = learned_view(games[g], cfg, parameters)
        model = residual_model(observations[i], net, scales)
        done = np.zeros(2, dtype=np.int64)
        work = np.empty(NUM_DISCARD_PILES, dtype=np.int64)
        worth = residual_value(needs, hand, heights, done, needs, hand, heights, piles, info, (chances, buffer),
                               model, work)
        out[i] = scales[A] * worth + scales[B]
