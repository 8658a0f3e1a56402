"""``planner`` as a batch kernel: the decision of ``agents.planner.PlannerBot`` in every position.

:func:`planner_action` reads, from the record of the game, what the planner's observation holds
for the seat to act and nothing more: its own hand, the building piles, every stockpile top and
size, every hand size, the top ``DISCARD_DEPTH`` cards of every discard pile (as
``decode_observation`` gives them), the draw and completed pile sizes, and the legal mask. It
then runs the turn search (:mod:`agents.batched.search`) with the planner's valuation
(:func:`stop_value`; read ``agents.planner`` for what the search and its weights mean): the same
sequences of plays in the same order, the same positions remembered, the same floating-point sums
in the same order, so it picks the same action, ties included. With ``smart_discard`` off its
random discard draws ``Generator.integers`` from the seat's own generator
(:mod:`skipbo_env.vector.pcg`) exactly as ``PlannerBot`` draws from ``self.rng``.

The switches of ``PlannerBot`` travel in the bot's code (its variant is the switch mask, one bit per
name of :data:`SWITCHES`: :func:`act`), so ``controllers[g, seat]`` says which planner plays a seat. The
weights and :data:`REACH` are imported from ``agents.planner_weights``.
"""

from __future__ import annotations

import numpy as np

from skipbo_env.actions import END_TURN, FIRST_DISCARD
from skipbo_env.cards import HAND_SIZE, NUM_BUILDING_PILES, NUM_DISCARD_PILES, TOP_VALUE, WILD
from skipbo_env.encoding import DISCARD_DEPTH
from skipbo_env.vector.jit import discard_id, discard_value_of, jit
from skipbo_env.vector.kernels import partner_of, stock_top, stockpile_of
from skipbo_env.vector.pcg import integers
from agents.batched import codes
from agents.batched.search import (
    I_CAN_DRAW, I_HAND_SIZE, I_OPPONENT_TOP, I_OPPONENTS, I_PARTNER_SEAT, I_STALLED, I_STOCK_TOP, I_SWITCHES,
    MAX_OPPONENTS, PARTNER_ROW, cards_in, discard_plays, first_of_its_value, legal_counts,
    opponent_seat, position_arrays, reach_from, read_position, read_visible_piles, seat_weight, turn_search,
)
from agents.planner_weights import (
    BLOCK, DISCARD_PLAY, DRAW, ENDGAME, FEED, GAP, HAND_PLAY, PARTNER, STALL_COMPLETE, STALL_FEED, STALL_PLAY,
    STOCK, SWITCHES, WILD_COST, reach_table,
)

# ---------------------------------------------------------------------------------- switches
# SWITCHES (imported above): ``PlannerBot``'s keyword switches; bit ``i`` of a planner's mask is ``SWITCHES[i]``.
DEFAULTS = {name: name != "always_block" for name in SWITCHES}
(ON_SEARCH, ON_HOLD_WILDS, ON_DRAW_BONUS, ON_AVOID_FEEDING, ON_OWN_STOCK_GAP, ON_PARTNER_HELP, ON_SMART_DISCARD,
 ON_ALWAYS_BLOCK, ON_BREAK_STALEMATE, ON_ENDGAME) = (1 << i for i in range(len(SWITCHES)))
"""The bit of each switch (``ON_`` + its name)."""
NAME = "planner"
VARIANTS = 1 << len(SWITCHES)
"""A planner's code is one of a block of codes, one per switch mask (:mod:`agents.batched.codes`)."""


def switch_mask(switches: dict) -> int:
    """The mask of ``switches`` (names of :data:`SWITCHES`, missing ones at their defaults)."""
    return codes.switch_mask(switches, SWITCHES, DEFAULTS)


def variant_of(name: str, spec: str) -> int | None:
    """The switch mask of ``"planner"`` or ``"planner:avoid_feeding=false,..."`` (``name``: the registered
    name); ``None`` for another spec.

    Raises ``ValueError`` for an option that is not a switch or a value that is not true/false.
    """
    switches = codes.spec_switches(spec, name, SWITCHES)
    return None if switches is None else switch_mask(switches)


# ---------------------------------------------------------------------------------- weights
# The planner's weights and reach table are agents.planner_weights' (one place for each fact, which
# agents.planner reads too); the kernels read them as module-level constants, frozen when a kernel compiles.
REACH = np.array(reach_table())
MAX_MISSING = REACH.shape[1] - 1


@jit
def reach_chance(cards, missing):
    """The chance to fill ``missing`` cards of a chain from ``cards`` unknown cards (``agents.planner``)."""
    if missing == 0:
        return 1.0
    if missing > MAX_MISSING:
        return 0.0
    return REACH[max(0, min(cards, HAND_SIZE)), missing]


@jit
def chain_missing(need, target, counts, piles, heights, work):
    """How many cards are missing to build from ``need`` up to ``target - 1`` (``agents.planner.chain_missing``):
    ``counts[v]`` cards of value ``v`` and the piles ``piles[p, :heights[p]]`` (used from the top down);
    ``work``: scratch room for four pile heights. Each number of the chain is needed once, so only the
    wilds and the piles are used up."""
    work[:] = heights
    wilds = counts[WILD]
    missing = 0
    for value in range(need, target):
        if counts[value]:
            continue
        found = False
        for pile in range(NUM_DISCARD_PILES):
            height = work[pile]
            if height and (piles[pile, height - 1] == value or piles[pile, height - 1] == WILD):
                work[pile] = height - 1
                found = True
                break
        if not found:
            if wilds:
                wilds -= 1
            else:
                missing += 1
    return missing


# ---------------------------------------------------------------------------------- what the seat sees
@jit
def read_turn(r, cfg, switches, needs, hand, piles, heights, info, threat, weights):
    """Fill the search's view of the turn from the record, as ``agents.planner._Turn`` does from the observation."""
    read_position(r, cfg, needs, hand, piles, heights, info)
    can_draw = info[I_CAN_DRAW]
    info[I_STALLED] = (switches & ON_BREAK_STALEMATE) != 0 and can_draw == 0
    info[I_SWITCHES] = switches
    endgame = ENDGAME if switches & ON_ENDGAME else 0.0
    rank = 0
    other = opponent_seat(r, cfg, 0)
    while other >= 0:
        weights[rank] = seat_weight(r, cfg, other, rank, endgame)
        info[I_OPPONENT_TOP + rank] = read_threat(r, cfg, other, can_draw, threat[rank])
        rank += 1
        other = opponent_seat(r, cfg, rank)
    info[I_OPPONENTS] = rank
    if info[I_PARTNER_SEAT]:
        read_threat(r, cfg, partner_of(cfg, r.seat), can_draw, threat[PARTNER_ROW])


@jit
def read_threat(r, cfg, seat, can_draw, chance_from):
    """``agents.planner._Seat``: ``chance_from[need]`` for ``seat``; returns its stockpile top."""
    target = stock_top(r, cfg, stockpile_of(cfg, seat))
    cards = min(HAND_SIZE, r.hand_size[seat] + can_draw)
    chance_from[:] = 0.0
    if target and target != WILD:
        piles = np.zeros((NUM_DISCARD_PILES, DISCARD_DEPTH), dtype=np.int64)
        heights = np.zeros(NUM_DISCARD_PILES, dtype=np.int64)
        read_visible_piles(r, seat, piles, heights)
        no_cards = np.zeros(WILD + 1, dtype=np.int64)
        work = np.empty(NUM_DISCARD_PILES, dtype=np.int64)
        for need in range(1, target + 1):
            chance_from[need] = reach_chance(cards, chain_missing(need, target, no_cards, piles, heights, work))
    return target


# ---------------------------------------------------------------------------------- the valuation
@jit
def stop_value(needs, hand, heights, done, needs0, hand0, heights0, piles, info, threat, weights, work):
    """``_Turn.stop_value``: what the plays up to a position gained plus what its piles promise."""
    switches = info[I_SWITCHES]
    stalled = info[I_STALLED] != 0
    stock_cards = done[0] + done[1]
    value = STOCK * stock_cards
    hand_left = cards_in(hand)
    discards_played, discard_wilds = discard_plays(heights, heights0, piles, info)
    hand_wilds = hand0[WILD] - hand[WILD]
    wilds_used = hand_wilds + discard_wilds
    numbers_played = info[I_HAND_SIZE] - hand_left - hand_wilds
    value += HAND_PLAY * numbers_played
    value += DISCARD_PLAY * discards_played
    if switches & ON_HOLD_WILDS:
        if not stock_cards and not stalled:
            value -= WILD_COST * wilds_used
    else:
        value += HAND_PLAY * wilds_used
    if hand_left == 0 and (switches & ON_DRAW_BONUS):
        value += DRAW
    if stalled:
        completed = 0
        for slot in range(NUM_BUILDING_PILES):
            completed += needs[slot] < needs0[slot]
        played = info[I_HAND_SIZE] - hand_left + stock_cards + discards_played
        value += STALL_PLAY * played + STALL_COMPLETE * completed
    value += position_value(needs, hand, hand_left, heights[0], done[0], piles[0], info, threat, weights, work)
    return value


@jit
def position_value(needs, hand, hand_left, mine, stock_done, my_piles, info, threat, weights, work):
    """``_Turn.position_value``: what the building piles left behind mean for the opponents, the partner and me."""
    switches = info[I_SWITCHES]
    value = 0.0
    if switches & (ON_AVOID_FEEDING | ON_ALWAYS_BLOCK):
        feed = FEED * STALL_FEED if info[I_STALLED] else FEED
        for k in range(info[I_OPPONENTS]):
            chance = reach_from(needs, threat[k])
            value -= feed * weights[k] * chance
            if switches & ON_ALWAYS_BLOCK:
                target = info[I_OPPONENT_TOP + k]
                for slot in range(NUM_BUILDING_PILES):
                    if needs[slot] == target:
                        value -= BLOCK * weights[k]
                        break
    if (switches & ON_PARTNER_HELP) and info[I_PARTNER_SEAT]:
        value += PARTNER * reach_from(needs, threat[PARTNER_ROW])
    target = info[I_STOCK_TOP]
    if (switches & ON_OWN_STOCK_GAP) and not stock_done and target and target != WILD:
        missing = 1 << 30
        for slot in range(NUM_BUILDING_PILES):
            need = needs[slot]
            if not first_of_its_value(needs, slot):
                continue
            if need > target:
                gap = 99
            else:
                gap = chain_missing(need, target, hand, my_piles, mine, work)
            missing = min(missing, gap)
        drawn = HAND_SIZE if hand_left == 0 else min(HAND_SIZE + 1 - hand_left, info[I_CAN_DRAW])
        value += GAP * reach_chance(drawn, missing)
    return value


best_first_play = turn_search(stop_value, NAME)
"""``_Turn.best_first_play`` with the planner's valuation: ``best_first_play(search, legal, g, needs, hand,
piles, heights, info, threat, weights)``, the first play of the best sequence (-1 when stopping is best) and
the positions its search valued."""


# ---------------------------------------------------------------------------------- discarding
@jit
def discard_score(card, top, needs, hand, own_top, only_wilds):
    """``agents.planner.discard_score``: how good it is to discard ``card`` onto a pile topped by ``top``."""
    score = 0.0
    if card == WILD:
        return -100.0 if not only_wilds else 0.0
    if top == 0:
        score += 2.5 + 0.15 * card
    elif top == card:
        score += 4.0
    elif top == card + 1:
        score += 5.0
    elif top > card:
        score += 2.0 - 0.3 * (top - card - 1)
    else:
        score -= 3.0 + 0.3 * (TOP_VALUE - top)
        needed = top == WILD
        for slot in range(NUM_BUILDING_PILES):
            needed = needed or needs[slot] == top
        if needed:
            score -= 5.0
    if top and top != WILD:
        soon = TOP_VALUE
        for slot in range(NUM_BUILDING_PILES):
            soon = min(soon, (top - needs[slot]) % TOP_VALUE)
        if top < card and soon <= 2:
            score -= 2.0
    distance = TOP_VALUE
    for slot in range(NUM_BUILDING_PILES):
        distance = min(distance, (card - needs[slot]) % TOP_VALUE)
    score += 0.2 * min(distance, 6)
    if hand[card] > 1:
        score += 0.5
    if card == own_top:
        score -= 0.5
    return score


@jit
def smart_discard(legal, g, needs, hand, piles, heights, info):
    """``agents.planner.choose_discard``: the legal discard with the best score (ties: the lowest id)."""
    only_wilds = info[I_HAND_SIZE] == hand[WILD]
    best, best_score = -1, 0.0
    for action in range(FIRST_DISCARD, END_TURN):
        if not legal[g, action]:
            continue
        value = discard_value_of(action)
        slot = (action - FIRST_DISCARD) % NUM_DISCARD_PILES
        top = piles[0, slot, heights[0, slot] - 1] if heights[0, slot] else 0
        score = discard_score(value, top, needs, hand, info[I_STOCK_TOP], only_wilds)
        if best < 0 or score > best_score:
            best, best_score = action, score
    return best


@jit
def random_discard(legal, g, hand, info, generator):
    """``PlannerBot._random_discard``: a random hand card (each card alike), then a random legal pile for it."""
    card = integers(generator, info[I_HAND_SIZE])
    value = 1
    while card >= hand[value]:
        card -= hand[value]
        value += 1
    first = discard_id(value, 0)
    piles = 0
    for action in range(first, first + NUM_DISCARD_PILES):
        piles += legal[g, action]
    nth = integers(generator, piles)
    for action in range(first, first + NUM_DISCARD_PILES):
        if legal[g, action]:
            if nth == 0:
                return action
            nth -= 1
    return -1


# ---------------------------------------------------------------------------------- deciding
@jit
def planner_action(r, legal, g, cfg, generator, switches):
    """``PlannerBot(**switches).act`` for the seat to act in game ``g`` (record ``r``); ``generator`` is the
    seat's (uint64[6], drawn from only by the random discard); -1 when nothing is legal."""
    count, first, plays, discards = legal_counts(legal, g)
    if count <= 1:
        return first
    needs, hand, piles, heights, info = position_arrays()
    threat = np.zeros((MAX_OPPONENTS + 1, TOP_VALUE + 1), dtype=np.float64)
    weights = np.zeros(MAX_OPPONENTS, dtype=np.float64)
    read_turn(r, cfg, switches, needs, hand, piles, heights, info, threat, weights)
    if plays:
        best, _ = best_first_play((switches & ON_SEARCH) != 0, legal, g, needs, hand, piles, heights, info, threat,
                               weights)
        if best >= 0:
            return best
    if not discards:
        return END_TURN if legal[g, END_TURN] else first
    if switches & ON_SMART_DISCARD:
        return smart_discard(legal, g, needs, hand, piles, heights, info)
    return random_discard(legal, g, hand, info, generator)


@jit
def planner_actions(games, legal, cfg, rows, streams, switches, out):
    """``out[i]`` = the planner's action (switch mask ``switches``) in game ``rows[i]``."""
    for i in range(rows.shape[0]):
        g = rows[i]
        r = games[g]
        out[i] = planner_action(r, legal, g, cfg, streams[g, r.seat], switches)


@jit
def act(r, legal, g, cfg, streams, variant):
    """The kernel bots' entry (:mod:`agents.batched.codes`): the planner of switch mask ``variant``."""
    return planner_action(r, legal, g, cfg, streams[g, r.seat], variant)
