"""The plain-array state of a batch of hands, and the table settings the kernels read.

A batch is one numpy structured array ``games`` of shape ``[B]``: one record per hand, every
record laid out the same way (so numba reads a field at a fixed offset, and one hand's state
sits together in memory). Every game of a batch plays under the same
:class:`~skipbo_env.Rules`. Piles are stored bottom-up with a length beside them, so the top
card of a pile is ``pile[length - 1]`` (the state format's "last element is the top").

Record layout (``P = 6`` seat slots whatever the table, ``C`` = cards in the deck)::

    hand          int8  [P, 14]    hand[seat, v] = copies of value v (1..13) the seat holds
    hand_size     int16 [P]
    stock_len     int16 [P]        cards left in stockpile s (s = seat, or team with "shared")
    discard_len   int16 [P, 4]
    building      int8  [4, 12]    cards as laid (13 = SKIP-BO); a pile's value is its length
    building_len  int16 [4]
    public        int16 [14]       cards of each value in discard, building and completed piles
                                   (kept up to date for the observation's ``unseen`` counts)
    completed_len, draw_len        int16
    seat, dealer, turn, plays, quiet, actions    int32
    phase, outcome                 int8 (codes below)
    winners       uint8 [P]        1 for each seat of the winning side
    rng           uint64 [4]       the hand's PCG64 generator (skipbo_env.vector.pcg): the state
                                   the rules engine's ``default_rng(seed)`` has at this point
    rng_has_uint32, rng_uinteger   the rest of numpy's PCG64 state (carried, never used)
    stock         int8  [C]        stockpile s is stock[s * stock_size : s * stock_size + stock_len[s]]
    draw          int8  [C]        the draw pile, top = draw[draw_len - 1]
    completed     int8  [C]        the set-aside piles, in the order they were set aside
    discard       int8  [P, 4, C]  discard pile slot 0..3 of each seat

Beside the records: ``legal`` (bool ``[B, 145]``), the action mask of the seat to act, all False
once a hand is over. A shuffle of ``m`` cards draws ``m`` floats from the record's generator
as its keys, exactly as ``skipbo_env.cards.shuffled`` draws ``rng.random(m)``, so the batch
replays the rules engine's hands.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from skipbo_env.cards import CARDS_PER_DECK, NUM_BUILDING_PILES, NUM_DISCARD_PILES, NUM_VALUES, TOP_VALUE
from skipbo_env.rules import MAX_PLAYERS, Rules

# outcome codes (state["outcome"] is OUTCOME_NAMES[code])
RUNNING, WIN, DRAW, TRUNCATED = 0, 1, 2, 3
OUTCOME_NAMES = (None, "win", "draw", "truncated")
# phase codes (state["phase"] is PHASE_NAMES[code])
PHASE_PLAY, PHASE_DRAW = 0, 1
PHASE_NAMES = ("play", "draw")
# the player code of the caller (a learner driving the batch) in a seating of the seats
CALLER = -1

Config = namedtuple(
    "Config",
    [
        "num_players", "num_teams", "num_stockpiles", "stock_size", "decks", "deck_size",
        "partners", "team_win_both", "shared_stock", "play_on", "max_turn_plays", "max_turns",
        "win_points", "stock_card_points",
    ],
)
"""The rules as scalars (``max_turn_plays`` and ``max_turns``: 0 = no limit). Only scalars: numba
copes badly with arrays inside a tuple (it reference-counts every one of them at every inlined call)."""


def make_config(rules: Rules) -> Config:
    """The kernels' view of ``rules``; the limits of :class:`Rules` (``MAX_DECKS``, ``MAX_COUNTER``)
    keep every value within its field's integer type."""
    return Config(
        num_players=rules.num_players,
        num_teams=rules.num_teams,
        num_stockpiles=rules.num_stockpiles,
        stock_size=rules.stock_size,
        decks=rules.decks,
        deck_size=rules.deck_size,
        partners=rules.partners,
        team_win_both=rules.team_win == "both",
        shared_stock=rules.team_stock == "shared",
        play_on=rules.exhausted_draw == "play_on",
        max_turn_plays=0 if rules.max_turn_plays is None else rules.max_turn_plays,
        max_turns=0 if rules.max_turns is None else rules.max_turns,
        win_points=rules.win_points,
        stock_card_points=rules.stock_card_points,
    )


def game_dtype(decks: int) -> np.dtype:
    """The record of one hand (layout in the module docstring); it depends on the deck size only."""
    cards = CARDS_PER_DECK * decks
    p = MAX_PLAYERS
    return np.dtype(
        [
            ("hand", np.int8, (p, NUM_VALUES + 1)),
            ("hand_size", np.int16, (p,)),
            ("stock_len", np.int16, (p,)),
            ("discard_len", np.int16, (p, NUM_DISCARD_PILES)),
            ("building", np.int8, (NUM_BUILDING_PILES, TOP_VALUE)),
            ("building_len", np.int16, (NUM_BUILDING_PILES,)),
            ("public", np.int16, (NUM_VALUES + 1,)),
            ("completed_len", np.int16),
            ("draw_len", np.int16),
            ("seat", np.int32),
            ("dealer", np.int32),
            ("turn", np.int32),
            ("plays", np.int32),
            ("quiet", np.int32),
            ("actions", np.int32),
            ("phase", np.int8),
            ("outcome", np.int8),
            ("winners", np.uint8, (p,)),
            ("rng", np.uint64, (4,)),
            ("rng_has_uint32", np.int32),
            ("rng_uinteger", np.uint32),
            ("stock", np.int8, (cards,)),
            ("draw", np.int8, (cards,)),
            ("completed", np.int8, (cards,)),
            ("discard", np.int8, (p, NUM_DISCARD_PILES, cards)),
        ],
        align=True,
    )


HEAD_BYTES = game_dtype(1).fields["stock"][1]
"""The size of a record's fixed part, every field before the card arrays (the same for every deck count)."""
assert all(game_dtype(decks).fields["stock"][1] == HEAD_BYTES for decks in (1, 2, 3))
