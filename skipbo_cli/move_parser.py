"""The short keys a person types in ``skipbo play``, turned into the action ids of docs/RULES.md.

Keys (case does not matter; piles are numbered from 1, as on the table)::

    s1          your stockpile top onto building pile 1
    h5 2        the 5 from your hand onto building pile 2
    hw 2, hs 2  a SKIP-BO from your hand onto building pile 2 (also hsb, h13, h*)
    t3 1        the top of your discard pile 3 onto building pile 1
    p4          your partner's stockpile top onto building pile 4     (partners games)
    pd2 3       the top of your partner's discard pile 2 onto pile 3  (partners games)
    d3 4        discard the 3 from your hand onto your discard pile 4 (ends the turn)
    dw 1        discard a SKIP-BO onto your discard pile 1
    e           end the turn (only with an empty hand when nothing can be drawn)
    #17         the action with id 17 (see docs/RULES.md, "Action ids")
    help, ?     these keys          moves, m   the moves you can make now
    table, t    draw the table      undo, u    take back your last play this turn
    quit, q     save the game and leave (Ctrl-C and Ctrl-D do the same)

The building pile may be left out when only one pile takes the card (``s``, ``h5``, ``t3``),
and the discard pile when you have no discard pile yet (``d3``).

:func:`parse_command` only reads the text; whether the move is legal is the engine's call
(``Game.step`` raises ``IllegalActionError`` with the reason). :func:`key_for_action` is the
inverse: the key that :func:`parse_command` reads back as the same action id.
"""

from __future__ import annotations

import dataclasses
import re

from skipbo_env.actions import (
    END_TURN,
    NUM_ACTIONS,
    decode_action,
    discard_action,
    play_action,
    source_kind,
    source_of,
    source_words,
)
from skipbo_env.cards import NUM_BUILDING_PILES, NUM_DISCARD_PILES, TOP_VALUE, WILD, card_name
from skipbo_env.explain import source_card
from skipbo_env.game import Game
from skipbo_cli.table_view import building_needs_text

HELP_TEXT = """\
Keys (piles are numbered from 1, as on the table; SB = a SKIP-BO card):
  s1          play your stockpile top on building pile 1
  h5 2        play the 5 from your hand on building pile 2
  hw 2        play a SKIP-BO from your hand on building pile 2 (also hs 2)
  t3 1        play the top card of your discard pile 3 on building pile 1
  p4          play your partner's stockpile top on building pile 4 (partners games)
  pd2 3       play the top of your partner's discard pile 2 on building pile 3 (partners games)
  d3 4        discard the 3 from your hand onto your discard pile 4: this ends your turn
  dw 1        discard a SKIP-BO onto your discard pile 1
  e           end your turn (only with an empty hand when nothing is left to draw)
  #17         the action with id 17 (docs/RULES.md, "Action ids")
Leave out the building pile when only one pile takes the card (s, h5, t3), and the
discard pile when you have no discard pile yet (d3).
  moves (m)   list the moves you can make now      table     draw the table again
  undo (u)    take back your last play this turn (not one that turned up or drew a new card)
  help (?)    this text                            quit (q)  save the game and leave
Ctrl-C and Ctrl-D also save the game and leave."""

_WILD_NAMES = ("w", "s", "sb", "skipbo", "skip-bo", "13", "*")
KEY_LETTERS = {"stock": "s", "hand": "h", "discard": "t", "partner_discard": "pd", "partner_stock": "p"}
"""The letter that names each kind of source (``skipbo_env.actions.SOURCE_KINDS``) in a typed key, in the
order the keys are tried (``pd`` before ``p``); ``d`` discards a hand card."""
DISCARD_LETTER = "d"
_CARD = r"(?P<card>\d{1,2}|w|sb|s|skip-?bo|\*)"
_PILE = r"(?:\s*[\s,>]\s*(?P<pile>\d+))?"
_AFTER_LETTER = {"stock": r"(?P<pile>\d+)?", "partner_stock": r"(?P<pile>\d+)?", "hand": _CARD + _PILE,
                 "discard": r"(?P<source_pile>\d+)" + _PILE, "partner_discard": r"(?P<source_pile>\d+)" + _PILE}
_PATTERNS = (
    *((kind, re.compile(letter + r"\s*" + _AFTER_LETTER[kind])) for kind, letter in KEY_LETTERS.items()),
    ("discard_card", re.compile(DISCARD_LETTER + r"\s*" + _CARD + _PILE)),
)
_WORDS = {
    "help": "help", "?": "help", "h": "help",
    "moves": "moves", "m": "moves", "list": "moves", "l": "moves",
    "table": "table", "t": "table",
    "undo": "undo", "u": "undo",
    "quit": "quit", "q": "quit", "exit": "quit",
    "e": "move", "end": "move",
}


class MoveInputError(ValueError):
    """Typed text that is not a command, or names a card or pile that cannot exist."""


@dataclasses.dataclass(frozen=True)
class Command:
    """What the person asked for: ``kind`` is move, help, moves, table, undo or quit."""

    kind: str
    action: int | None = None


def parse_command(text: str, game: Game | None = None) -> Command:
    """The command a line of input asks for; raises :class:`MoveInputError` saying why not.

    With ``game`` (the person is the seat to act) a key may leave out the pile when only one
    pile fits, and a card that fits nowhere is refused with what the piles need. Without it
    every pile must be typed. Whether a move is legal stays the engine's call.
    """
    normalized = " ".join(text.strip().lower().split())
    if not normalized:
        raise MoveInputError("type a move (for example s1 or h5 2), moves to list them, or help")
    if normalized in _WORDS:
        kind = _WORDS[normalized]
        return Command(kind, END_TURN if kind == "move" else None)
    if normalized.startswith("#"):
        return Command("move", _action_id(normalized[1:].strip()))
    for kind, pattern in _PATTERNS:
        match = pattern.fullmatch(normalized)
        if match:
            return Command("move", _move(kind, match, game))
    raise MoveInputError(f"{text.strip()!r} is not a command: type help for the keys, or moves for the moves you can make now")


def _action_id(digits: str) -> int:
    if not digits.isdigit() or int(digits) >= NUM_ACTIONS:
        raise MoveInputError(f"#{digits} is not an action id: use #0 to #{NUM_ACTIONS - 1}")
    return int(digits)


def _move(kind: str, match: re.Match, game: Game | None) -> int:
    groups = match.groupdict()
    if kind == "discard_card":
        value = _card_value(groups["card"], DISCARD_LETTER)
        pile = _pile_number(groups["pile"], NUM_DISCARD_PILES, "discard")
        if pile is not None:
            return discard_action(value, pile)
        return _only_pile(discard_action(value, 0), "discard pile", game, f"you hold no {card_name(value)}")
    if kind == "hand":
        index = _card_value(groups["card"], KEY_LETTERS["hand"])
    elif kind.endswith("discard"):
        index = _pile_number(groups["source_pile"], NUM_DISCARD_PILES, "discard")
    else:
        index = 0
    source = source_of(kind, index)
    pile = _pile_number(groups["pile"], NUM_BUILDING_PILES, "building")
    if pile is not None:
        return play_action(source, pile)
    nowhere = ""
    if game is not None:
        nowhere = source_card(game, game.current_seat, source, you=True)[1] or (
            f"{_source_card_words(source)} fits no building pile now ({building_needs_text(game)})")
    return _only_pile(play_action(source, 0), "building pile", game, nowhere)


def _source_card_words(source: int) -> str:
    """The card a play from ``source`` moves, told to the player: "the 5 from your hand", "your stockpile top",
    "the top of your discard pile 3"."""
    kind, index = source_kind(source)
    pile = source_words(source, "your ", "your partner's")
    if kind == "hand":
        return f"the {card_name(index)} from {pile}"
    return f"{pile} top" if kind.endswith("stock") else f"the top of {pile}"


def _only_pile(first: int, pile_word: str, game: Game | None, nowhere: str) -> int:
    """The one legal action among ``first .. first + 3`` (the same card, piles 1-4), else why not."""
    if game is None:
        raise MoveInputError(f"say which {pile_word}: for example {key_for_action(first)}")
    candidates = [action for action in game.legal_actions() if first <= action < first + 4]
    if not candidates:
        raise MoveInputError(nowhere)
    if len(candidates) > 1:
        keys = " or ".join(key_for_action(action) for action in candidates)
        raise MoveInputError(f"say which {pile_word}: {keys}")
    return candidates[0]


def _card_value(text: str, prefix: str) -> int:
    if text in _WILD_NAMES:
        return WILD
    if text.isdigit() and 1 <= int(text) <= TOP_VALUE:
        return int(text)
    raise MoveInputError(f"{prefix}{text} names no card: use {prefix}1 to {prefix}{TOP_VALUE}, or {prefix}w for a SKIP-BO")


def _pile_number(text: str | None, count: int, kind: str) -> int | None:
    """The 0-based slot of a pile typed as 1..count; None when left out."""
    if text is None:
        return None
    if not 1 <= int(text) <= count:
        raise MoveInputError(f"there is no {kind} pile {int(text)}: {kind} piles are numbered 1 to {count}")
    return int(text) - 1


def _card_key(value: int) -> str:
    return "w" if value == WILD else str(value)


def key_for_action(action: int) -> str:
    """The key :func:`parse_command` reads as ``action`` (e.g. 53 -> ``"s2"``, 16 -> ``"h5 1"``)."""
    parts = decode_action(action)
    if parts.kind == "end_turn":
        return "e"
    if parts.kind == "discard":
        return f"{DISCARD_LETTER}{_card_key(parts.value)} {parts.pile + 1}"
    kind, index = source_kind(parts.source)
    letter = KEY_LETTERS[kind]
    if kind == "hand":
        return f"{letter}{_card_key(index)} {parts.pile + 1}"
    if kind.endswith("stock"):
        return f"{letter}{parts.pile + 1}"
    return f"{letter}{index + 1} {parts.pile + 1}"
