"""Checks for positions loaded from the state format of RULES.md ("State format").

:func:`check_state` refuses a broken position with a ``ValueError`` that names the problem.
It knows the format, not the game: :meth:`skipbo_env.Game.from_dict` calls it before loading.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from skipbo_env.cards import (
    HAND_SIZE,
    NUM_BUILDING_PILES,
    NUM_DISCARD_PILES,
    TOP_VALUE,
    WILD,
    card_name,
    deck_counts,
    fits_on,
)
from skipbo_env.rules import Rules

STATE_FORMAT = "skipbo-state/1"
REQUIRED_KEYS = (
    "rules", "seats", "building", "completed", "draw_pile", "current_seat", "phase", "dealer",
    "turn", "plays_this_turn", "quiet_turns",
)
OUTCOMES = ("win", "draw", "truncated")


def check_state(state: dict) -> Rules:
    """Validate a state dict; return its rules. Raises ``ValueError`` naming the first problem."""
    if not isinstance(state, dict):
        raise ValueError(f"a state must be a JSON object, got {type(state).__name__}")
    if state.get("format", STATE_FORMAT) != STATE_FORMAT:
        raise ValueError(f"unknown state format {state.get('format')!r}: expected {STATE_FORMAT!r}")
    missing = [key for key in REQUIRED_KEYS if key not in state]
    if missing:
        raise ValueError(f"state lacks {', '.join(missing)}")
    rules = Rules.from_dict(state["rules"])
    _check_layout(state, rules)
    _check_cards(state, rules)
    _check_building_piles(state["building"])
    _check_completed(state["completed"])
    _check_turn(state, rules)
    _check_outcome(state, rules)
    return rules


def checked_rng_state(rng_state) -> dict:
    """The saved generator state (``"rng"``), refused unless it is numpy's PCG64 state."""
    bit_generator = np.random.PCG64()
    try:
        bit_generator.state = rng_state
    except (TypeError, ValueError, KeyError) as error:
        raise ValueError(f"rng is not a numpy PCG64 generator state ({error})") from None
    return bit_generator.state


def _card_list(cards, where: str) -> list[int]:
    if not isinstance(cards, list):
        raise ValueError(f"{where} must be a list of cards")
    for card in cards:
        if isinstance(card, bool) or not isinstance(card, int) or not 1 <= card <= WILD:
            raise ValueError(f"{where} holds {card!r}, which is not a card: use 1-12, or 13 for SKIP-BO")
    return cards


def _check_layout(state: dict, rules: Rules) -> None:
    seats = state["seats"]
    if not isinstance(seats, list) or len(seats) != rules.num_players:
        count = len(seats) if isinstance(seats, list) else "no list of"
        raise ValueError(f"the state has {count} seats but rules.num_players is {rules.num_players}")
    for index, seat in enumerate(seats):
        if not isinstance(seat, dict) or not {"hand", "stock", "discards"} <= set(seat):
            raise ValueError(f"seat {index} must have hand, stock and discards")
        hand = _card_list(seat["hand"], f"seat {index}'s hand")
        if len(hand) > HAND_SIZE:
            raise ValueError(f"seat {index}'s hand holds {len(hand)} cards; a hand holds at most {HAND_SIZE}")
        _card_list(seat["stock"], f"seat {index}'s stock")
        discards = seat["discards"]
        if not isinstance(discards, list) or len(discards) != NUM_DISCARD_PILES:
            raise ValueError(f"seat {index} must have exactly {NUM_DISCARD_PILES} discard slots")
        for slot, pile in enumerate(discards):
            _card_list(pile, f"seat {index}'s discard pile {slot}")
        if rules.team_stock == "shared" and rules.team_of(index) != index and seat["stock"]:
            raise ValueError(
                f"with team_stock='shared' a team's stockpile is stored on seat {rules.team_of(index)}; "
                f"seat {index}'s stock must be []"
            )
    building = state["building"]
    if not isinstance(building, list) or len(building) != NUM_BUILDING_PILES:
        raise ValueError(f"the state must have exactly {NUM_BUILDING_PILES} building slots")
    for slot, pile in enumerate(building):
        _card_list(pile, f"building pile {slot}")
    _card_list(state["completed"], "completed")
    _card_list(state["draw_pile"], "draw_pile")


def _all_cards(state: dict):
    for seat in state["seats"]:
        yield from seat["hand"]
        yield from seat["stock"]
        for pile in seat["discards"]:
            yield from pile
    for pile in state["building"]:
        yield from pile
    yield from state["completed"]
    yield from state["draw_pile"]


def _check_cards(state: dict, rules: Rules) -> None:
    """Every card of the deck in exactly one place."""
    counts = Counter(_all_cards(state))
    expected = deck_counts(rules.decks)
    wrong = [
        f"{counts[value]} x {card_name(value)} (the deck has {expected[value]})"
        for value in range(1, WILD + 1)
        if counts[value] != expected[value]
    ]
    if wrong:
        raise ValueError(
            f"the cards do not match the deck (decks={rules.decks}, every card in exactly one place): "
            + "; ".join(wrong)
        )


def _check_building_piles(building: list[list[int]]) -> None:
    for slot, pile in enumerate(building):
        if len(pile) >= TOP_VALUE:
            raise ValueError(f"building pile {slot} holds {len(pile)} cards; a pile of 12 is set aside at once")
        for position, card in enumerate(pile):
            if not fits_on(card, position):
                raise ValueError(
                    f"building pile {slot} is out of sequence: card {position + 1} is a {card_name(card)}, "
                    f"it must be a {position + 1} or SKIP-BO"
                )


def _check_completed(completed: list[int]) -> None:
    """Completed cards must form whole piles of 12: one card per value, or a SKIP-BO in its place."""
    piles, remainder = divmod(len(completed), TOP_VALUE)
    counts = Counter(completed)
    too_many = [value for value in range(1, TOP_VALUE + 1) if counts[value] > piles]
    if remainder or too_many:
        raise ValueError(
            f"the {len(completed)} completed cards do not form whole piles of 12 (1 to 12, SKIP-BO for any)"
        )


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_turn(state: dict, rules: Rules) -> None:
    n = rules.num_players
    for key, low, high in (("current_seat", 0, n - 1), ("dealer", 0, n - 1)):
        if not _is_int(state[key]) or not low <= state[key] <= high:
            raise ValueError(f"{key}={state[key]!r} is out of range: use a seat from {low} to {high}")
    for key in ("turn", "plays_this_turn", "quiet_turns"):
        if not _is_int(state[key]) or state[key] < 0:
            raise ValueError(f"{key}={state[key]!r} is out of range: use an integer >= 0")
    if rules.max_turns is not None and state["turn"] > rules.max_turns:
        raise ValueError(f"turn={state['turn']} is past max_turns={rules.max_turns}")
    expected = (state["dealer"] + 1 + state["turn"]) % n
    if state["current_seat"] != expected:
        raise ValueError(
            f"current_seat={state['current_seat']} does not follow from dealer={state['dealer']} and "
            f"turn={state['turn']}: the seat to act is (dealer + 1 + turn) % {n} = {expected}"
        )
    if state["phase"] not in ("draw", "play"):
        raise ValueError(f"phase={state['phase']!r} is not allowed: use 'draw' or 'play'")


def _check_outcome(state: dict, rules: Rules) -> None:
    outcome = state.get("outcome")
    if outcome is not None:
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome={outcome!r} is not allowed: use one of {', '.join(OUTCOMES)}")
        winners = state.get("winners", [])
        if not isinstance(winners, list) or any(not _is_int(s) or not 0 <= s < rules.num_players for s in winners):
            raise ValueError(f"winners={winners!r} must be a list of seats")
        if (outcome == "win") != bool(winners):
            raise ValueError("winners must list the winning seats when outcome is 'win', and be empty otherwise")
        return
    seat = state["seats"][state["current_seat"]]
    can_draw = bool(state["draw_pile"] or state["completed"])
    if state["phase"] == "play" and not seat["hand"] and can_draw:
        raise ValueError(
            f"seat {state['current_seat']} is to act with an empty hand while a card could be drawn; "
            "it would have drawn (or save the state in phase 'draw')"
        )
    _check_no_hand_already_won(state, rules)


def _check_no_hand_already_won(state: dict, rules: Rules) -> None:
    """A running hand cannot have a winner already (singles: an empty stockpile)."""
    stocks = [seat["stock"] for seat in state["seats"]]
    if not rules.partners:
        for seat, stock in enumerate(stocks):
            if not stock:
                raise ValueError(f"seat {seat}'s stockpile is empty in a running singles hand: that hand is already won")
        return
    half = rules.num_players // 2
    for team in range(half):
        if rules.team_stock == "shared":
            won = not stocks[team]
        elif rules.team_win == "both":
            won = not stocks[team] and not stocks[team + half]
        else:
            won = not stocks[team] or not stocks[team + half]
        if won:
            raise ValueError(f"team {team} (seats {team} and {team + half}) has already won this running hand")
