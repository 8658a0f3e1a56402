"""The rules as numba kernels over the records of :mod:`skipbo_env.vector.layout` (one game = one record).

Each function mirrors the method of :class:`skipbo_env.game.Game` with the same name and
implements the same rule of RULES.md; tests/test_vector_engine.py holds them to the rules
engine state by state. Arguments follow one convention: ``r`` is the record of game ``g``
(``games[g]``), ``legal`` the batch's action-mask array, ``cfg`` the
:class:`~skipbo_env.vector.layout.Config`. They compile through :data:`skipbo_env.vector.jit.jit`.
"""

from __future__ import annotations

import numpy as np

from skipbo_env.actions import (
    DISCARD_SOURCE,
    END_TURN,
    FIRST_DISCARD,
    PARTNER_DISCARD_SOURCE,
    PARTNER_STOCK_SOURCE,
    STOCK_SOURCE,
)
from skipbo_env.cards import (
    COPIES_PER_NUMBER,
    HAND_SIZE,
    NUM_BUILDING_PILES,
    NUM_DISCARD_PILES,
    TOP_VALUE,
    WILD,
    WILDS_PER_DECK,
)
from skipbo_env.vector.pcg import fill_doubles, next_double, seed_pcg64
from skipbo_env.vector.layout import DRAW, HEAD_BYTES, PHASE_DRAW, PHASE_PLAY, RUNNING, TRUNCATED, WIN
from skipbo_env.vector.jit import (discard_id, discard_pile_of, discard_value_of, hand_play_id, jit, pile_of, play_id,
                                   prefetch, source_of)


# ---------------------------------------------------------------------------------- table
@jit
def stockpile_of(cfg, seat):
    """The stockpile a seat plays as its own: the team's with ``team_stock="shared"``."""
    return seat % cfg.num_teams if cfg.shared_stock else seat


@jit
def partner_of(cfg, seat):
    """The partner's seat (opposite), -1 in singles."""
    return (seat + cfg.num_players // 2) % cfg.num_players if cfg.partners else -1


@jit
def deck_card(cfg, index):
    """Card ``index`` of the unshuffled deck (``skipbo_env.cards.new_deck``: all 1s, all 2s, ..., then SKIP-BO)."""
    per_number = COPIES_PER_NUMBER * cfg.decks
    return index // per_number + 1 if index < TOP_VALUE * per_number else WILD


@jit
def deck_copies(cfg, value):
    """How many cards of ``value`` the deck holds (``skipbo_env.cards.deck_counts``)."""
    return (WILDS_PER_DECK if value == WILD else COPIES_PER_NUMBER) * cfg.decks


@jit
def stock_top(r, cfg, pile):
    """The top card of stockpile ``pile``, 0 when it is empty."""
    length = r.stock_len[pile]
    return r.stock[pile * cfg.stock_size + length - 1] if length > 0 else 0


# ---------------------------------------------------------------------------------- deal
@jit
def deal_game(r, legal, cfg, g, seed):
    """``Game.new(rules, seed)`` into record ``r``: the generator, the dealer, the shuffle, the deal, the draw."""
    n = cfg.num_players
    c = cfg.deck_size
    seed_pcg64(r.rng, seed)
    r.rng_has_uint32 = 0
    r.rng_uinteger = 0
    r.dealer = int(next_double(r.rng) * n)
    keys = np.empty(c, dtype=np.float64)
    fill_doubles(r.rng, keys)
    order = stable_order(keys)
    dealt = cfg.num_stockpiles * cfg.stock_size
    for i in range(dealt):
        r.stock[i] = deck_card(cfg, order[i])
    for i in range(c - dealt):
        r.draw[i] = deck_card(cfg, order[dealt + i])
    r.draw_len = c - dealt
    r.hand[:, :] = 0
    r.hand_size[:] = 0
    r.stock_len[:] = 0
    r.stock_len[:cfg.num_stockpiles] = cfg.stock_size
    r.discard_len[:, :] = 0
    r.building_len[:] = 0
    r.public[:] = 0
    r.completed_len = 0
    r.turn = 0
    r.plays = 0
    r.quiet = 0
    r.phase = PHASE_PLAY
    r.outcome = RUNNING
    r.actions = 0
    r.winners[:] = 0
    r.seat = (r.dealer + 1) % n
    draw_up_to_five(r, cfg)
    compute_legal(r, legal, cfg, g)


# ---------------------------------------------------------------------------------- draws
@jit
def draw_up_to_five(r, cfg):
    """RULES.md, "A turn", step 1: draw until the hand holds 5 cards."""
    draw_cards(r, cfg, HAND_SIZE - r.hand_size[r.seat])


@jit
def draw_cards(r, cfg, count):
    """Draw ``count`` cards for the seat to act, recycling completed piles when the draw pile is empty.

    With ``exhausted_draw="draw"`` the hand ends as a draw when a card must be drawn and none
    is left; with ``"play_on"`` the seat takes what there is.
    """
    seat = r.seat
    for _ in range(count):
        if r.draw_len == 0:
            if r.completed_len == 0:
                if not cfg.play_on:
                    finish(r, DRAW)
                return
            recycle_completed_piles(r)
        top = r.draw_len - 1
        r.hand[seat, r.draw[top]] += 1
        r.hand_size[seat] += 1
        r.draw_len = top


@jit
def recycle_completed_piles(r):
    """Only when the draw pile is empty are the completed piles shuffled into a new one.

    The shuffle draws ``m`` floats from the hand's generator as keys, stable argsort, exactly
    like ``skipbo_env.cards.shuffled``.
    """
    m = r.completed_len
    keys = np.empty(m, dtype=np.float64)
    fill_doubles(r.rng, keys)
    order = stable_order(keys)
    for i in range(m):
        card = r.completed[order[i]]
        r.draw[i] = card
        r.public[card] -= 1
    r.draw_len = m
    r.completed_len = 0


@jit
def stable_order(keys):
    """``np.argsort(keys, kind="mergesort")`` for keys in [0, 1), a generator's doubles: the indices in the order
    of their keys, equal keys in index order. The indices are counted into one bucket per key (bucket ``b``
    holds the keys in ``[b / m, (b + 1) / m)``, so every key of a bucket is below every key of the next),
    then one insertion sort puts each bucket's few keys in order: several times faster than numba's mergesort
    on a deck's 162 keys."""
    m = keys.shape[0]
    ends = np.zeros(m + 1, dtype=np.int64)  # then the first index of each bucket, then where the next goes
    for i in range(m):
        ends[min(int(keys[i] * m), m - 1) + 1] += 1
    for b in range(m):
        ends[b + 1] += ends[b]
    order = np.empty(m, dtype=np.int64)
    for i in range(m):
        b = min(int(keys[i] * m), m - 1)
        order[ends[b]] = i
        ends[b] += 1
    for j in range(1, m):  # a key moves only within its bucket, past greater keys only (equal ones keep their order)
        index = order[j]
        key = keys[index]
        while j > 0 and keys[order[j - 1]] > key:
            order[j] = order[j - 1]
            j -= 1
        order[j] = index
    return order


# ---------------------------------------------------------------------------------- legal actions
@jit
def compute_legal(r, legal, cfg, g):
    """``Game._compute_legal_actions`` into ``legal[g]`` (all False once the hand is over); returns the count.

    The open building piles are held as bit sets: bit ``4 * v + slot`` of ``fits`` says a card
    of value ``v`` may go on that slot (a SKIP-BO card fits every open slot; no bit stands for
    value 0, an empty source), so each source marks its plays with one lookup. Every id of the
    row is written once, without a branch on the cards: the hand's cards and the piles' tops
    vary from one position to the next, and a mispredicted branch costs more than the writes.
    """
    if r.outcome != RUNNING:
        legal[g, :] = False
        return 0
    seat = r.seat
    open_slots = 0
    fits = 0
    empty_seen = 0
    for slot in range(NUM_BUILDING_PILES):  # every pile in play, and the first empty one
        length = r.building_len[slot]
        empty = 1 if length == 0 else 0
        offered = 1 - (empty & empty_seen)
        empty_seen |= empty
        open_slots |= offered << slot
        fits |= offered << (4 * (length + 1) + slot)
    fits |= open_slots << (4 * WILD)
    if turn_play_limit_reached(r, cfg):
        fits = 0  # no card fits any pile: no play is legal
    count = 0
    for value in range(1, WILD + 1):
        held = 1 if r.hand[seat, value] > 0 else 0
        count += put_slots(legal, g, hand_play_id(value, 0), held * ((fits >> (4 * value)) & 15))
    own_stock = stockpile_of(cfg, seat)
    count += put_slots(legal, g, play_id(STOCK_SOURCE, 0), (fits >> (4 * stock_top(r, cfg, own_stock))) & 15)
    for pile in range(NUM_DISCARD_PILES):
        card = discard_top(r, seat, pile)
        count += put_slots(legal, g, play_id(DISCARD_SOURCE + pile, 0), (fits >> (4 * card)) & 15)
    partner = partner_of(cfg, seat)
    if partner >= 0:
        partner_stock = stockpile_of(cfg, partner)
        card = stock_top(r, cfg, partner_stock) if partner_stock != own_stock else 0
        count += put_slots(legal, g, play_id(PARTNER_STOCK_SOURCE, 0), (fits >> (4 * card)) & 15)
        for pile in range(NUM_DISCARD_PILES):
            card = discard_top(r, partner, pile)
            count += put_slots(legal, g, play_id(PARTNER_DISCARD_SOURCE + pile, 0), (fits >> (4 * card)) & 15)
    else:
        legal[g, play_id(PARTNER_STOCK_SOURCE, 0):play_id(PARTNER_DISCARD_SOURCE + NUM_DISCARD_PILES, 0)] = False
    discard_slots = 0  # the piles in use, and the first empty one (none with an empty hand: no hand card)
    empty_seen = 0
    for slot in range(NUM_DISCARD_PILES):
        used = 1 if r.discard_len[seat, slot] > 0 else 0
        discard_slots |= (used | (1 - empty_seen)) << slot
        empty_seen |= 1 - used
    for value in range(1, WILD + 1):
        held = 1 if r.hand[seat, value] > 0 else 0
        count += put_slots(legal, g, discard_id(value, 0), held * discard_slots)
    hand_empty = r.hand_size[seat] == 0
    legal[g, END_TURN] = hand_empty
    return count + (1 if hand_empty else 0)


@jit
def turn_play_limit_reached(r, cfg):
    """RULES.md, "A turn that never ends" (``max_turn_plays``): once that many cards have been
    played to building piles this turn, no further play is legal."""
    return cfg.max_turn_plays > 0 and r.plays >= cfg.max_turn_plays


@jit
def discard_top(r, seat, pile):
    """The top card of ``seat``'s discard pile ``pile``, 0 when it is empty (read without a branch)."""
    length = r.discard_len[seat, pile]
    return r.discard[seat, pile, max(length - 1, 0)] * (1 if length > 0 else 0)


@jit
def put_slots(legal, g, first, slots):
    """``legal[g, first + slot]`` = bit ``slot`` of ``slots`` for the 4 slots; returns how many are set."""
    count = 0
    for slot in range(4):
        bit = (slots >> slot) & 1
        legal[g, first + slot] = bit
        count += bit
    return count


# ---------------------------------------------------------------------------------- actions
@jit
def step_game(r, legal, cfg, g, action):
    """``Game.step`` for game ``g``: False (and nothing changes) when the action is not legal."""
    if action < 0 or action > END_TURN or not legal[g, action]:
        return False
    r.actions += 1
    if action < FIRST_DISCARD:
        play(r, cfg, action)
    elif action < END_TURN:
        discard(r, cfg, action)
    else:
        end_turn(r, cfg)
    compute_legal(r, legal, cfg, g)
    return True


@jit
def play(r, cfg, action):
    """RULES.md, "Play": one card onto a building pile; a pile of 12 is set aside at once."""
    source = source_of(action)
    slot = pile_of(action)
    seat = r.seat
    if source < STOCK_SOURCE:
        card = source + 1
        r.hand[seat, card] -= 1
        r.hand_size[seat] -= 1
        r.public[card] += 1
    elif source == STOCK_SOURCE or source == PARTNER_STOCK_SOURCE:
        pile = stockpile_of(cfg, seat if source == STOCK_SOURCE else partner_of(cfg, seat))
        card = stock_top(r, cfg, pile)
        r.stock_len[pile] -= 1
        r.public[card] += 1
    else:
        owner = seat if source < PARTNER_STOCK_SOURCE else partner_of(cfg, seat)
        pile = source - DISCARD_SOURCE if source < PARTNER_STOCK_SOURCE else source - PARTNER_DISCARD_SOURCE
        top = r.discard_len[owner, pile] - 1
        card = r.discard[owner, pile, top]
        r.discard_len[owner, pile] = top
    length = r.building_len[slot]
    r.building[slot, length] = card
    r.building_len[slot] = length + 1
    if length + 1 == TOP_VALUE:
        set_aside_completed_pile(r, slot)
    r.plays += 1
    if (source == STOCK_SOURCE or source == PARTNER_STOCK_SOURCE) and stockpiles_emptied(r, cfg, seat):
        finish(r, WIN)
        r.winners[seat] = 1
        partner = partner_of(cfg, seat)
        if partner >= 0:
            r.winners[partner] = 1
        return
    if r.hand_size[seat] == 0:
        draw_cards(r, cfg, HAND_SIZE)


@jit
def set_aside_completed_pile(r, slot):
    """RULES.md: a pile that reaches 12 is taken away and set aside; its slot is free again."""
    base = r.completed_len
    for i in range(TOP_VALUE):
        r.completed[base + i] = r.building[slot, i]
    r.completed_len = base + TOP_VALUE
    r.building_len[slot] = 0


@jit
def stockpiles_emptied(r, cfg, seat):
    """RULES.md, "Winning a hand" and "Partners" (``team_win``): is the hand won?"""
    own_empty = r.stock_len[stockpile_of(cfg, seat)] == 0
    partner = partner_of(cfg, seat)
    if partner < 0 or cfg.shared_stock:
        return own_empty
    partner_empty = r.stock_len[stockpile_of(cfg, partner)] == 0
    if cfg.team_win_both:
        return own_empty and partner_empty
    return own_empty or partner_empty


@jit
def discard(r, cfg, action):
    """RULES.md, "Discard": a hand card onto one of the player's own discard piles ends the turn."""
    value = discard_value_of(action)
    slot = discard_pile_of(action)
    seat = r.seat
    r.hand[seat, value] -= 1
    r.hand_size[seat] -= 1
    r.public[value] += 1
    length = r.discard_len[seat, slot]
    r.discard[seat, slot, length] = value
    r.discard_len[seat, slot] = length + 1
    end_turn(r, cfg)


@jit
def end_turn(r, cfg):
    """Count quiet turns (``exhausted_draw``), apply ``max_turns``, pass to the left and draw."""
    quiet = r.plays == 0 and r.draw_len == 0 and r.completed_len == 0
    r.quiet = r.quiet + 1 if quiet else 0
    r.turn += 1
    r.seat = (r.dealer + 1 + r.turn) % cfg.num_players
    r.plays = 0
    r.phase = PHASE_DRAW
    if cfg.play_on and r.quiet >= cfg.num_players:
        finish(r, DRAW)
        return
    if cfg.max_turns > 0 and r.turn >= cfg.max_turns:
        finish(r, TRUNCATED)
        return
    r.phase = PHASE_PLAY
    draw_up_to_five(r, cfg)


@jit
def finish(r, outcome):
    r.outcome = outcome


# ---------------------------------------------------------------------------------- memory
PREFETCH_AHEAD = 4
"""How many rows ahead a batch loop asks for the parts of a hand it will read (:func:`prefetch_rows`)."""
LINE = 64


@jit
def prefetch_rows(games, legal, cfg, rows, i):
    """In a loop over ``rows`` at ``i``: ask for what a step reads of the rows ahead (:func:`prefetch_heads`,
    :func:`prefetch_piles`)."""
    prefetch_heads(games, legal, rows, i)
    prefetch_piles(games, cfg, rows, i)


@jit
def prefetch_heads(games, legal, rows, i):
    """Ask for the fixed part of the record and the mask of the row ``2 * PREFETCH_AHEAD`` after ``rows[i]``."""
    if i + 2 * PREFETCH_AHEAD < rows.shape[0]:
        g = rows[i + 2 * PREFETCH_AHEAD]
        for byte in range(0, HEAD_BYTES, LINE):
            prefetch(games, g * games.itemsize + byte)
        for byte in range(0, legal.shape[1], LINE):
            prefetch(legal, g * legal.shape[1] + byte)


@jit
def prefetch_piles(games, cfg, rows, i):
    """Ask for the pile tops (stockpiles, draw pile, discard piles) of the row ``PREFETCH_AHEAD`` after ``rows[i]``,
    where its lengths (asked for by :func:`prefetch_heads` a round earlier) say they are."""
    if i + PREFETCH_AHEAD < rows.shape[0]:
        r = games[rows[i + PREFETCH_AHEAD]]
        for pile in range(cfg.num_stockpiles):
            prefetch(r.stock, pile * cfg.stock_size + max(r.stock_len[pile] - 1, 0))
        prefetch(r.draw, max(r.draw_len - 1, 0))
        for seat in range(cfg.num_players):
            for pile in range(NUM_DISCARD_PILES):
                prefetch(r.discard[seat, pile], 0)
                length = r.discard_len[seat, pile]
                if length > LINE:
                    prefetch(r.discard[seat, pile], length - 1)


# ---------------------------------------------------------------------------------- results
@jit
def hand_points(r, cfg):
    """The winners' points (RULES.md, "Scoring"): 0 unless the hand was won."""
    if r.outcome != WIN:
        return 0
    winner = 0
    while r.winners[winner] == 0:
        winner += 1
    winning_team = winner % cfg.num_teams
    cards_left = 0
    for pile in range(cfg.num_stockpiles):
        if pile % cfg.num_teams != winning_team:
            cards_left += r.stock_len[pile]
    return cfg.win_points + cfg.stock_card_points * cards_left


# ---------------------------------------------------------------------------------- batch loops
@jit
def points_of_rows(games, cfg, rows, out):
    """``out[i]`` = the winners' points of game ``rows[i]``."""
    for i in range(rows.shape[0]):
        out[i] = hand_points(games[rows[i]], cfg)


@jit
def over_rows(games, out):
    """The rows whose hands are over, ascending, into ``out``; returns how many (every record is read: those
    ``LINE`` rows ahead are asked for as the loop goes)."""
    count = 0
    outcome_byte = games[0:1]["outcome"].ctypes.data - games.ctypes.data
    for g in range(games.shape[0]):
        prefetch(games, (g + LINE) * games.itemsize + outcome_byte)
        if games[g].outcome != RUNNING:
            out[count] = g
            count += 1
    return count


@jit
def report_rows(games, cfg, rows, outcome, winners, points, turns, actions):
    """For each game ``rows[i]``: its outcome code, which seats won (``winners[i, seat]``), what each seat scored
    (the winners' points, 0 for the others), its turns and its actions."""
    for i in range(rows.shape[0]):
        r = games[rows[i]]
        score = hand_points(r, cfg)
        outcome[i] = r.outcome
        for seat in range(cfg.num_players):
            winners[i, seat] = r.winners[seat] != 0
            points[i, seat] = score if r.winners[seat] != 0 else 0
        turns[i] = r.turn
        actions[i] = r.actions

