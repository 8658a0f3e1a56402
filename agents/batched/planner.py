"""``planner`` as a batch kernel: the decision of ``agents.planner.PlannerBot`` in every position.

:func:`planner_action` reads, from the record of the game, what the planner's observation holds
for the seat to act and nothing more: its own hand, the building piles, every stockpile top and
size, every hand size, the top ``DISCARD_DEPTH`` cards of every discard pile (as
``decode_observation`` gives them), the draw and completed pile sizes, and the legal mask. It
then runs the same search as ``agents.planner`` (read that module for what the search and its
weights mean): the same sequences of plays in the same order, the same positions remembered,
the same floating-point sums in the same order, so it picks the same action, ties included.
With ``smart_discard`` off its random discard draws ``Generator.integers`` from the seat's own
generator (:mod:`skipbo_env.vector.pcg`) exactly as ``PlannerBot`` draws from ``self.rng``.

The switches of ``PlannerBot`` travel in the bot's code (``PLANNER_CODES + mask``, one bit per
name of :data:`SWITCHES`), so ``controllers[g, seat]`` says which planner plays a seat. The
weights and :data:`REACH` are imported from ``agents.planner``.
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
from skipbo_env.cards import HAND_SIZE, NUM_BUILDING_PILES, NUM_DISCARD_PILES, TOP_VALUE, WILD
from skipbo_env.encoding import DISCARD_DEPTH
from skipbo_env.vector.kernels import partner_of, stock_top, stockpile_of
from skipbo_env.vector.pcg import integers

from skipbo_env.vector.jit import discard_id, discard_value_of, hand_play_id, jit, pile_of, play_id, source_of
from agents import planner_weights
from agents.planner_weights import (
    BLOCK, DISCARD_PLAY, DRAW, ENDGAME, FEED, GAP, HAND_PLAY, PARTNER, STALL_COMPLETE, STALL_FEED, STALL_PLAY,
    STOCK, SWITCHES, WILD_COST, WIN, reach_table,
)

# ---------------------------------------------------------------------------------- switches
# SWITCHES (imported above): ``PlannerBot``'s keyword switches; bit ``i`` of a planner's mask is ``SWITCHES[i]``.
DEFAULTS = {name: name != "always_block" for name in SWITCHES}
(ON_SEARCH, ON_HOLD_WILDS, ON_DRAW_BONUS, ON_AVOID_FEEDING, ON_OWN_STOCK_GAP, ON_PARTNER_HELP, ON_SMART_DISCARD,
 ON_ALWAYS_BLOCK, ON_BREAK_STALEMATE, ON_ENDGAME) = (1 << i for i in range(len(SWITCHES)))
"""The bit of each switch (``ON_`` + its name)."""
PLANNER_CODES = 16
"""Bot codes from here on are planners: ``PLANNER_CODES + mask``."""
NAME = "planner"


def switch_mask(switches: dict, names: tuple[str, ...] = SWITCHES, defaults: dict = DEFAULTS) -> int:
    """The mask of ``switches`` (of ``names``, the planner's by default; missing ones at their ``defaults``)."""
    chosen = {**defaults, **switches}
    return sum(1 << i for i, name in enumerate(names) if chosen[name])


def spec_switches(spec: str, name: str, switches: tuple[str, ...]) -> dict | None:
    """The switches ``"name:switch=false,..."`` sets (``{}`` for a bare ``"name"``); ``None`` for another name.

    Raises ``ValueError`` for an option that is not one of ``switches`` or a value that is not true/false.
    """
    head, sep, tail = spec.partition(":")
    if head.strip() != name:
        return None
    chosen = {}
    for item in tail.split(",") if sep else ():
        key, eq, value = (part.strip() for part in item.partition("="))
        if key not in switches:
            raise ValueError(f"policy spec {spec!r}: the {name} has no option {key!r}; its options: "
                             f"{', '.join(switches)}")
        if not eq or value.lower() not in ("true", "false"):
            raise ValueError(f"policy spec {spec!r}: option {key} takes true or false, not {value!r}")
        chosen[key] = value.lower() == "true"
    return chosen


def planner_code(spec: str) -> int | None:
    """The bot code of ``"planner"`` or ``"planner:avoid_feeding=false,..."``; ``None`` for another name.

    Raises ``ValueError`` for an option that is not a switch or a value that is not true/false.
    """
    switches = spec_switches(spec, NAME, SWITCHES)
    return None if switches is None else PLANNER_CODES + switch_mask(switches)


# ---------------------------------------------------------------------------------- weights
# The planner's weights and reach table are agents.planner_weights' (one place for each fact, which
# agents.planner reads too); the kernels read them as module-level constants, frozen when a kernel compiles.
SEAT_WEIGHTS = np.array(planner_weights.SEAT_WEIGHTS)
TIE_MARGIN = 1e-9
"""A first play must beat stopping (and every earlier first play) by more than this."""

REACH = np.array(reach_table())
MAX_MISSING = REACH.shape[1] - 1
MAX_MOVES = NUM_BUILDING_PILES * (2 + 2 * NUM_DISCARD_PILES + 2)
"""Plays from one search position: per distinct need two stockpiles, eight discard tops, a hand number, a wild."""
MEMO_START = 256
"""Slots of a decision's memo table at first (it doubles when half full)."""
MAX_OPPONENTS = 5
PARTNER_ROW = MAX_OPPONENTS
"""Row of ``threat`` that holds the partner's chances."""

# info[...]: the facts of the turn, fixed during the search
(I_STOCK_TOP, I_STOCK_SIZE, I_PARTNER_TOP, I_PARTNER_SIZE, I_PARTNERS, I_SHARED, I_EITHER, I_CAN_DRAW, I_STALLED,
 I_PARTNER_SEAT, I_OPPONENTS, I_HAND_SIZE, I_PILE_CARDS, I_SWITCHES, I_OPPONENT_TOP) = range(15)
INFO_SIZE = I_OPPONENT_TOP + MAX_OPPONENTS


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


@jit
def first_of_its_value(needs, slot):
    """Whether no lower slot needs the same value (the search treats equal piles as one)."""
    for earlier in range(slot):
        if needs[earlier] == needs[slot]:
            return False
    return True


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


# ---------------------------------------------------------------------------------- the search
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


EMPTY = -1
"""A free slot of the memo table (no position key is negative)."""


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
    """The table twice as large, holding the same entries."""
    keys = np.full(2 * memo_keys.shape[0], EMPTY, dtype=np.int64)
    values = np.empty(2 * memo_keys.shape[0], dtype=np.float64)
    for i in range(memo_keys.shape[0]):
        if memo_keys[i] != EMPTY:
            slot = memo_slot(keys, memo_keys[i])
            keys[slot] = memo_keys[i]
            values[slot] = memo_values[i]
    return keys, values


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


def turn_search(valuation, bot: str, max_positions: int = 0):
    """The whole-turn search of a bot whose worth of stopping in a position is the kernel ``valuation``
    (with the arguments of :func:`stop_value`): returns its ``best_first_play`` kernel. ``max_positions`` > 0:
    once a decision's search has valued that many positions it values the positions it enters without
    looking past them (a bound on the time a decision takes; 0, the hand-written bots': no bound).

    ``agents.expert`` searches with ``agents.planner``'s search and its own valuation; here each bot
    gets the search compiled around its valuation. The kernels are named after ``bot``: numba names a
    function by its qualified name and a counter of the process that compiled it, and two kernels of
    one name (two closures of this function) must not meet in one program (see ``skipbo_env.vector.jit``).
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

    search_value = _named_kernel(search_value, bot)

    def best_first_play(search, legal, g, needs0, hand0, piles, heights0, info, threat, weights):
        """``_Turn.best_first_play``: the first play of the best sequence, -1 when stopping (discarding) is best
        (``search`` False: looking one play ahead only), and the positions the search valued (a measure of
        its work that does not depend on the machine)."""
        depth = 3 + info[I_HAND_SIZE] + info[I_PILE_CARDS] + 2
        needs = np.empty((depth, NUM_BUILDING_PILES), dtype=np.int64)
        hand = np.empty((depth, WILD + 1), dtype=np.int64)
        heights = np.empty((depth, 2, NUM_DISCARD_PILES), dtype=np.int64)
        done = np.zeros((depth, 2), dtype=np.int64)
        moves = np.empty((depth, MAX_MOVES), dtype=np.int64)
        move_count = np.zeros(depth, dtype=np.int64)
        next_move = np.zeros(depth, dtype=np.int64)
        best = np.zeros(depth, dtype=np.float64)
        keys = np.zeros(depth, dtype=np.int64)
        memo_keys = np.full(MEMO_START, EMPTY, dtype=np.int64)
        memo_values = np.empty(MEMO_START, dtype=np.float64)
        memo_count = np.int64(0)  # not the literal 0: one compile of search_value
        work = np.empty(NUM_DISCARD_PILES, dtype=np.int64)
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

    return _named_kernel(best_first_play, bot)


def _named_kernel(function, bot: str):
    """``function`` compiled as a kernel named ``<its name>_<bot>``."""
    function.__name__ = function.__qualname__ = f"{function.__name__}_{bot}"
    return jit(function)


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
