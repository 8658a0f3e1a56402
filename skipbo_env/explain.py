"""The prose of the rules engine: why an action is not legal, how a hand ended.

Kept apart from :mod:`skipbo_env.game`, which reads as the rulebook; everything here only
reads a game and explains it, in the words a player at the table would use.
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
    describe_action,
    discard_value,
    play_action,
    play_pile,
    play_source,
)
from skipbo_env.cards import canonical_slots, card_name


def why_illegal(game, action) -> str:
    """Why ``action`` is not legal in ``game``'s position, in a player's words (the message of
    :class:`~skipbo_env.game.IllegalActionError`)."""
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or not 0 <= action < NUM_ACTIONS:
        return f"{action!r} is not an action id: use an integer from 0 to {NUM_ACTIONS - 1}"
    action = int(action)
    what = f"action {action} ({describe_action(action)}) is not legal"
    if game.outcome is not None:
        return f"{what}: the hand is over ({game.outcome})"
    seat = game.current_seat
    if action == END_TURN:
        return f"{what}: end turn needs an empty hand and nothing to draw; seat {seat} holds {game.hand_sizes[seat]} cards"
    if action >= FIRST_DISCARD:
        value = discard_value(action)
        if not game.hand_counts[seat][value]:
            return f"{what}: seat {seat} holds no {card_name(value)} in hand (only hand cards can be discarded)"
        return f"{what}: a new discard pile must use the lowest empty slot, discard pile {canonical_slots(game.discards[seat])[-1] + 1}"
    if game.turn_play_limit_reached():
        then = "discard to end the turn" if game.hand_sizes[seat] else f"end the turn (id {END_TURN})"
        return (f"{what}: seat {seat} has played {game.plays_this_turn} cards this turn, the limit "
                f"(max_turn_plays={game.rules.max_turn_plays}); no further play is legal: {then}")
    source, slot = play_source(action), play_pile(action)
    card, reason = source_card(game, seat, source)
    if reason:
        return f"{what}: {reason}"
    needed = dict(game.open_building_piles())
    if slot not in needed:
        lowest = next(s for s, pile in enumerate(game.building) if not pile)
        return f"{what}: a new building pile must use the lowest empty slot, building pile {lowest + 1}"
    return f"{what}: building pile {slot + 1} needs a {needed[slot]} (or SKIP-BO), not a {card_name(card)}"


def source_card(game, seat: int, source: int) -> tuple[int, str]:
    """The card a play would take and, if there is none, why."""
    if source < STOCK_SOURCE:
        has = game.hand_counts[seat][source + 1]
        return source + 1, "" if has else f"seat {seat} holds no {card_name(source + 1)} in hand"
    if source == STOCK_SOURCE:
        stock = game.stocks[seat]
        return (stock[-1], "") if stock else (0, f"seat {seat}'s stockpile is empty")
    if source < PARTNER_STOCK_SOURCE:
        pile = game.discards[seat][source - DISCARD_SOURCE]
        return (pile[-1], "") if pile else (0, f"discard pile {source - DISCARD_SOURCE + 1} is empty")
    partner = game.partner_of(seat)
    if partner is None:
        return 0, "plays from a partner's piles exist only in partners games"
    if source == PARTNER_STOCK_SOURCE:
        if game.rules.team_stock == "shared":
            return 0, f"with team_stock='shared' the team's stockpile is played as the own stockpile (ids {play_action(STOCK_SOURCE, 0)}-{play_action(STOCK_SOURCE, 3)})"
        stock = game.stocks[partner]
        return (stock[-1], "") if stock else (0, "the partner's stockpile is empty")
    pile = game.discards[partner][source - PARTNER_DISCARD_SOURCE]
    index = source - PARTNER_DISCARD_SOURCE + 1
    return (pile[-1], "") if pile else (0, f"the partner's discard pile {index} is empty")


def outcome_sentence(game, names: list[str]) -> str:
    """How the hand ended, as one sentence naming the seats by ``names`` (``"you"`` for a viewer);
    empty while the hand is running."""
    if game.outcome == "win":
        winners = " and ".join(names[seat] for seat in game.winners)
        return f"{winners[0].upper() + winners[1:]} won the hand: {game.points()[game.winners[0]]} points."
    if game.outcome == "draw":
        return "The hand ended in a draw: nothing was left to play or draw, and nobody scores."
    if game.outcome == "truncated":
        return f"The hand was cut off after {game.turn} turns (max_turns): nobody scores."
    return ""
