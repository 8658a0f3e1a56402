"""A position as JSON for the browser, and moves in the client's shape.

:func:`seat_view` is what one seat sees (RULES.md: hands are private, a stockpile shows only its
top card and size, the draw pile only its size; building and discard piles are public, every
discard card visible). :func:`open_view` is the same with every hand shown, for replays of saved
games. Both carry no seed and no generator state, so a view never lets the client work out
cards it may not see. Moves are told in words by ``skipbo_env.explain.move_words``.

Moves as the client names them (:func:`action_from_move`)::

    {"from": "hand", "value": 7, "to": "building", "pile": 0}     # pile 0..3, as in RULES.md slots
    {"from": "stock", "to": "building", "pile": 2}
    {"from": "discard", "pile_from": 1, "to": "building", "pile": 0}
    {"from": "partner_stock" | "partner_discard", ...}              # partners games
    {"from": "hand", "value": 13, "to": "discard", "pile": 3}       # 13 = SKIP-BO
    {"end_turn": true}
"""

from __future__ import annotations

from skipbo_env import Game
from skipbo_env.actions import END_TURN, SOURCE_KINDS, decode_action, discard_action, play_action, source_kind, source_of
from skipbo_env.cards import NUM_BUILDING_PILES, NUM_DISCARD_PILES, WILD, cards_in_order
from skipbo_env.explain import move_words

TARGETS = ("building", "discard")


class MoveError(ValueError):
    """A move the client named in a shape that is not a move; the message says what is allowed."""


def _seat_view(game: Game, seat: int, names: list[str], show_hand: bool) -> dict:
    stock = game.stocks[seat]
    partner = game.partner_of(seat)
    return {
        "seat": seat,
        "name": names[seat],
        "team": game.rules.team_of(seat),
        "partner": partner,
        "stock_top": stock[-1] if stock else None,
        "stock_size": len(stock),
        "shares_stock": partner is not None and game.rules.team_stock == "shared",
        "hand_size": game.hand_sizes[seat],
        "hand": cards_in_order(game.hand_counts[seat]) if show_hand else None,
        "discards": [list(pile) for pile in game.discards[seat]],
    }


def _table(game: Game, names: list[str], shown: set[int]) -> dict:
    return {
        "num_players": game.num_players,
        "turn": game.turn + 1,
        "dealer": game.dealer,
        "current_seat": None if game.is_over else game.current_seat,
        "plays_this_turn": game.plays_this_turn,
        "building": [
            {"size": len(pile), "top": pile[-1] if pile else None, "needs": len(pile) + 1} for pile in game.building
        ],
        "draw_pile_size": len(game.draw_pile),
        "completed_size": len(game.completed),
        "seats": [_seat_view(game, seat, names, seat in shown) for seat in range(game.num_players)],
        "outcome": game.outcome,
        "winners": list(game.winners),
        "points": list(game.points()) if game.is_over else None,
        "rules": game.rules.to_dict(),
    }


def seat_view(game: Game, seat: int, names: list[str]) -> dict:
    """The table as ``seat`` sees it: only that seat's hand; its legal moves when it is to act."""
    view = _table(game, names, {seat})
    view["viewer"] = seat
    to_act = not game.is_over and game.current_seat == seat
    view["legal"] = [{"id": action, "words": move_words(game, action), "move": move_of_action(action)}
                     for action in game.legal_actions()] if to_act else []
    return view


def open_view(game: Game, names: list[str]) -> dict:
    """The table with every hand shown (replays of saved games)."""
    view = _table(game, names, set(range(game.num_players)))
    view["viewer"] = None
    return view


# ---------------------------------------------------------------------- moves
def move_of_action(action: int) -> dict:
    """The client's shape of an action id (the inverse of :func:`action_from_move`)."""
    parts = decode_action(action)
    if parts.kind == "end_turn":
        return {"end_turn": True}
    if parts.kind == "discard":
        return {"from": "hand", "value": parts.value, "to": "discard", "pile": parts.pile}
    kind, index = source_kind(parts.source)
    move = {"from": kind}
    if kind == "hand":
        move["value"] = index
    elif kind.endswith("discard"):
        move["pile_from"] = index
    return {**move, "to": "building", "pile": parts.pile}


def _int_field(move: dict, key: str, low: int, high: int) -> int:
    value = move.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise MoveError(f"move field {key!r} is {value!r}: use an integer from {low} to {high}")
    return value


def action_from_move(move) -> int:
    """The action id of a move in the client's shape (module docstring); :class:`MoveError` if malformed.

    Only the shape is checked here; whether the move is legal is the engine's to say.
    """
    if not isinstance(move, dict):
        raise MoveError(f"a move must be a JSON object, got {type(move).__name__}")
    if move.get("end_turn") is True:
        return END_TURN
    source, target = move.get("from"), move.get("to")
    if source not in SOURCE_KINDS:
        raise MoveError(f"move field 'from' is {source!r}: use one of {', '.join(SOURCE_KINDS)} (or end_turn: true)")
    if target not in TARGETS:
        raise MoveError(f"move field 'to' is {target!r}: use one of {', '.join(TARGETS)}")
    pile = _int_field(move, "pile", 0, (NUM_BUILDING_PILES if target == "building" else NUM_DISCARD_PILES) - 1)
    if target == "discard":
        if source != "hand":
            raise MoveError("only a hand card can be discarded (a discard ends the turn)")
        return discard_action(_int_field(move, "value", 1, WILD), pile)
    if source == "hand":
        index = _int_field(move, "value", 1, WILD)
    elif source.endswith("discard"):
        index = _int_field(move, "pile_from", 0, NUM_DISCARD_PILES - 1)
    else:
        index = 0
    return play_action(source_of(source, index), pile)
