"""Small positions in the state format of RULES.md, for tests.

``position(...)`` takes only the cards a test cares about and places the rest of the deck
so that every card is in exactly one place: by default at the bottom of the draw pile.
"""

from __future__ import annotations

from collections import Counter

from skipbo_env import Rules
from skipbo_env.cards import deck_counts


def position(rules: dict | None = None, seats: list[dict] | None = None, building=None, completed=None,
             draw_pile=None, current_seat: int = 0, turn: int = 0, phase: str = "play",
             rest: tuple = ("draw_pile",), **extra) -> dict:
    """A valid state. ``rest`` says where the unplaced cards go: ``("draw_pile",)`` (under the
    given draw pile), ``("discard", seat, slot)`` or ``("stock", seat)`` (under the given stock)."""
    settings = Rules.from_dict(rules or {}).to_dict()
    n = settings["num_players"]
    seats = [_seat(seat) for seat in (seats or [{} for _ in range(n)])]
    state = {
        "format": "skipbo-state/1",
        "rules": settings,
        "seats": seats,
        "building": [list(p) for p in (building or [[], [], [], []])],
        "completed": list(completed or []),
        "draw_pile": list(draw_pile or []),
        "current_seat": current_seat,
        "phase": phase,
        "dealer": (current_seat - 1 - turn) % n,
        "turn": turn,
        "plays_this_turn": 0,
        "quiet_turns": 0,
    }
    state.update(extra)
    leftover = _leftover(state, settings["decks"])
    if rest[0] == "draw_pile":
        state["draw_pile"] = leftover + state["draw_pile"]
    elif rest[0] == "discard":
        pile = state["seats"][rest[1]]["discards"][rest[2]]
        pile[:0] = leftover
    else:
        stock = state["seats"][rest[1]]["stock"]
        stock[:0] = leftover
    return state


def _seat(seat: dict) -> dict:
    return {
        "hand": list(seat.get("hand", [])),
        "stock": list(seat.get("stock", [])),
        "discards": [list(p) for p in seat.get("discards", [[], [], [], []])],
    }


def _leftover(state: dict, decks: int) -> list[int]:
    placed = Counter(all_cards(state))
    counts = deck_counts(decks)
    leftover = []
    for value in range(1, 14):
        missing = counts[value] - placed[value]
        assert missing >= 0, f"the position uses too many {value}s"
        leftover += [value] * missing
    return leftover


def all_cards(state: dict) -> list[int]:
    """Every card of a state, wherever it lies."""
    cards = []
    for seat in state["seats"]:
        cards += seat["hand"] + seat["stock"]
        for pile in seat["discards"]:
            cards += pile
    for pile in state["building"]:
        cards += pile
    return cards + state["completed"] + state["draw_pile"]
