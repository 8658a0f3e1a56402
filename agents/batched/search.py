"""The whole-turn search the kernel bots share: ``planner``, ``expert``, ``learned`` and ``neural`` play with it.

A bot gives the search one kernel, its *valuation* (the worth of stopping in a position: what the plays up
to it gained and what the piles it leaves promise); :func:`turn_search` compiles the search around it and
returns the bot's ``best_first_play``: every sequence of plays from the cards the seat can see, depth first
in the order of ``agents.planner`` (stockpile tops, then discard tops, then hand numbers, then SKIP-BO
cards, per distinct need), each position valued once (a memo keyed by :func:`position_key`), and the
first play of the best sequence (-1 when stopping, that is discarding, is best). ``agents.planner``'s
``_Turn`` is its Python twin; read that module for what the search means.

**A position** is four arrays, one row per depth of the search: ``needs[slot]`` (the value each building
pile needs next), ``hand[value]`` (copies of each value held, 13 the SKIP-BO cards), ``heights[side, pile]``
(how many cards of each visible discard pile are left, side 0 mine, 1 the partner's) and ``done[side]``
(whether my, or my partner's, stockpile top was played). :func:`position_arrays` makes the root's;
:func:`read_position` fills them from a game's record (a bot reading an observation fills them itself).

**The turn's facts** that stay fixed during the search are the integers of ``info``, indexed by the
``I_`` names below; ``threat`` (or ``chances``) and ``weights`` are the valuation's own, passed through.
"""

from __future__ import annotations

import numpy as np

from skipbo_env.actions import (
    DISCARD_SOURCE,
    END_TURN,
    FIRST_DISCARD,
    NUM_ACTIONS,
    PARTNER_DISCARD_SOURCE,
    PARTNER_STOCK_SOURCE,
    STOCK_SOURCE,
)
from skipbo_env.cards import NUM_BUILDING_PILES, NUM_DISCARD_PILES, TOP_VALUE, WILD
from skipbo_env.encoding import DISCARD_DEPTH
from skipbo_env.vector.jit import hand_play_id, jit, named_jit, pile_of, play_id, source_of
from skipbo_env.vector.kernels import partner_of, stock_top, stockpile_of
from agents import planner_weights
from agents.planner_weights import WIN

# ---------------------------------------------------------------------------------- sizes and the turn's facts
MAX_MOVES = NUM_BUILDING_PILES * (2 + 2 * NUM_DISCARD_PILES + 2)
"""Plays from one search position: per distinct need two stockpiles, eight discard tops, a hand number, a wild."""
MEMO_START = 256
"""Slots of a decision's memo table at first (it doubles when half full)."""
EMPTY = -1
"""A free slot of the memo table (no position key is negative)."""
TIE_MARGIN = 1e-9
"""A first play must beat stopping (and every earlier first play) by more than this."""
MAX_OPPONENTS = 5
PARTNER_ROW = MAX_OPPONENTS
"""Row of a valuation's ``threat`` (or ``chances``) that holds the partner's chances; rows ``0 ..`` are the
opponents' in the order they play after the seat to act."""
SEAT_WEIGHTS = np.array(planner_weights.SEAT_WEIGHTS)
"""How much each opponent's chance weighs, by its rank after the seat to act (``agents.planner_weights``)."""

# info[...]: the facts of the turn, fixed during the search
(I_STOCK_TOP, I_STOCK_SIZE, I_PARTNER_TOP, I_PARTNER_SIZE, I_PARTNERS, I_SHARED, I_EITHER, I_CAN_DRAW, I_STALLED,
 I_PARTNER_SEAT, I_OPPONENTS, I_HAND_SIZE, I_PILE_CARDS, I_SWITCHES, I_OPPONENT_TOP) = range(15)
"""My stockpile's top and size; my partner's (0 without a partner stockpile); whether I have a partner,
whether we share a stockpile, whether either of us emptying it wins; the cards left to draw (draw and
completed piles); whether the hand is stalled (the valuation's to set); whether a partner stockpile is
searched; how many opponents; my hand's size; the visible discard cards (mine and my partner's); the bot's
switch mask (its to set); from ``I_OPPONENT_TOP`` on, each opponent's stockpile top."""
INFO_SIZE = I_OPPONENT_TOP + MAX_OPPONENTS


# ---------------------------------------------------------------------------------- what the seat sees
@jit
def read_visible_piles(r, seat, piles, heights):
    """The top ``DISCARD_DEPTH`` cards of each discard pile of ``seat``, bottom to top (``decode_observation``)."""
    for pile in range(NUM_DISCARD_PILES):
        length = r.discard_len[seat, pile]
        shown = min(length, DISCARD_DEPTH)
        for k in range(shown):
            piles[pile, k] = r.discard[seat, pile, length - shown + k]
        heights[pile] = shown


@jit
def view_heights_of(heights, heights0, view_heights0, out):
    """``out`` := the observation's discard pile heights (root: ``view_heights0``) at the search position of pile
    heights ``heights`` (root: ``heights0``); False when its plays took a card the observation does not show."""
    for side in range(2):
        for p in range(NUM_DISCARD_PILES):
            left = view_heights0[side, p] - (heights0[side, p] - heights[side, p])
            if left < 0:
                return False
            out[side, p] = left
    return True


@jit
def read_position(r, cfg, needs, hand, piles, heights, info):
    """What the planner's and the expert's searches read from the record (as ``agents.planner._Turn``
    from the observation): the needs, the hand, the visible discard piles (mine and the partner's),
    the stockpiles and the counts of ``info`` (all but ``I_STALLED``, ``I_SWITCHES`` and the opponents)."""
    seat = r.seat
    for slot in range(NUM_BUILDING_PILES):
        needs[slot] = r.building_len[slot] + 1
    hand_size = 0
    for value in range(1, WILD + 1):
        hand[value] = r.hand[seat, value]
        hand_size += hand[value]
    read_visible_piles(r, seat, piles[0], heights[0])
    partner = partner_of(cfg, seat)
    shared = cfg.shared_stock
    if partner >= 0:
        read_visible_piles(r, partner, piles[1], heights[1])
    own = stockpile_of(cfg, seat)
    info[I_STOCK_TOP] = stock_top(r, cfg, own)
    info[I_STOCK_SIZE] = r.stock_len[own]
    has_partner_seat = partner >= 0 and not shared
    if has_partner_seat:
        info[I_PARTNER_TOP] = stock_top(r, cfg, stockpile_of(cfg, partner))
        info[I_PARTNER_SIZE] = r.stock_len[stockpile_of(cfg, partner)]
    info[I_PARTNERS] = partner >= 0
    info[I_SHARED] = shared
    info[I_EITHER] = not cfg.team_win_both
    info[I_CAN_DRAW] = r.draw_len + r.completed_len
    info[I_PARTNER_SEAT] = has_partner_seat
    info[I_HAND_SIZE] = hand_size
    info[I_PILE_CARDS] = heights.sum()


@jit
def position_arrays():
    """Empty arrays for :func:`read_position` to fill: the building piles' needs, the hand's counts,
    both seats' discard piles and their heights, and the turn's ``info``."""
    needs = np.empty(NUM_BUILDING_PILES, dtype=np.int64)
    hand = np.zeros(WILD + 1, dtype=np.int64)
    piles = np.zeros((2, NUM_DISCARD_PILES, DISCARD_DEPTH), dtype=np.int64)
    heights = np.zeros((2, NUM_DISCARD_PILES), dtype=np.int64)
    info = np.zeros(INFO_SIZE, dtype=np.int64)
    return needs, hand, piles, heights, info


@jit
def legal_counts(legal, g):
    """``(legal ids, the first of them or -1, legal plays, legal discards)`` of game ``g``."""
    count, first, plays, discards = 0, -1, 0, 0
    for action in range(NUM_ACTIONS):
        if legal[g, action]:
            count += 1
            if first < 0:
                first = action
            plays += action < FIRST_DISCARD
            discards += FIRST_DISCARD <= action < END_TURN
    return count, first, plays, discards


@jit
def opponent_seat(r, cfg, rank):
    """The seat of the ``rank``-th opponent to play after the seat to act (partners skipped), -1 past the last."""
    n = cfg.num_players
    partner = partner_of(cfg, r.seat)
    for offset in range(1, n):
        other = (r.seat + offset) % n
        if other == partner:
            continue
        if rank == 0:
            return other
        rank -= 1
    return -1


@jit
def seat_weight(r, cfg, seat, rank, endgame):
    """``SEAT_WEIGHTS[rank]``, times ``1 + endgame / stockpile size`` when ``endgame`` and ``seat``'s stockpile
    is not empty."""
    weight = SEAT_WEIGHTS[min(rank, SEAT_WEIGHTS.shape[0] - 1)]
    size = r.stock_len[stockpile_of(cfg, seat)]
    if endgame and size:
        weight *= 1.0 + endgame / size
    return weight


# ---------------------------------------------------------------------------------- chances from the needs
@jit
def first_of_its_value(needs, slot):
    """Whether no lower slot needs the same value (the search treats equal piles as one)."""
    for earlier in range(slot):
        if needs[earlier] == needs[slot]:
            return False
    return True


@jit
def reach_from(needs, chance_from):
    """The chance a seat reaches its stockpile top from any of the piles ``needs`` (distinct needs in slot order)."""
    miss_all = 1.0
    for slot in range(NUM_BUILDING_PILES):
        need = needs[slot]
        if not first_of_its_value(needs, slot):
            continue
        miss_all *= 1.0 - chance_from[need]
    return 1.0 - miss_all


# ---------------------------------------------------------------------------------- positions
@jit
def play_into(needs, hand, heights, done, d, action, info):
    """``_Turn.apply``: position ``d + 1`` := position ``d`` after ``action``; True when the play wins the hand."""
    c = d + 1
    needs[c] = needs[d]
    hand[c] = hand[d]
    heights[c] = heights[d]
    done[c] = done[d]
    source = source_of(action)
    slot = pile_of(action)
    if source < STOCK_SOURCE:
        hand[c, source + 1] -= 1
    elif source == STOCK_SOURCE:
        done[c, 0] = 1
    elif source < PARTNER_STOCK_SOURCE:
        heights[c, 0, source - DISCARD_SOURCE] -= 1
    elif source == PARTNER_STOCK_SOURCE:
        done[c, 1] = 1
    else:
        heights[c, 1, source - PARTNER_DISCARD_SOURCE] -= 1
    need = needs[d, slot] + 1
    needs[c, slot] = 1 if need > TOP_VALUE else need
    if source == STOCK_SOURCE or source == PARTNER_STOCK_SOURCE:
        return wins(done[c], info)
    return False


@jit
def wins(done, info):
    """``_Turn.wins``: whether the stockpile plays of a position end the hand in this side's favour."""
    own_empty = done[0] == 1 and info[I_STOCK_SIZE] == 1
    if not info[I_PARTNERS] or info[I_SHARED]:
        return own_empty
    partner_size = info[I_PARTNER_SIZE]
    partner_empty = (done[1] == 1 and partner_size == 1) or partner_size == 0
    own_empty = own_empty or info[I_STOCK_SIZE] == 0
    if info[I_EITHER]:
        return own_empty or partner_empty
    return own_empty and partner_empty


@jit
def list_moves(needs, hand, heights, done, piles, info, moves):
    """``_Turn.moves``: the plays of a position into ``moves``, in the planner's order; returns how many."""
    count = 0
    top = info[I_STOCK_TOP]
    partner_top = info[I_PARTNER_TOP]
    for slot in range(NUM_BUILDING_PILES):
        if not first_of_its_value(needs, slot):
            continue
        need = needs[slot]
        if not done[0] and top and (top == need or top == WILD):
            moves[count] = play_id(STOCK_SOURCE, slot)
            count += 1
        if not done[1] and partner_top and (partner_top == need or partner_top == WILD):
            moves[count] = play_id(PARTNER_STOCK_SOURCE, slot)
            count += 1
        for pile in range(NUM_DISCARD_PILES):
            height = heights[0, pile]
            if height:
                card = piles[0, pile, height - 1]
                if card == need or card == WILD:
                    moves[count] = play_id(DISCARD_SOURCE + pile, slot)
                    count += 1
            height = heights[1, pile]
            if height:
                card = piles[1, pile, height - 1]
                if card == need or card == WILD:
                    moves[count] = play_id(PARTNER_DISCARD_SOURCE + pile, slot)
                    count += 1
        if hand[need]:
            moves[count] = hand_play_id(need, slot)
            count += 1
        if hand[WILD]:
            moves[count] = hand_play_id(WILD, slot)
            count += 1
    return count


@jit
def sorted_needs(needs):
    """The building piles' needs in increasing order, as a tuple (a sorting network: no allocation in a search)."""
    a, b, c, d = needs[0], needs[1], needs[2], needs[3]
    if a > b:
        a, b = b, a
    if c > d:
        c, d = d, c
    if a > c:
        a, c = c, a
    if b > d:
        b, d = d, b
    if b > c:
        b, c = c, b
    return (a, b, c, d)


@jit
def position_key(needs, hand, heights, done, hand0, heights0):
    """One integer per search position (``_Turn.value``'s memo key: the needs as a multiset, the rest as is)."""
    a, b, c, e = sorted_needs(needs)
    key = np.int64(((a * 13 + b) * 13 + c) * 13 + e)
    for value in range(1, WILD + 1):
        key = key * (hand0[value] + 1) + hand[value]
    for side in range(2):
        for pile in range(NUM_DISCARD_PILES):
            key = key * (heights0[side, pile] + 1) + heights[side, pile]
    return (key * 2 + done[0]) * 2 + done[1]


@jit
def cards_in(hand):
    """How many cards ``hand`` (copies per value) holds."""
    count = 0
    for value in range(1, WILD + 1):
        count += hand[value]
    return count


@jit
def discard_plays(heights, heights0, piles, info):
    """``(discard tops played, SKIP-BO cards among them)`` from the visible piles (heights ``heights0``) down to
    ``heights``."""
    played = info[I_PILE_CARDS]
    wilds = 0
    for side in range(2):
        for pile in range(NUM_DISCARD_PILES):
            played -= heights[side, pile]
            for k in range(heights[side, pile], heights0[side, pile]):
                wilds += piles[side, pile, k] == WILD
    return played, wilds


# ---------------------------------------------------------------------------------- the memo
@jit
def memo_slot(memo_keys, key):
    """The slot of ``key`` in the open-addressing table ``memo_keys`` (a power of two long), or the free slot for it."""
    mask = memo_keys.shape[0] - 1
    slot = ((key * np.int64(-7046029254386353131)) >> 32) & mask
    while memo_keys[slot] != key and memo_keys[slot] != EMPTY:
        slot = (slot + 1) & mask
    return slot


@jit
def memo_grown(memo_keys, memo_values):
    """The table twice as large, holding the same entries (its values of ``memo_values``' type: the search's
    values, or the neural search's stop rows)."""
    keys = np.full(2 * memo_keys.shape[0], EMPTY, dtype=np.int64)
    values = np.concatenate((memo_values, memo_values))  # room for twice the entries; an empty key's is never read
    for i in range(memo_keys.shape[0]):
        if memo_keys[i] != EMPTY:
            slot = memo_slot(keys, memo_keys[i])
            keys[slot] = memo_keys[i]
            values[slot] = memo_values[i]
    return keys, values


# ---------------------------------------------------------------------------------- the search
@jit
def root_rank(action):
    """``agents.planner._root_order``: stockpile plays, then discard tops, then hand numbers, then hand wilds."""
    source = source_of(action)
    if source == STOCK_SOURCE or source == PARTNER_STOCK_SOURCE:
        return 0
    if source >= DISCARD_SOURCE:
        return 1
    if source == WILD - 1:
        return 3
    return 2


@jit
def search_room(info):
    """Room for one decision's search (``info``: the turn's facts): the positions' per-depth arrays and the frames
    (``needs, hand, heights, done, moves, move_count, next_move, best, keys``), the memo (``memo_keys,
    memo_values``) and scratch room for four pile heights."""
    depth = 3 + info[I_HAND_SIZE] + info[I_PILE_CARDS] + 2
    frames = (np.empty((depth, NUM_BUILDING_PILES), dtype=np.int64), np.empty((depth, WILD + 1), dtype=np.int64),
              np.empty((depth, 2, NUM_DISCARD_PILES), dtype=np.int64), np.zeros((depth, 2), dtype=np.int64),
              np.empty((depth, MAX_MOVES), dtype=np.int64), np.zeros(depth, dtype=np.int64),
              np.zeros(depth, dtype=np.int64), np.zeros(depth, dtype=np.float64), np.zeros(depth, dtype=np.int64))
    return (frames, np.full(MEMO_START, EMPTY, dtype=np.int64), np.empty(MEMO_START, dtype=np.float64),
            np.empty(NUM_DISCARD_PILES, dtype=np.int64))


def subtree_search(valuation, bot: str, max_positions: int = 0):
    """The search below one position of a bot whose worth of stopping in a position is the kernel ``valuation``
    (``valuation(needs, hand, heights, done, needs0, hand0, heights0, piles, info, threat, weights, work)``: a
    position, the root's arrays, the turn's facts, the bot's own two arrays and scratch room for four pile
    heights; ``agents.batched.planner.stop_value`` is one): returns its ``search_value`` kernel, which
    :func:`turn_search`'s ``best_first_play`` calls for each first play. ``max_positions`` > 0: once a decision's
    search has valued that many positions it values the positions it enters without looking past them (a bound
    on the time a decision takes; 0, the hand-written bots': no bound).

    The kernels are named after ``bot``: numba names a function by its qualified name and a counter of the
    process that compiled it, and two kernels of one name (two closures of this function) must not meet in one
    program (see ``skipbo_env.vector.jit``).
    """

    def search_value(base, needs, hand, heights, done, needs0, hand0, heights0, piles, info, threat, weights, work,
                     memo_keys, memo_values, memo_count, moves, move_count, next_move, best, keys):
        """``_Turn.value`` of position ``base``: the best value reachable (stopping included), depth first in the
        planner's move order, every position's value remembered in ``memo`` the first time it is found.

        The positions live in per-depth arrays (``_Turn``'s state tuple, one row per depth):
        ``needs[d, slot]``, ``hand[d, value]``, ``heights[d, side, pile]`` (side 0 mine, 1 the
        partner's) and ``done[d]`` (own, partner's stockpile top played); ``moves[d]``,
        ``move_count[d]``, ``next_move[d]``, ``best[d]`` and ``keys[d]`` are the frame of depth ``d``.
        The memo (``memo_keys``, ``memo_values``, ``memo_count`` entries) grows as it fills; returns
        ``(value, memo_keys, memo_values, memo_count)``.
        """
        d = base
        entering = True
        while True:
            if entering:
                entering = False
                key = position_key(needs[d], hand[d], heights[d], done[d], hand0, heights0)
                slot = memo_slot(memo_keys, key)
                if memo_keys[slot] == key:
                    result = memo_values[slot]
                    if d == base:
                        return result, memo_keys, memo_values, memo_count
                    d -= 1
                    if result > best[d]:
                        best[d] = result
                    continue
                keys[d] = key
                best[d] = valuation(needs[d], hand[d], heights[d], done[d], needs0, hand0, heights0, piles, info,
                                    threat, weights, work)
                if max_positions and memo_count >= max_positions:
                    move_count[d] = 0
                else:
                    move_count[d] = list_moves(needs[d], hand[d], heights[d], done[d], piles, info, moves[d])
                next_move[d] = 0
            if next_move[d] < move_count[d]:
                action = moves[d, next_move[d]]
                next_move[d] += 1
                if play_into(needs, hand, heights, done, d, action, info):
                    if WIN > best[d]:
                        best[d] = WIN
                else:
                    d += 1
                    entering = True
                continue
            result = best[d]
            if 2 * (memo_count + 1) > memo_keys.shape[0]:
                memo_keys, memo_values = memo_grown(memo_keys, memo_values)
            slot = memo_slot(memo_keys, keys[d])
            memo_keys[slot] = keys[d]
            memo_values[slot] = result
            memo_count += 1
            if d == base:
                return result, memo_keys, memo_values, memo_count
            d -= 1
            if result > best[d]:
                best[d] = result

    return named_jit(search_value, f"search_value_{bot}")


def turn_search(valuation, bot: str, max_positions: int = 0):
    """The whole-turn search of a bot whose worth of stopping in a position is the kernel ``valuation``
    (:func:`subtree_search`'s): returns its ``best_first_play`` kernel, named after ``bot``.

    ``agents.expert`` searches with ``agents.planner``'s search and its own valuation; here each bot
    gets the search compiled around its valuation.
    """
    search_value = subtree_search(valuation, bot, max_positions)

    def best_first_play(search, legal, g, needs0, hand0, piles, heights0, info, threat, weights):
        """``_Turn.best_first_play``: the first play of the best sequence, -1 when stopping (discarding) is best
        (``search`` False: looking one play ahead only), and the positions the search valued (a measure of
        its work that does not depend on the machine)."""
        frames, memo_keys, memo_values, work = search_room(info)
        needs, hand, heights, done, moves, move_count, next_move, best, keys = frames
        memo_count = np.int64(0)  # not the literal 0: one compile of search_value
        needs[0] = needs0
        hand[0] = hand0
        heights[0] = heights0
        best_value = valuation(needs[0], hand[0], heights[0], done[0], needs0, hand0, heights0, piles, info, threat,
                               weights, work)
        best_action = -1
        for rank in range(4):
            for action in range(FIRST_DISCARD):
                if not legal[g, action] or root_rank(action) != rank:
                    continue
                if play_into(needs, hand, heights, done, 0, action, info):
                    value = WIN
                elif search:
                    value, memo_keys, memo_values, memo_count = search_value(
                        1, needs, hand, heights, done, needs0, hand0, heights0, piles, info, threat, weights, work,
                        memo_keys, memo_values, memo_count, moves, move_count, next_move, best, keys)
                else:
                    value = valuation(needs[1], hand[1], heights[1], done[1], needs0, hand0, heights0, piles, info,
                                      threat, weights, work)
                if value > best_value + TIE_MARGIN:
                    best_value, best_action = value, action
        return best_action, memo_count

    return named_jit(best_first_play, f"best_first_play_{bot}")
