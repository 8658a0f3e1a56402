"""Checks for positions loaded from the state format of RULES.md ("State format").

:func:`check_state` refuses a broken position with a ``ValueError`` that names the problem.
It knows the format, not the game: :meth:`skipbo_env.Game.from_dict` calls it before loading.
Each check below is one of the rules "Loading checks the state and refuses ..." lists; every
refusal is a ``ValueError``, whatever the input's types (see :mod:`skipbo_env.validation`).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from skipbo_env.cards import (
    HAND_SIZE,
    NUM_BUILDING_PILES,
    NUM_DISCARD_PILES,
    NUM_VALUES,
    TOP_VALUE,
    WILD,
    card_name,
    deck_counts,
    fits_on,
)
from skipbo_env.rules import Rules
from skipbo_env.validation import check_plain_json, checked_int, excerpt, is_int

STATE_FORMAT = "skipbo-state/1"
REQUIRED_KEYS = (
    "rules", "seats", "building", "completed", "draw_pile", "current_seat", "phase", "dealer",
    "turn", "plays_this_turn", "quiet_turns",
)
OUTCOMES = ("win", "draw", "truncated")
SHOWN_MISCOUNTS = 3  # a card-count refusal names this many values, then how many more
PCG64_WORD = 2**128  # a PCG64 state and increment are 128-bit numbers


def check_state(state: dict) -> Rules:
    """Validate a state dict; return its rules. Raises ``ValueError`` naming the first problem."""
    check_plain_json(state, "the state")
    if not isinstance(state, dict):
        raise ValueError(f"a state must be a JSON object, got {type(state).__name__}")
    if state.get("format", STATE_FORMAT) != STATE_FORMAT:
        raise ValueError(f"unknown state format {excerpt(state.get('format'))}: expected {STATE_FORMAT!r}")
    missing = [key for key in REQUIRED_KEYS if key not in state]
    if missing:
        raise ValueError(f"state lacks {', '.join(missing)}")
    rules = Rules.from_dict(state["rules"])
    _check_layout(state, rules)
    _check_stockpile_sizes(state, rules)
    _check_cards(state, rules)
    _check_building_piles(state["building"])
    _check_completed(state["completed"])
    _check_turn(state, rules)
    _check_outcome(state, rules)
    _check_turn_counters(state, rules)
    if "rng" in state:
        checked_rng_state(state["rng"])
    return rules


def checked_rng_state(rng_state) -> dict:
    """The saved generator state (``"rng"``), refused unless it is a state numpy's PCG64 can be in.

    That is ``{"bit_generator": "PCG64", "state": {"state": S, "inc": I}, "has_uint32": 0 or 1,
    "uinteger": U}`` with ``S`` and ``I`` 128-bit numbers, ``I`` odd, and ``U`` a 32-bit number.
    """
    if not isinstance(rng_state, dict) or rng_state.get("bit_generator") != "PCG64":
        raise ValueError(f"rng is not a numpy PCG64 generator state: {excerpt(rng_state)}")
    words = rng_state.get("state")
    if not isinstance(words, dict) or not {"state", "inc"} <= set(words):
        raise ValueError(f"rng.state must hold the PCG64 words state and inc, not {excerpt(words)}")
    checked_int(words["state"], "rng.state.state", 0, PCG64_WORD - 1)
    checked_int(words["inc"], "rng.state.inc", 0, PCG64_WORD - 1)
    if words["inc"] % 2 == 0:
        raise ValueError(f"rng.state.inc={excerpt(words['inc'])} is even; a PCG64 increment is always odd")
    checked_int(rng_state.get("has_uint32"), "rng.has_uint32", 0, 1)
    checked_int(rng_state.get("uinteger"), "rng.uinteger", 0, 2**32 - 1)
    bit_generator = np.random.PCG64()
    bit_generator.state = rng_state
    return bit_generator.state


def _card_list(cards, where: str) -> list[int]:
    if not isinstance(cards, list):
        raise ValueError(f"{where} must be a list of cards")
    for card in cards:
        if isinstance(card, bool) or not isinstance(card, int) or not 1 <= card <= WILD:
            raise ValueError(f"{where} holds {excerpt(card)}, which is not a card: use 1-12, or 13 for SKIP-BO")
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


def _check_stockpile_sizes(state: dict, rules: Rules) -> None:
    """RULES.md, "Deal": a stockpile is dealt ``stock_size`` cards and only ever shrinks."""
    for index, seat in enumerate(state["seats"]):
        if len(seat["stock"]) > rules.stock_size:
            raise ValueError(
                f"seat {index}'s stockpile holds {len(seat['stock'])} cards, more than stock_size={rules.stock_size}"
            )


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
        f"{counts[value]} x {card_name(value)} (the deck has {excerpt(expected[value])})"
        for value in range(1, WILD + 1)
        if counts[value] != expected[value]
    ]
    if wrong:
        more = f"; and {len(wrong) - SHOWN_MISCOUNTS} more values" if len(wrong) > SHOWN_MISCOUNTS else ""
        raise ValueError(
            f"the cards do not match the deck (decks={excerpt(rules.decks)}, every card in exactly one place): "
            + "; ".join(wrong[:SHOWN_MISCOUNTS]) + more
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


def _check_turn(state: dict, rules: Rules) -> None:
    """A seat, dealer or turn out of range, or a seat to act that does not follow from dealer and turn."""
    n = rules.num_players
    for key, low, high in (("current_seat", 0, n - 1), ("dealer", 0, n - 1)):
        if not is_int(state[key]) or not low <= state[key] <= high:
            raise ValueError(f"{key}={excerpt(state[key])} is out of range: use a seat from {low} to {high}")
    for key in ("turn", "plays_this_turn", "quiet_turns"):
        if not is_int(state[key]) or state[key] < 0:
            raise ValueError(f"{key}={excerpt(state[key])} is out of range: use an integer >= 0")
    if rules.max_turns is not None and state["turn"] > rules.max_turns:
        raise ValueError(f"turn={state['turn']} is past max_turns={rules.max_turns}")
    expected = (state["dealer"] + 1 + state["turn"]) % n
    if state["current_seat"] != expected:
        raise ValueError(
            f"current_seat={state['current_seat']} does not follow from dealer={state['dealer']} and "
            f"turn={state['turn']}: the seat to act is (dealer + 1 + turn) % {n} = {expected}"
        )
    if state["phase"] not in ("draw", "play"):
        raise ValueError(f"phase={excerpt(state['phase'])} is not allowed: use 'draw' or 'play'")


def _check_outcome(state: dict, rules: Rules) -> None:
    """A running hand that is already won; an outcome whose winners do not follow from the state."""
    if "outcome" not in state:
        if "winners" in state:
            raise ValueError("winners are listed but the state has no outcome: only a finished hand has winners")
        _check_running_hand(state, rules)
        return
    outcome = state["outcome"]
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome={excerpt(outcome)} is not allowed: use one of {', '.join(OUTCOMES)}")
    winners = state.get("winners", [])
    if not isinstance(winners, list) or any(not is_int(s) or not 0 <= s < rules.num_players for s in winners):
        raise ValueError(f"winners={excerpt(winners)} must be a list of seats")
    if len(set(winners)) != len(winners):
        raise ValueError(f"winners={excerpt(winners)} lists a seat twice")
    if (outcome == "win") != bool(winners):
        raise ValueError("winners must list the winning seats when outcome is 'win', and be empty otherwise")
    if outcome == "truncated":
        _check_truncation(state, rules)
    won = [team for team in _teams(rules) if _has_won(team, state, rules)]
    if outcome == "win":
        _check_winners(winners, won, rules)
    elif won:
        raise ValueError(
            f"outcome={outcome!r}, but {_seats_text(won[0])} met the winning condition "
            f"({_winning_condition(rules)}): that hand was won"
        )


def _check_running_hand(state: dict, rules: Rules) -> None:
    """An empty hand for the seat to act while a card could be drawn; a hand that is already won."""
    seat = state["seats"][state["current_seat"]]
    can_draw = bool(state["draw_pile"] or state["completed"])
    if state["phase"] == "play" and not seat["hand"] and can_draw:
        raise ValueError(
            f"seat {state['current_seat']} is to act with an empty hand while a card could be drawn; "
            "it would have drawn (or save the state in phase 'draw')"
        )
    for team in _teams(rules):
        if _has_won(team, state, rules):
            if not rules.partners:
                raise ValueError(
                    f"seat {team[0]}'s stockpile is empty in a running singles hand: that hand is already won"
                )
            raise ValueError(f"team {team[0]} ({_seats_text(team)}) has already won this running hand")


def _check_truncation(state: dict, rules: Rules) -> None:
    """RULES.md, "A turn that never ends": a hand is truncated when ``turn`` reaches ``max_turns``."""
    if rules.max_turns is None:
        raise ValueError("outcome='truncated' needs max_turns: without it no hand is truncated")
    if state["turn"] != rules.max_turns:
        raise ValueError(
            f"outcome='truncated' at turn={state['turn']}: a hand is truncated when turn reaches "
            f"max_turns={rules.max_turns}"
        )


def _check_winners(winners: list[int], won: list[tuple[int, ...]], rules: Rules) -> None:
    """RULES.md, "Winning a hand" and "Partners": the winners are the one seat (team) that won."""
    team = tuple(sorted(winners))
    if team not in _teams(rules):
        if rules.partners:
            raise ValueError(
                f"winners={excerpt(winners)}: a partners hand is won by both seats of one team "
                f"(seats i and i + {rules.num_players // 2})"
            )
        raise ValueError(f"winners={excerpt(winners)}: a singles hand is won by one seat")
    if team not in won:
        raise ValueError(
            f"winners={excerpt(winners)}, but {_seats_text(team)} did not meet the winning condition "
            f"({_winning_condition(rules)})"
        )
    if len(won) > 1:
        raise ValueError(
            f"{_seats_text(won[0])} and {_seats_text(won[1])} both met the winning condition; "
            "the hand ends when the first does"
        )


def _teams(rules: Rules) -> list[tuple[int, ...]]:
    """The seats of each team: one seat each in singles, seats ``t`` and ``t + n/2`` in partners."""
    if not rules.partners:
        return [(seat,) for seat in range(rules.num_players)]
    half = rules.num_players // 2
    return [(team, team + half) for team in range(half)]


def _has_won(team: tuple[int, ...], state: dict, rules: Rules) -> bool:
    """RULES.md, "Winning a hand" and ``team_win``: has this seat (team) met the winning condition?"""
    empty = [not state["seats"][seat]["stock"] for seat in team]
    if rules.team_stock == "shared":
        return empty[0]  # the team's stockpile is stored on its first seat
    return all(empty) if rules.team_win == "both" else any(empty)


def _winning_condition(rules: Rules) -> str:
    if not rules.partners:
        return "an empty stockpile"
    if rules.team_stock == "shared":
        return "the team's shared stockpile empty"
    if rules.team_win == "both":
        return "both stockpiles of the team empty, team_win='both'"
    return "either stockpile of the team empty, team_win='either'"


def _seats_text(team: tuple[int, ...]) -> str:
    return f"seat {team[0]}" if len(team) == 1 else f"seats {team[0]} and {team[1]}"


def _check_turn_counters(state: dict, rules: Rules) -> None:
    """``plays_this_turn`` above ``max_turn_plays``; ``turn`` at ``max_turns`` or ``quiet_turns`` at the
    number of seats in a running hand (RULES.md, "Running out of cards to draw")."""
    n = rules.num_players
    running = "outcome" not in state
    if rules.max_turn_plays is not None and state["plays_this_turn"] > rules.max_turn_plays:
        raise ValueError(
            f"plays_this_turn={state['plays_this_turn']} is above max_turn_plays={rules.max_turn_plays}: "
            "once that many cards are played in a turn, no further play is legal"
        )
    if running and rules.max_turns is not None and state["turn"] >= rules.max_turns:
        raise ValueError(
            f"turn={state['turn']} in a running hand: the hand is truncated when turn reaches "
            f"max_turns={rules.max_turns}"
        )
    ended_by_quiet_turns = state.get("outcome") == "draw"
    if state["quiet_turns"] >= n and not (ended_by_quiet_turns and state["quiet_turns"] == n):
        raise ValueError(
            f"quiet_turns={excerpt(state['quiet_turns'])} with {n} seats: as many quiet turns in a row as "
            f"there are seats end the hand as a draw"
        )


def save_state(game) -> dict:
    """The position in the state format of RULES.md (JSON-ready)."""
    seats = []
    for seat in range(game.num_players):
        counts = game.hand_counts[seat]
        hand = [value for value in range(1, NUM_VALUES + 1) for _ in range(counts[value])]
        stock = list(game.stocks[seat]) if game.stockpile_owner(seat) == seat else []
        seats.append({"hand": hand, "stock": stock, "discards": [list(p) for p in game.discards[seat]]})
    state = {
        "format": STATE_FORMAT,
        "rules": game.rules.to_dict(),
        "seats": seats,
        "building": [list(pile) for pile in game.building],
        "completed": list(game.completed),
        "draw_pile": list(game.draw_pile),
        "current_seat": game.current_seat,
        "phase": game.phase,
        "dealer": game.dealer,
        "turn": game.turn,
        "plays_this_turn": game.plays_this_turn,
        "quiet_turns": game.quiet_turns,
        "rng": game._rng.bit_generator.state,
    }
    if game.outcome is not None:
        state["outcome"] = game.outcome
        state["winners"] = list(game.winners)
    return state


def load_position(game, state: dict) -> None:
    """Lay a checked state's cards and counters onto a new ``game`` (see :meth:`Game.from_dict`)."""
    for seat, seat_state in enumerate(state["seats"]):
        for value in seat_state["hand"]:
            game.hand_counts[seat][value] += 1
        game.hand_sizes[seat] = len(seat_state["hand"])
        game.discards[seat] = [list(pile) for pile in seat_state["discards"]]
    for seat in range(game.num_players):
        owner = game.stockpile_owner(seat)
        game.stocks[seat] = game.stocks[owner] if owner != seat else list(state["seats"][seat]["stock"])
    game.building = [list(pile) for pile in state["building"]]
    game.completed = list(state["completed"])
    game.draw_pile = list(state["draw_pile"])
    for key in ("current_seat", "dealer", "turn", "phase", "plays_this_turn", "quiet_turns"):
        setattr(game, key, state[key])
    if "outcome" in state:
        game.outcome = state["outcome"]
        game.winners = tuple(sorted(state.get("winners", ())))


def checked_seed(seed) -> int:
    """A seed for ``numpy.random.default_rng``: a non-negative integer (numpy's too, not a bool)."""
    if isinstance(seed, np.integer):
        seed = int(seed)
    return checked_int(seed, "seed", 0)
