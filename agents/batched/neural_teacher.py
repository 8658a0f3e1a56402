"""The teacher's decisions as lists of the neural bot's inputs: what the neural network is first fitted to.

At every decision of the teacher (a learned bot: ``learned-2p``, ...), the turn search lists the places
the turn could stop and values each (:mod:`agents.batched.learned`). :func:`teacher_lists` plays the
teacher's move and writes, for that decision, a *stop list*: the neural bot's inputs of the stop the teacher
values most (row 0) and of up to ``K - 1`` other stops drawn uniformly (a reservoir sample in the search's
order, from a generator seeded per decision), each with the teacher's value. When the teacher discards, a
*discard list*: the inputs of the turn end each legal discard reaches, and which one it chose.
:func:`decision_roots` writes the inputs of the position a decision is made in, as a stop (what the hand's
result is fitted to, as a Monte-Carlo return).

A stop whose plays took a discard-pile card the observation does not show (below its top
``skipbo_env.encoding.DISCARD_DEPTH``) is valued by the teacher but not listed: the neural bot cannot
reach it.
"""

from __future__ import annotations

import numpy as np

from skipbo_env.actions import END_TURN, FIRST_DISCARD
from skipbo_env.cards import HAND_SIZE, NUM_DISCARD_PILES, WILD
from skipbo_env.vector.jit import jit
from agents.batched.expert import ODDS_ROW, planned_discard
from agents.batched.learned import SHIPPED, learned_view, stop_value as teacher_value
from agents.batched.neural import decision_arrays, root_inputs, stop_input_changes, turn_end_inputs
from agents.batched.search import legal_counts, turn_search, view_heights_of
from agents.learned_parameters import NUM_FEATURES

MAX_DISCARDS = NUM_DISCARD_PILES * HAND_SIZE
"""The most legal discards a decision has (each distinct card of a full hand on each pile)."""
MULTIPLIER, INCREMENT = 6364136223846793005, 1442695040888963407
"""Knuth's 64-bit linear congruential generator (the reservoir's draws)."""


@jit
def next_draw(state):
    """The next number of the generator in ``state[1]``, from 0 to 2**31 - 1."""
    state[1] = state[1] * MULTIPLIER + INCREMENT
    return (state[1] >> 33) & 0x7FFFFFFF


@jit
def list_stop(needs, hand, heights, done, needs0, heights0, value, listing):
    """Add the stop at a search position (the teacher's value ``value``) to the decision's stop list."""
    x, net, root, view_piles, view_heights0, view_info, rows, values, serials, state, best_row, best_value, \
        view_heights = listing
    if not view_heights_of(heights, heights0, view_heights0, view_heights):
        return
    serial = state[0]
    state[0] += 1
    room = rows.shape[0] - 1
    slot = serial + 1 if serial < room else 1 + next_draw(state) % (serial + 1)
    best = serial == 0 or value > best_value[0]
    if slot > room and not best:  # neither sampled nor the best: no need of its inputs
        return
    q, expected, changed_at, changed_by = root[1], root[3], root[4], root[5]
    count = stop_input_changes(needs, hand, view_heights, done, needs0, view_heights0, view_piles, view_info, x,
                               expected, net[6], q, changed_at, changed_by)
    if slot <= room:
        rows[slot] = q
        for k in range(count):
            rows[slot, changed_at[k]] += changed_by[k]
        values[slot] = value
        serials[slot] = serial
    if best:
        best_value[0] = value
        best_row[:] = q
        for k in range(count):
            best_row[changed_at[k]] += changed_by[k]
        state[2] = serial


@jit
def listing_value(needs, hand, heights, done, needs0, hand0, heights0, piles, info, teacher, listing, work):
    """The teacher's value of a stop (``teacher``: its chances and buffer), listing the stop on the way."""
    chances, buffer = teacher
    value = teacher_value(needs, hand, heights, done, needs0, hand0, heights0, piles, info, chances, buffer, work)
    list_stop(needs, hand, heights, done, needs0, heights0, value, listing)
    return value


best_first_play = turn_search(listing_value, "neural_teacher")
"""The teacher's whole-turn search, listing every stop it values."""


@jit
def finish_stop_list(listing, out_rows, out_values):
    """The decision's stop list into ``out_rows``/``out_values`` (the best first); returns its length."""
    rows, values, serials, state, best_row, best_value = listing[6:12]
    if state[0] == 0:
        return 0
    length = min(state[0], rows.shape[0] - 1) + 1
    rows[0] = best_row
    values[0] = best_value[0]
    for slot in range(1, length):
        if serials[slot] == state[2]:  # the best was also drawn: keep it once
            rows[slot] = rows[length - 1]
            values[slot] = values[length - 1]
            length -= 1
            break
    out_rows[:length] = rows[:length]
    out_values[:length] = values[:length]
    return length


@jit
def teacher_decision(r, legal, g, cfg, parameters, x, net, seed, stop_rows, stop_values, discard_rows, lengths):
    """The teacher's action in game ``g`` (record ``r``, observation ``x``); its lists into the ``out`` arrays,
    ``lengths`` := (stop list length, discard list length, the chosen discard's index in its list)."""
    lengths[:] = 0
    count, first, plays, discards = legal_counts(legal, g)
    if count <= 1:
        return first
    needs, hand, piles, heights, info, chances, buffer = learned_view(r, cfg, parameters)
    view_needs, view_hand, view_piles, view_heights, view_info, root = decision_arrays(x, net)
    if plays:
        k, width = stop_rows.shape
        state = np.array([0, seed, 0], dtype=np.int64)
        listing = (x, net, root, view_piles, view_heights, view_info, np.zeros((k, width), dtype=np.int64),
                   np.zeros(k, dtype=np.float64), np.full(k, -1, dtype=np.int64), state,
                   np.zeros(width, dtype=np.int64), np.zeros(1, dtype=np.float64), np.zeros_like(view_heights))
        best, _ = best_first_play(True, legal, g, needs, hand, piles, heights, info, (chances, buffer), listing)
        lengths[0] = finish_stop_list(listing, stop_rows, stop_values)
        if best >= 0:
            return best
    if not discards:
        return END_TURN if legal[g, END_TURN] else first
    action = planned_discard(legal, g, needs, hand, piles, heights, info, chances[ODDS_ROW],
                             parameters[NUM_FEATURES:])
    listed = 0
    for other in range(FIRST_DISCARD, END_TURN):
        if legal[g, other]:
            turn_end_inputs(other, view_needs, view_hand, view_piles, view_heights, view_info, net, root,
                            discard_rows[listed])
            if other == action:
                lengths[2] = listed
            listed += 1
    lengths[1] = listed
    return action


@jit
def teacher_lists(games, legal, cfg, rows, teacher, observations, net, seeds, actions, stop_rows, stop_values,
                  discard_rows, lengths):
    """:func:`teacher_decision` in game ``rows[i]`` (observation ``observations[i]``, generator seed ``seeds[i]``)
    into ``actions[i]`` and row ``i`` of the list arrays; ``teacher``: the index of the teacher's parameters in
    ``agents.batched.learned.SHIPPED`` (the learned bot's own constants: one compile serves both)."""
    for i in range(rows.shape[0]):
        g = rows[i]
        actions[i] = teacher_decision(games[g], legal, g, cfg, SHIPPED[teacher], observations[i], net, seeds[i],
                                      stop_rows[i], stop_values[i], discard_rows[i], lengths[i])


@jit
def decision_roots(observations, net, out):
    """``out[i]`` := the network's inputs of the position of observation ``observations[i]``, as a stop (its
    discard still to make: the root of the decision's search)."""
    input_of = net[6]
    expected = np.zeros(WILD + 1, dtype=np.int64)
    for i in range(observations.shape[0]):
        root_inputs(observations[i], input_of, out[i], expected)


def warm_up(games, legal, cfg, rows, observations, net) -> None:
    """Compile (or load from numba's cache) :func:`teacher_lists` as the training calls it, on the games of
    ``rows`` (their observations ``observations``), with the network arrays ``net``."""
    count, width = len(rows), net[0].shape[0]
    teacher_lists(games, legal, cfg, np.asarray(rows, dtype=np.int64), 0, np.ascontiguousarray(observations), net,
                  np.arange(count, dtype=np.int64), np.empty(count, dtype=np.int64),
                  np.zeros((count, 2, width), dtype=np.int64), np.zeros((count, 2)),
                  np.zeros((count, MAX_DISCARDS, width), dtype=np.int64), np.zeros((count, 3), dtype=np.int64))
    decision_roots(np.ascontiguousarray(observations), net, np.zeros((count, width), dtype=np.int64))
