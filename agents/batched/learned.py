"""``learned``: the expert's whole-turn search with a trained linear valuation, as a batch kernel.

The search is the planner's (:func:`agents.batched.search.turn_search`: the same sequences of
plays, the same memo, the same modelling of what the seat cannot see); the chances are the
expert's (card counting from the ``unseen`` counts, :mod:`agents.batched.expert`). What differs
is how a stop is valued: ``STOCK * (w . features(stop))``, the features of ``FEATURES``
(what a sequence played and what the piles it leaves promise each seat), and how a discard is
chosen: the expert's planned discard with weights ``d`` on its three terms (``DISCARD_FEATURES``; the
names live in :mod:`agents.learned`). The parameter vector ``[w, d]`` (``PARAMETERS``) is an argument of the kernels, so training
plays thousands of games with any weights without compiling again (``training/snes/trainer.py``);
the shipped bots (one code per row, :func:`act`) play the rows of :data:`SHIPPED`, read from the
JSON files of ``agents.learned.PRETRAINED_WEIGHTS`` when the module loads (a kernel sees it as a constant; the jit's source
stamp covers the file, so a new file recompiles the kernels).

``agents.learned.LearnedBot`` is the Python twin: the same features, float for float, and the
same decisions.
"""

from __future__ import annotations

import numpy as np

from skipbo_env.actions import END_TURN
from skipbo_env.cards import HAND_SIZE, NUM_BUILDING_PILES, NUM_DISCARD_PILES, WILD
from skipbo_env.vector.jit import jit
from skipbo_env.vector.kernels import stockpile_of
from agents.batched.codes import TABLE_CODES  # noqa: F401 (training reads it here, beside the table's kernels)
from agents.batched.expert import CHANCE_ROWS, ODDS_ROW, ON_CARD_COUNTING, own_reach, planned_discard, read_turn
from agents.learned_parameters import (
    F_DISCARD_NUMBERS, F_DISCARD_WILDS, F_EMPTIED, F_HAND_NUMBERS, F_HAND_WILDS, F_IDLE_WILDS, F_PARTNER,
    F_PROSPECT, F_PROSPECT_ENDGAME, F_STALLED_COMPLETED, F_STALLED_PLAYS, F_STALLED_THREAT,
    F_STALLED_THREAT_ENDGAME, F_STOCK, F_THREAT, F_THREAT_ENDGAME, NAME, NUM_FEATURES, NUM_PARAMETERS,
    PRETRAINED_WEIGHTS, read_parameters,
)
from agents.batched.search import (
    I_CAN_DRAW, I_HAND_SIZE, I_OPPONENTS, I_PARTNER_SEAT, I_STALLED, I_STOCK_SIZE, MAX_OPPONENTS,
    PARTNER_ROW, SEAT_WEIGHTS, cards_in, discard_plays, legal_counts, opponent_seat, position_arrays, reach_from,
    turn_search,
)
from agents.planner_weights import STOCK

# The valuation's ``weights`` argument (the search passes it through): the parameters, then per opponent
# rank its seat weight and one over its stockpile size (0 for an empty one), then room for the features.
SEAT_AT = NUM_PARAMETERS
INVERSE_SIZE_AT = SEAT_AT + MAX_OPPONENTS
FEATURES_AT = INVERSE_SIZE_AT + MAX_OPPONENTS
BUFFER_SIZE = FEATURES_AT + NUM_FEATURES

SHIPPED = np.array([read_parameters(path) for path in PRETRAINED_WEIGHTS.values()])
"""The shipped models' parameters, one row each (frozen into the kernels when they compile)."""
VARIANTS = len(SHIPPED)
"""The learned bot's codes: one per shipped model, the row of :data:`SHIPPED` it plays (:mod:`agents.batched.codes`;
other weights play from a table, :data:`TABLE_CODES`)."""


def variant_of(name: str, spec: str) -> int | None:
    """The row of :data:`SHIPPED` the spec ``name`` (the registered name: the first shipped weights) or a shipped
    model's name (``"learned-2p"``) plays; ``None`` for anything else, ``learned:weights=...`` included (other
    weights play on the rules engine, ``agents.learned.LearnedBot``, or from a table)."""
    if spec == name:
        return 0
    names = list(PRETRAINED_WEIGHTS)
    return names.index(spec) if spec in names else None


# ---------------------------------------------------------------------------------- the valuation
@jit
def stop_features(needs, hand, heights, done, needs0, hand0, heights0, piles, info, chances, buffer, work, out):
    """The features (``agents.learned.FEATURES``) of stopping in a search position, into ``out``."""
    stalled = info[I_STALLED] != 0
    stock_cards = done[0] + done[1]
    hand_left = cards_in(hand)
    discards_played, discard_wilds = discard_plays(heights, heights0, piles, info)
    hand_wilds = hand0[WILD] - hand[WILD]
    out[:] = 0.0
    out[F_STOCK] = stock_cards
    out[F_HAND_NUMBERS] = info[I_HAND_SIZE] - hand_left - hand_wilds
    out[F_HAND_WILDS] = hand_wilds
    out[F_DISCARD_NUMBERS] = discards_played - discard_wilds
    out[F_DISCARD_WILDS] = discard_wilds
    if not stock_cards and not stalled:
        out[F_IDLE_WILDS] = hand_wilds + discard_wilds
    if hand_left == 0 and info[I_CAN_DRAW]:
        out[F_EMPTIED] = 1.0
    threat, endgame = 0.0, 0.0
    for k in range(info[I_OPPONENTS]):
        chance = buffer[SEAT_AT + k] * reach_from(needs, chances[k])
        threat += chance
        endgame += chance * buffer[INVERSE_SIZE_AT + k]
    if stalled:
        out[F_STALLED_THREAT] = threat
        out[F_STALLED_THREAT_ENDGAME] = endgame
    out[F_THREAT] = threat
    out[F_THREAT_ENDGAME] = endgame
    if not done[0]:
        drawn = HAND_SIZE if hand_left == 0 else min(HAND_SIZE + 1 - hand_left, info[I_CAN_DRAW])
        reach = own_reach(needs, hand, heights[0], piles[0], drawn, info, chances[ODDS_ROW], work)
        out[F_PROSPECT] = reach
        if info[I_STOCK_SIZE]:
            out[F_PROSPECT_ENDGAME] = reach / info[I_STOCK_SIZE]
    if info[I_PARTNER_SEAT]:
        out[F_PARTNER] = reach_from(needs, chances[PARTNER_ROW])
    if stalled:
        completed = 0
        for slot in range(NUM_BUILDING_PILES):
            completed += needs[slot] < needs0[slot]
        out[F_STALLED_PLAYS] = info[I_HAND_SIZE] - hand_left + stock_cards + discards_played
        out[F_STALLED_COMPLETED] = completed


@jit
def stop_value(needs, hand, heights, done, needs0, hand0, heights0, piles, info, chances, buffer, work):
    """``STOCK * (w . features)`` of stopping in a search position (``buffer``: see ``SEAT_AT``)."""
    features = buffer[FEATURES_AT:]
    stop_features(needs, hand, heights, done, needs0, hand0, heights0, piles, info, chances, buffer, work, features)
    total = 0.0
    for i in range(NUM_FEATURES):
        total += buffer[i] * features[i]
    return STOCK * total


best_first_play = turn_search(stop_value, NAME)
"""The planner's whole-turn search with the learned valuation."""


# ---------------------------------------------------------------------------------- deciding
@jit
def read_learned_turn(r, cfg, parameters, needs, hand, piles, heights, info, chances, buffer):
    """The expert's view of the turn (card counting on) and the valuation's buffer: ``parameters``, then each
    opponent's seat weight and one over its stockpile size."""
    seat_weights = np.zeros(MAX_OPPONENTS, dtype=np.float64)
    read_turn(r, cfg, ON_CARD_COUNTING, needs, hand, piles, heights, info, chances, seat_weights)
    buffer[:NUM_PARAMETERS] = parameters
    for rank in range(info[I_OPPONENTS]):
        seat = opponent_seat(r, cfg, rank)
        buffer[SEAT_AT + rank] = SEAT_WEIGHTS[min(rank, SEAT_WEIGHTS.shape[0] - 1)]
        size = r.stock_len[stockpile_of(cfg, seat)]
        buffer[INVERSE_SIZE_AT + rank] = 1.0 / size if size else 0.0


@jit
def learned_view(r, cfg, parameters):
    """The learned bot's view of the turn in record ``r``: the search's arrays (``needs, hand, piles, heights,
    info``), the chances and the valuation's buffer (:func:`read_learned_turn`)."""
    needs, hand, piles, heights, info = position_arrays()
    chances = np.zeros((CHANCE_ROWS, WILD + 1), dtype=np.float64)
    buffer = np.zeros(BUFFER_SIZE, dtype=np.float64)
    read_learned_turn(r, cfg, parameters, needs, hand, piles, heights, info, chances, buffer)
    return needs, hand, piles, heights, info, chances, buffer


@jit
def learned_decision(r, legal, g, cfg, parameters):
    """The learned bot's action (parameters ``parameters``) for the seat to act in game ``g`` (-1 when nothing
    is legal) and the positions its search valued to choose it (0 when it did not search)."""
    count, first, plays, discards = legal_counts(legal, g)
    if count <= 1:
        return first, 0
    return view_decision(legal, g, learned_view(r, cfg, parameters), parameters)


@jit
def view_decision(legal, g, view, parameters):
    """:func:`learned_decision` from the bot's view of the turn (:func:`learned_view`'s arrays)."""
    count, first, plays, discards = legal_counts(legal, g)
    needs, hand, piles, heights, info, chances, buffer = view
    positions = 0
    if plays:
        best, positions = best_first_play(True, legal, g, needs, hand, piles, heights, info, chances, buffer)
        if best >= 0:
            return best, positions
    if not discards:
        return (END_TURN if legal[g, END_TURN] else first), positions
    return planned_discard(legal, g, needs, hand, piles, heights, info, chances[ODDS_ROW],
                           parameters[NUM_FEATURES:]), positions


@jit
def learned_action(r, legal, g, cfg, parameters):
    """The learned bot's action (parameters ``parameters``) for the seat to act in game ``g``; -1 when nothing
    is legal."""
    return learned_decision(r, legal, g, cfg, parameters)[0]


@jit
def act(r, legal, g, cfg, streams, variant):
    """The kernel bots' entry (:mod:`agents.batched.codes`): the learned bot with the shipped weights of row
    ``variant``."""
    return learned_action(r, legal, g, cfg, SHIPPED[variant])


@jit
def learned_actions(games, legal, cfg, rows, parameters, out):
    """``out[i]`` = the learned bot's action (parameters ``parameters``) in game ``rows[i]``."""
    for i in range(rows.shape[0]):
        g = rows[i]
        out[i] = learned_action(games[g], legal, g, cfg, parameters)


@jit
def position_features(r, legal, g, cfg, out):
    """The features of stopping now (no play) for the seat to act in game ``g``, into ``out`` (for tests)."""
    needs, hand, piles, heights, info, chances, buffer = learned_view(r, cfg, np.zeros(NUM_PARAMETERS))
    done = np.zeros(2, dtype=np.int64)
    work = np.empty(NUM_DISCARD_PILES, dtype=np.int64)
    stop_features(needs, hand, heights, done, needs, hand, heights, piles, info, chances, buffer, work, out)
