"""``skipbo_env.encoding.encode_observation`` as a batch kernel: the same float32 vector, bit for bit.

The vector layout (offsets and scales) is read from :mod:`skipbo_env.encoding` at import and
handed to the kernels as arguments, never frozen into compiled code, so the kernels follow any
change of the layout. Each value is written as ``float32(raw) * SCALE[i]``, the product the
reference encoder computes.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from skipbo_env import encoding
from skipbo_env.cards import NUM_BUILDING_PILES, NUM_DISCARD_PILES, NUM_VALUES, TOP_VALUE, WILD
from skipbo_env.rules import MIN_PLAYERS
from skipbo_env.vector.kernels import (LINE, PREFETCH_AHEAD, compute_legal, deal_game, deck_copies, prefetch_rows,
                                       step_game, stock_top, stockpile_of)
from skipbo_env.vector.layout import RUNNING
from skipbo_env.vector.jit import jit, prefetch_for_writing


OBS_SIZE = encoding.OBS_SIZE
SCALE = encoding.SCALE.astype(np.float32)


def _layout_offsets() -> dict[str, int]:
    """Every offset of :mod:`skipbo_env.encoding`'s layout table by name (a seat block's ``stock_size`` as
    ``seat_stock_size``), the buried-card counts by their first offset, and the sizes the kernels need."""
    glob, seat = encoding.GLOBAL_OFFSETS, encoding.SEAT_OFFSETS
    buried = [glob[f"buried_discards_{r}"] for r in range(encoding.MAX_SEATS)]
    assert buried == [buried[0] + NUM_VALUES * r for r in range(encoding.MAX_SEATS)]
    # encode_observation clears the seat blocks of the table, then one range from the turn-limit features on
    assert glob["max_turn_plays"] == encoding.SEAT_START + encoding.SEAT_BLOCK * encoding.MAX_SEATS
    assert buried[0] == glob["turn_play_limit_reached"] + 1
    return {
        **{name: value for name, value in glob.items() if not name.startswith("buried_discards_")},
        "buried_discards": buried[0],
        "seat_start": encoding.SEAT_START,
        "seat_block": encoding.SEAT_BLOCK,
        **{("seat_stock_size" if name == "stock_size" else name): value for name, value in seat.items()},
        "discard_depth": encoding.DISCARD_DEPTH,
        "min_players": MIN_PLAYERS,
    }


_LAYOUT_OFFSETS = _layout_offsets()
Offsets = namedtuple("Offsets", list(_LAYOUT_OFFSETS))
"""The layout as one kernel argument: a field per name of the encoding's layout table (a new field of the
table is a new field here, with nothing to write)."""


def offsets() -> Offsets:
    """The layout of :mod:`skipbo_env.encoding` as kernel arguments."""
    return Offsets(**_LAYOUT_OFFSETS)


@jit
def put(out, i, scale, index, value):
    """Feature ``index`` of vector ``i``: the raw value times its scale, in float32 like the encoder."""
    out[i, index] = np.float32(value) * scale[index]


@jit
def encode_observation(r, cfg, off, scale, seat, out, i):
    """Write game ``r`` as ``seat`` sees it into ``out[i]`` (float32[OBS_SIZE]).

    The entries of the seats not at the table (their seat blocks and buried counts) are never
    written: ``out[i]`` must hold zeros there already (a batch keeps its table size, so a row that
    started as zeros does). Leaving them untouched spares the memory traffic of a third of the
    vector at two players.
    """
    n = cfg.num_players
    out[i, :off.seat_start + off.seat_block * n] = 0.0
    out[i, off.max_turn_plays:off.buried_discards + NUM_VALUES * n] = 0.0  # the turn-limit features, buried counts
    out[i, off.num_players + n - off.min_players] = 1.0
    if cfg.partners:
        out[i, off.partners] = 1.0
        if not cfg.team_win_both:
            out[i, off.team_win_either] = 1.0
    if cfg.shared_stock:
        out[i, off.team_stock_shared] = 1.0
    if not cfg.play_on:
        out[i, off.exhausted_draw_draw] = 1.0
    put(out, i, scale, off.decks, cfg.decks)
    put(out, i, scale, off.stock_size, cfg.stock_size)
    put(out, i, scale, off.max_turns, cfg.max_turns)
    put(out, i, scale, off.turn, r.turn)
    put(out, i, scale, off.plays_this_turn, r.plays)
    put(out, i, scale, off.quiet_turns, r.quiet)
    put(out, i, scale, off.draw_pile_size, r.draw_len)
    put(out, i, scale, off.completed_size, r.completed_len)
    plays_left = max(cfg.max_turn_plays - r.plays, 0)
    put(out, i, scale, off.max_turn_plays, cfg.max_turn_plays)
    put(out, i, scale, off.turn_plays_left, plays_left)
    if cfg.max_turn_plays > 0 and plays_left == 0:
        out[i, off.turn_play_limit_reached] = 1.0
    for slot in range(NUM_BUILDING_PILES):
        length = r.building_len[slot]
        out[i, off.building_next + TOP_VALUE * slot + length] = 1.0
        put(out, i, scale, off.building_size + slot, length)
    if r.outcome == RUNNING:
        out[i, off.seat_start + off.seat_block * ((r.seat - seat) % n) + off.to_act] = 1.0
    for rel in range(n):
        s = (seat + rel) % n
        base = off.seat_start + off.seat_block * rel
        out[i, base + off.present] = 1.0
        if cfg.partners and rel == n // 2:
            out[i, base + off.is_partner] = 1.0
        pile = stockpile_of(cfg, s)
        top = stock_top(r, cfg, pile)
        if top > 0:
            out[i, base + off.stock_top + top - 1] = 1.0
        put(out, i, scale, base + off.seat_stock_size, r.stock_len[pile])
        put(out, i, scale, base + off.hand_size, r.hand_size[s])
        for p in range(NUM_DISCARD_PILES):
            length = r.discard_len[s, p]
            put(out, i, scale, base + off.discard_size + p, length)
            if length > 0:
                out[i, base + off.discard_top + NUM_VALUES * p + r.discard[s, p, length - 1] - 1] = 1.0
                first = base + off.discard_cards + off.discard_depth * p
                for k in range(min(length, off.discard_depth)):
                    put(out, i, scale, first + k, r.discard[s, p, length - 1 - k])
                for k in range(length - off.discard_depth):  # buried under the top discard_depth: counted
                    out[i, off.buried_discards + NUM_VALUES * rel + r.discard[s, p, k] - 1] += 1.0
        for value in range(NUM_VALUES):
            at = off.buried_discards + NUM_VALUES * rel + value
            out[i, at] = out[i, at] * scale[at]
    for value in range(1, WILD + 1):  # unseen: counted raw, less every stockpile top below, then scaled
        put(out, i, scale, off.hand + value - 1, r.hand[seat, value])
        out[i, off.unseen + value - 1] = deck_copies(cfg, value) - r.public[value] - r.hand[seat, value]
    for pile in range(cfg.num_stockpiles):
        top = stock_top(r, cfg, pile)
        if top > 0:
            out[i, off.unseen + top - 1] -= 1.0
    for value in range(NUM_VALUES):
        at = off.unseen + value
        out[i, at] = out[i, at] * scale[at]


@jit
def unseen_copies(r, cfg, seat, value):
    """The observation's ``unseen`` count of ``value`` for ``seat``: the deck's copies less the public piles
    (discard, building, completed), the seat's hand and every stockpile top (``encode_observation`` counts
    all values at once the same way; the kernel expert reads this one, and its differential test against
    ``agents.expert``, which reads the observation's counts, holds the two together)."""
    unseen = deck_copies(cfg, value) - r.public[value] - r.hand[seat, value]
    for pile in range(cfg.num_stockpiles):
        if stock_top(r, cfg, pile) == value:
            unseen -= 1
    return unseen


@jit
def observe_rows(games, cfg, off, scale, rows, seats, out):
    """``out[i]`` = game ``rows[i]`` as ``seats[i]`` sees it (``seats[i] < 0``: the seat to act)."""
    for i in range(rows.shape[0]):
        r = games[rows[i]]
        encode_observation(r, cfg, off, scale, seats[i] if seats[i] >= 0 else r.seat, out, i)


@jit
def prefetch_vector(cfg, off, rows, i, obs):
    """Ask, to write them, for the parts of the vector of the row ``2 * PREFETCH_AHEAD`` after ``rows[i]`` that
    :func:`encode_observation` writes."""
    if i + 2 * PREFETCH_AHEAD < rows.shape[0]:
        start = rows[i + 2 * PREFETCH_AHEAD] * obs.shape[1] * 4
        for byte in range(0, 4 * (off.seat_start + off.seat_block * cfg.num_players), LINE):
            prefetch_for_writing(obs, start + byte)
        for byte in range(4 * off.max_turn_plays, 4 * (off.buried_discards + NUM_VALUES * cfg.num_players), LINE):
            prefetch_for_writing(obs, start + byte)


@jit
def step_and_observe(games, legal, cfg, off, scale, rows, actions, illegal, obs):
    """Take ``actions[i]`` in game ``rows[i]`` (``illegal[i]`` set where refused) and write the
    new position, as its seat to act sees it, into ``obs[rows[i]]`` (skipped when ``obs`` is empty)."""
    observing = obs.shape[0] > 0
    for i in range(rows.shape[0]):
        prefetch_rows(games, legal, cfg, rows, i)
        if observing:
            prefetch_vector(cfg, off, rows, i, obs)
        g = rows[i]
        r = games[g]
        illegal[i] = not step_game(r, legal, cfg, g, actions[i])
        if observing:
            encode_observation(r, cfg, off, scale, r.seat, obs, g)


@jit
def deal_and_observe(games, legal, cfg, off, scale, rows, seeds, obs):
    """Deal ``rows[i]`` with ``seeds[i]`` and write its first position into ``obs[rows[i]]`` (if any)."""
    observing = obs.shape[0] > 0
    for i in range(rows.shape[0]):
        g = rows[i]
        r = games[g]
        deal_game(r, legal, cfg, g, seeds[i])
        if observing:
            encode_observation(r, cfg, off, scale, r.seat, obs, g)


@jit
def refresh_rows(games, legal, cfg, off, scale, rows, obs):
    """Recompute the action mask (and the observation, if ``obs`` is not empty) of each game in ``rows``."""
    observing = obs.shape[0] > 0
    for i in range(rows.shape[0]):
        g = rows[i]
        r = games[g]
        compute_legal(r, legal, cfg, g)
        if observing:
            encode_observation(r, cfg, off, scale, r.seat, obs, g)
