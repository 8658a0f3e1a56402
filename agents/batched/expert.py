"""``expert`` as a batch kernel: the decision of ``agents.expert.ExpertBot`` in every position.

:func:`expert_action` reads from the record what the expert's observation holds for the seat to
act (as :mod:`agents.batched.planner` does, plus the ``unseen`` counts of the observation), and
runs the turn search (:func:`agents.batched.search.turn_search`: the planner's sequences of plays
in the same order, the same positions remembered) with the expert's valuation
of where a sequence stops (read ``agents.expert`` for what it means). The chances are computed as
``agents.expert`` computes them, float for float: the shares of the unseen cards, their means
summed in the same order and rounded as Python's ``round`` rounds (:func:`rounded`), and
``fill_chance``'s sums in the same order, so it picks the same action, ties included. The expert
draws nothing at random.

The switches of ``ExpertBot`` travel in the bot's code (its variant is the switch mask, one bit per
name of :data:`SWITCHES`: :func:`act`), so ``controllers[g, seat]`` says which expert plays a seat. The
weights are imported from ``agents.expert`` (and the planner's from ``agents.planner``).
"""

from __future__ import annotations

import numpy as np

from skipbo_env.actions import END_TURN, FIRST_DISCARD
from skipbo_env.cards import (
    COPIES_PER_NUMBER, HAND_SIZE, NUM_BUILDING_PILES, NUM_DISCARD_PILES, TOP_VALUE, WILD, WILDS_PER_DECK,
)
from skipbo_env.encoding import DISCARD_DEPTH
from skipbo_env.vector.jit import discard_pile_of, discard_value_of, jit
from skipbo_env.vector.kernels import partner_of, stock_top, stockpile_of
from skipbo_env.vector.observe import unseen_copies
from agents.batched import codes
from agents.batched.planner import discard_score, smart_discard
from agents.batched.search import (
    I_CAN_DRAW, I_HAND_SIZE, I_OPPONENT_TOP, I_OPPONENTS, I_PARTNER_SEAT, I_STALLED, I_STOCK_TOP, I_SWITCHES,
    MAX_OPPONENTS, PARTNER_ROW, cards_in, discard_plays, first_of_its_value, legal_counts, opponent_seat,
    position_arrays, reach_from, read_position, read_visible_piles, seat_weight, turn_search,
)
from agents import expert_weights
from agents.expert_weights import DISCARD_MARGIN, DRAW, ENDGAME, ODDS_DIGITS, PROSPECT, SWITCHES, THREAT, WILD_COST
from agents.planner_weights import DISCARD_PLAY, HAND_PLAY, PARTNER, STALL_COMPLETE, STALL_FEED, STALL_PLAY, STOCK

# ---------------------------------------------------------------------------------- switches
# SWITCHES (imported above): ``ExpertBot``'s keyword switches; bit ``i`` of an expert's mask is ``SWITCHES[i]``.
DEFAULTS = {name: True for name in SWITCHES}
ON_CARD_COUNTING, ON_THREAT, ON_OWN_PROSPECTS, ON_HOLD_WILDS, ON_PLAN_DISCARDS = (1 << i for i in range(len(SWITCHES)))
"""The bit of each switch (``ON_`` + its name)."""
NAME = "expert"
VARIANTS = 1 << len(SWITCHES)
"""An expert's code is one of a block of codes, one per switch mask (:mod:`agents.batched.codes`)."""


def switch_mask(switches: dict) -> int:
    """The mask of ``switches`` (names of :data:`SWITCHES`, missing ones at their defaults)."""
    return codes.switch_mask(switches, SWITCHES, DEFAULTS)


def variant_of(name: str, spec: str) -> int | None:
    """The switch mask of ``"expert"`` or ``"expert:threat=false,..."`` (``name``: the registered name);
    ``None`` for another spec.

    Raises ``ValueError`` for an option that is not a switch or a value that is not true/false.
    """
    switches = codes.spec_switches(spec, name, SWITCHES)
    return None if switches is None else switch_mask(switches)


# ---------------------------------------------------------------------------------- weights
# The weights are agents.expert_weights' and agents.planner_weights' (imported above, read by the Python bots
# too): the kernels read them as module-level constants, frozen when a kernel compiles.
ODDS_ROW = PARTNER_ROW + 1
"""Row of ``chances`` that holds the chance of one unknown card per value (``agents.expert._Odds``)."""
CHANCE_ROWS = ODDS_ROW + 1
ROUNDING = 10.0 ** ODDS_DIGITS
DISCARD_WEIGHTS = np.array(expert_weights.DISCARD_WEIGHTS)
"""The expert's weights of a discard's terms (shape, coverage, reach), as :func:`planned_discard` takes them."""
SPLIT = 2.0 ** 27 + 1.0
"""Veltkamp's splitting constant for float64 (:func:`product_error`)."""


# ---------------------------------------------------------------------------------- chances
@jit
def product_error(a, b):
    """The exact ``a * b`` less its float64 product (Dekker's two-product, exact barring overflow)."""
    product = a * b
    c = SPLIT * a
    a_high = c - (c - a)
    a_low = a - a_high
    c = SPLIT * b
    b_high = c - (c - b)
    b_low = b - b_high
    return ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low


@jit
def rounded(x):
    """Python's ``round(x, ODDS_DIGITS)`` of a finite ``x``: the multiple of ``10**-ODDS_DIGITS`` nearest to the
    exact value of ``x`` (halves to even), as the nearest float. The scaled float product is a half only when
    the exact one is within half a unit of it; then the product's rounding error says which side it is on."""
    size = abs(x)
    scaled = size * ROUNDING
    whole = np.floor(scaled)
    above = scaled - whole  # exact: scaled and whole are within a factor of two (or whole is 0)
    if above == 0.5:
        error = product_error(size, ROUNDING)
        up = error > 0.0 or (error == 0.0 and whole % 2.0 == 1.0)
    else:
        up = above > 0.5
    if up:
        whole += 1.0
    return np.copysign(whole / ROUNDING, x)


@jit
def fill_chance(cards, missing, per_value, per_wild):
    """``agents.expert.fill_chance``: the chance that ``cards`` random cards hold ``missing`` distinct values
    (``per_value`` each) or SKIP-BO cards (``per_wild``) for them. ``spread[held]`` is updated downwards in
    place; each entry is the sum of the same two products as the Python dictionary's."""
    if missing <= 0:
        return 1.0
    if cards < missing:
        return 0.0
    spread = np.zeros(missing + 1)  # useful cards held (capped at missing) -> chance
    spread[0] = 1.0
    for _ in range(cards):
        for held in range(missing, 0, -1):
            gained = spread[held - 1] * ((missing - held + 1) * per_value + per_wild)
            if held < missing:
                spread[held] *= 1.0 - ((missing - held) * per_value + per_wild)
            spread[held] += gained
        spread[0] *= 1.0 - (missing * per_value + per_wild)
    return spread[missing]


@jit
def fill(odds, cards, missing, shares):
    """``agents.expert._Odds.fill``: the chance ``cards`` unknown cards fill ``missing`` gaps whose chances
    ``odds[value]`` sum to ``shares`` (summed in the order of the gaps)."""
    if missing == 0:
        return 1.0
    if missing > cards:
        return 0.0
    return fill_chance(cards, missing, rounded(shares / missing), rounded(odds[WILD]))


@jit
def chain_gaps(need, target, counts, piles, heights, work, odds):
    """``agents.planner.chain_gaps`` as ``(how many values are missing, their chances odds[value] summed)``:
    the chain from ``need`` up to ``target - 1`` filled by ``counts`` (copies per value), then the piles
    ``piles[p, :heights[p]]`` from the top down, then SKIP-BO cards of ``counts``. ``work``: room for four
    heights. Each number of the chain is needed once, so only the wilds and the piles are used up."""
    work[:] = heights
    wilds = counts[WILD]
    missing = 0
    shares = 0.0
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
                shares += odds[value]
    return missing, shares


@jit
def run_length(need, counts, piles, heights, work):
    """``agents.expert.run_length``: how many cards in a row, from ``need`` up, the numbers of ``counts`` and
    the tops of ``piles[p, :heights[p]]`` build (``work``: room for four heights)."""
    work[:] = heights
    length = 0
    for value in range(need, TOP_VALUE + 1):
        if not counts[value]:
            found = False
            for pile in range(NUM_DISCARD_PILES):
                height = work[pile]
                if height and piles[pile, height - 1] == value:
                    work[pile] = height - 1
                    found = True
                    break
            if not found:
                return length
        length += 1
    return length


# ---------------------------------------------------------------------------------- what the seat sees
@jit
def read_odds(r, cfg, counting, odds):
    """``agents.expert._Odds``: ``odds[v]`` the chance of value ``v`` (13: SKIP-BO) for one unknown card, from
    the seat's ``unseen`` counts when ``counting`` (and some card is unseen), else from one deck's shares."""
    unseen = np.zeros(WILD + 1, dtype=np.int64)
    if counting:
        for value in range(1, WILD + 1):
            unseen[value] = unseen_copies(r, cfg, r.seat, value)
    odds_of_unseen(unseen, odds)


@jit
def odds_of_unseen(unseen, odds):
    """:func:`read_odds` from the ``unseen`` counts (all zero: one deck's shares)."""
    total = unseen[1:].sum()
    if total > 0:
        for value in range(1, WILD + 1):
            odds[value] = unseen[value] / total
    else:
        total = COPIES_PER_NUMBER * TOP_VALUE + WILDS_PER_DECK
        for value in range(1, TOP_VALUE + 1):
            odds[value] = COPIES_PER_NUMBER / total
        odds[WILD] = WILDS_PER_DECK / total
    odds[0] = 0.0


@jit
def read_rival(r, cfg, seat, can_draw, odds, chance_from):
    """``agents.expert.Rival``: ``chance_from[need]`` for ``seat``; returns its stockpile top."""
    target = stock_top(r, cfg, stockpile_of(cfg, seat))
    piles = np.zeros((NUM_DISCARD_PILES, DISCARD_DEPTH), dtype=np.int64)
    heights = np.zeros(NUM_DISCARD_PILES, dtype=np.int64)
    read_visible_piles(r, seat, piles, heights)
    rival_chances(target, min(HAND_SIZE, r.hand_size[seat] + can_draw), piles, heights, odds, chance_from)
    return target


@jit
def rival_chances(target, cards, piles, heights, odds, chance_from):
    """:func:`read_rival`'s ``chance_from`` for a seat whose stockpile top is ``target``, holding or drawing
    ``cards``, its visible discard piles ``piles`` (heights ``heights``)."""
    chance_from[:] = 1.0 if target == WILD else 0.0
    if target and target != WILD:
        no_cards = np.zeros(WILD + 1, dtype=np.int64)
        work = np.empty(NUM_DISCARD_PILES, dtype=np.int64)
        for need in range(1, target + 1):
            missing, shares = chain_gaps(need, target, no_cards, piles, heights, work, odds)
            chance_from[need] = fill(odds, cards, missing, shares)


@jit
def read_turn(r, cfg, switches, needs, hand, piles, heights, info, chances, weights):
    """Fill the search's view of the turn from the record, as ``agents.expert.ExpertTurn`` does from the
    observation: the planner's (:func:`agents.batched.search.read_position`), the odds of an unknown card
    (``chances[ODDS_ROW]``) and each opponent's (and the partner's) chances to reach its stockpile."""
    read_position(r, cfg, needs, hand, piles, heights, info)
    can_draw = info[I_CAN_DRAW]
    info[I_STALLED] = can_draw == 0
    info[I_SWITCHES] = switches
    odds = chances[ODDS_ROW]
    read_odds(r, cfg, (switches & ON_CARD_COUNTING) != 0, odds)
    rank = 0
    other = opponent_seat(r, cfg, 0)
    while other >= 0:
        weights[rank] = seat_weight(r, cfg, other, rank, ENDGAME)
        info[I_OPPONENT_TOP + rank] = read_rival(r, cfg, other, can_draw, odds, chances[rank])
        rank += 1
        other = opponent_seat(r, cfg, rank)
    info[I_OPPONENTS] = rank
    if info[I_PARTNER_SEAT]:
        read_rival(r, cfg, partner_of(cfg, r.seat), can_draw, odds, chances[PARTNER_ROW])


# ---------------------------------------------------------------------------------- the valuation
@jit
def stop_value(needs, hand, heights, done, needs0, hand0, heights0, piles, info, chances, weights, work):
    """``ExpertTurn.stop_value``: the worth of stopping in a position, in stockpile cards scaled by ``STOCK``
    (the valuation the expert's :func:`best_first_play` searches with)."""
    switches = info[I_SWITCHES]
    stalled = info[I_STALLED] != 0
    stock_cards = done[0] + done[1]
    hand_left = cards_in(hand)
    discards_played, discard_wilds = discard_plays(heights, heights0, piles, info)
    wilds_used = hand0[WILD] - hand[WILD] + discard_wilds
    cards = float(stock_cards)
    cards += (HAND_PLAY * (info[I_HAND_SIZE] - hand_left) + DISCARD_PLAY * discards_played) / STOCK
    if (switches & ON_HOLD_WILDS) and not stock_cards and not stalled:
        cards -= WILD_COST * wilds_used
    if hand_left == 0 and info[I_CAN_DRAW]:
        cards += DRAW
    if stalled:
        completed = 0
        for slot in range(NUM_BUILDING_PILES):
            completed += needs[slot] < needs0[slot]
        played = info[I_HAND_SIZE] - hand_left + stock_cards + discards_played
        cards += (STALL_PLAY * played + STALL_COMPLETE * completed) / STOCK
    cards += position_value(needs, hand, hand_left, heights[0], done[0], piles[0], info, chances, weights, work)
    return STOCK * cards


@jit
def position_value(needs, hand, hand_left, mine, stock_done, my_piles, info, chances, weights, work):
    """``ExpertTurn.position_value``: what the piles left behind promise the opponents, the partner and me."""
    switches = info[I_SWITCHES]
    value = 0.0
    if switches & ON_THREAT:
        threat = THREAT * (STALL_FEED if info[I_STALLED] else 1.0)
        for k in range(info[I_OPPONENTS]):
            value -= threat * weights[k] * reach_from(needs, chances[k])
    if info[I_PARTNER_SEAT]:
        value += PARTNER / STOCK * reach_from(needs, chances[PARTNER_ROW])
    if (switches & ON_OWN_PROSPECTS) and not stock_done:
        drawn = HAND_SIZE if hand_left == 0 else min(HAND_SIZE + 1 - hand_left, info[I_CAN_DRAW])
        value += PROSPECT * own_reach(needs, hand, mine, my_piles, drawn, info, chances[ODDS_ROW], work)
    return value


@jit
def own_reach(needs, hand, mine, my_piles, drawn, info, odds, work):
    """``ExpertTurn._reach_chance``: the chance to reach my stockpile top from the best of ``needs`` with
    ``hand``, my piles ``my_piles[p, :mine[p]]`` and ``drawn`` unknown cards."""
    target = info[I_STOCK_TOP]
    if not target:
        return 0.0
    if target == WILD:
        return 1.0
    best = 0.0
    for slot in range(NUM_BUILDING_PILES):
        need = needs[slot]
        if need > target or not first_of_its_value(needs, slot):
            continue
        missing, shares = chain_gaps(need, target, hand, my_piles, mine, work, odds)
        best = max(best, fill(odds, drawn, missing, shares))
    return best


best_first_play = turn_search(stop_value, NAME)
"""The planner's whole-turn search with the expert's valuation (``agents.expert.ExpertTurn``)."""


# ---------------------------------------------------------------------------------- discarding
@jit
def discard_scores(legal, g, needs, hand, piles, heights, info, odds, discard_weights, out):
    """``out[action - FIRST_DISCARD]`` := the planned discard's score of each legal discard ``action``: the
    chance it leaves to reach the stockpile next turn, the coverage and the shape, weighted by ``discard_weights``
    (the weights of the shape, the coverage and the reach; the expert's: :data:`DISCARD_WEIGHTS`)."""
    only_wilds = info[I_HAND_SIZE] == hand[WILD]
    target = info[I_STOCK_TOP]
    drawn = min(HAND_SIZE + 1 - info[I_HAND_SIZE], info[I_CAN_DRAW])
    after = np.zeros((NUM_DISCARD_PILES, DISCARD_DEPTH + 1), dtype=np.int64)
    after[:, :DISCARD_DEPTH] = piles[0]
    grown = heights[0].copy()
    kept = hand.copy()
    work = np.empty(NUM_DISCARD_PILES, dtype=np.int64)
    for action in range(FIRST_DISCARD, END_TURN):
        if not legal[g, action]:
            continue
        card, slot = discard_value_of(action), discard_pile_of(action)
        height = heights[0, slot]
        top = piles[0, slot, height - 1] if height else 0
        score = discard_weights[0] * discard_score(card, top, needs, hand, target, only_wilds)
        kept[card] -= 1
        after[slot, height] = card
        grown[slot] = height + 1
        runs = 0
        for need in range(1, TOP_VALUE + 1):
            runs += run_length(need, kept, after, grown, work)
        score += discard_weights[1] * runs / TOP_VALUE
        if target and target != WILD:
            reach, reached = 0.0, False
            for k in range(NUM_BUILDING_PILES):
                need = needs[k]
                if need > target or not first_of_its_value(needs, k):
                    continue
                missing, shares = chain_gaps(need, target, kept, after, grown, work, odds)
                chance = fill(odds, drawn, missing, shares)
                if not reached or chance > reach:
                    reach, reached = chance, True
            score += discard_weights[2] * reach
        kept[card] += 1
        grown[slot] = height
        out[action - FIRST_DISCARD] = score


@jit
def best_scored_discard(legal, g, scores):
    """The legal discard of the highest score ``scores[action - FIRST_DISCARD]`` (ties, within
    :data:`DISCARD_MARGIN`: the lowest id); -1 when none is legal."""
    best, best_score = -1, 0.0
    for action in range(FIRST_DISCARD, END_TURN):
        if legal[g, action]:
            score = scores[action - FIRST_DISCARD]
            if best < 0 or score > best_score + DISCARD_MARGIN:
                best, best_score = action, score
    return best


@jit
def planned_discard(legal, g, needs, hand, piles, heights, info, odds, discard_weights):
    """``ExpertBot._planned_discard``: the discard that leaves the best chance to reach the stockpile next
    turn and the most coverage, then the best shape (ties: the lowest id); ``discard_weights``: the weights
    of the shape, the coverage and the reach (the expert's: :data:`DISCARD_WEIGHTS`)."""
    scores = np.empty(END_TURN - FIRST_DISCARD, dtype=np.float64)
    discard_scores(legal, g, needs, hand, piles, heights, info, odds, discard_weights, scores)
    return best_scored_discard(legal, g, scores)


# ---------------------------------------------------------------------------------- deciding
@jit
def expert_action(r, legal, g, cfg, switches):
    """``ExpertBot(**switches).act`` for the seat to act in game ``g`` (record ``r``); -1 when nothing is legal."""
    count, first, plays, discards = legal_counts(legal, g)
    if count <= 1:
        return first
    needs, hand, piles, heights, info = position_arrays()
    chances = np.zeros((CHANCE_ROWS, WILD + 1), dtype=np.float64)
    weights = np.zeros(MAX_OPPONENTS, dtype=np.float64)
    read_turn(r, cfg, switches, needs, hand, piles, heights, info, chances, weights)
    if plays:
        best, _ = best_first_play(True, legal, g, needs, hand, piles, heights, info, chances, weights)
        if best >= 0:
            return best
    if not discards:
        return END_TURN if legal[g, END_TURN] else first
    if switches & ON_PLAN_DISCARDS:
        return planned_discard(legal, g, needs, hand, piles, heights, info, chances[ODDS_ROW], DISCARD_WEIGHTS)
    return smart_discard(legal, g, needs, hand, piles, heights, info)


@jit
def expert_actions(games, legal, cfg, rows, streams, switches, out):
    """``out[i]`` = the expert's action (switch mask ``switches``) in game ``rows[i]``. ``streams`` (the
    seats' generators) is not drawn from, the expert draws nothing: the signature is ``planner_actions``'s."""
    for i in range(rows.shape[0]):
        g = rows[i]
        out[i] = expert_action(games[g], legal, g, cfg, switches)


@jit
def act(r, legal, g, cfg, streams, variant):
    """The kernel bots' entry (:mod:`agents.batched.codes`): the expert of switch mask ``variant``."""
    return expert_action(r, legal, g, cfg, variant)
