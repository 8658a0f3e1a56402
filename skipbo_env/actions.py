"""The 145 action ids every agent, environment and tool shares (RULES.md, "Action ids").

Layout::

    id   0 .. 91   play:    id = source * 4 + pile        pile = building slot 0..3
                   source   0 .. 12  a hand card of value source + 1 (12 = SKIP-BO)
                            13       own stockpile top (the team's pile with team_stock="shared")
                            14 .. 17 top of own discard pile 0..3
                            18       partner's stockpile top          (partners, own stockpiles)
                            19 .. 22 top of partner's discard pile 0..3 (partners)
    id  92 .. 143  discard: id = 92 + (value - 1) * 4 + pile   own discard slot 0..3, ends the turn
    id 144         end turn (only with an empty hand when nothing can be drawn)

Human-readable descriptions number piles from 1, as players do: slot 0 is "pile 1". A play's source
is one of :data:`SOURCE_KINDS` with an index (:func:`source_kind`, :func:`source_of`); the web's
moves and ``skipbo play``'s keys name sources by these kinds. :func:`source_words` names a source's
pile; :mod:`skipbo_env.explain` tells a move in words with the cards it moves.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from skipbo_env.cards import NUM_BUILDING_PILES, card_name

NUM_ACTIONS = 145
HAND_SOURCES = 13
STOCK_SOURCE = 13
DISCARD_SOURCE = 14
PARTNER_STOCK_SOURCE = 18
PARTNER_DISCARD_SOURCE = 19
NUM_SOURCES = 23
FIRST_DISCARD = NUM_SOURCES * NUM_BUILDING_PILES  # 92
END_TURN = 144


def action_id(action: object) -> int | None:
    """``action`` as a plain ``int`` when it is an exact ``int`` or a numpy integer (never a ``bool``), else
    ``None``. The value is read, never asked for: an object's own ``__eq__``, ``__index__`` or ``__int__`` is not
    called, so a subclass of ``int`` that lies about itself is no action id. Whether it is in range and legal is
    the caller's question (``Game.step`` and the tournament runners ask it of this plain ``int``)."""
    if type(action) is int:
        return action
    if isinstance(action, np.integer) and type(action).__module__ == "numpy":
        return int(action)
    return None


def safe_repr(value: object, limit: int = 60) -> str:
    """A value for a message: the ``repr`` of a plain ``int``, ``float``, ``str``, ``bool``, ``None`` or numpy value
    (cut to ``limit`` characters); of any other object only its type's name, since its own ``__repr__`` may be
    anything."""
    if type(value) in (int, float, str, bool, type(None)) or type(value).__module__ == "numpy":
        text = repr(value)
        return text if len(text) <= limit else text[:limit - 3] + "..."
    return f"an object of type {type(value).__name__}"


def play_action(source: int, pile: int) -> int:
    return source * NUM_BUILDING_PILES + pile


def hand_play_action(value: int, pile: int) -> int:
    return (value - 1) * NUM_BUILDING_PILES + pile


def discard_action(value: int, pile: int) -> int:
    return FIRST_DISCARD + (value - 1) * NUM_BUILDING_PILES + pile


def is_play(action: int) -> bool:
    return 0 <= action < FIRST_DISCARD


def is_discard(action: int) -> bool:
    return FIRST_DISCARD <= action < END_TURN


def play_source(action: int) -> int:
    """The source of a play id (0-12 a hand value - 1, 13 own stockpile, 14-17 own discard piles, ...)."""
    return action // NUM_BUILDING_PILES


def play_pile(action: int) -> int:
    """The building slot (0-3) of a play id."""
    return action % NUM_BUILDING_PILES


def discard_value(action: int) -> int:
    """The card value (1-13) a discard id puts down."""
    return (action - FIRST_DISCARD) // NUM_BUILDING_PILES + 1


def discard_pile(action: int) -> int:
    """The own discard slot (0-3) of a discard id."""
    return (action - FIRST_DISCARD) % NUM_BUILDING_PILES


class ActionParts(NamedTuple):
    """An action id taken apart: ``kind`` is ``"play"``, ``"discard"`` or ``"end_turn"``; ``source``
    the play's source (:func:`describe_source`), ``value`` the card a discard puts down (1-13, 13 =
    SKIP-BO), ``pile`` the building or discard slot (0-3); fields that do not apply are ``None``."""

    kind: str
    source: int | None
    value: int | None
    pile: int | None


def decode_action(action: int) -> ActionParts:
    """``action`` (0-144) as named parts; ``ValueError`` for anything else."""
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"{action!r} is not an action id: use an integer from 0 to {NUM_ACTIONS - 1}")
    action = int(action)
    if is_play(action):
        return ActionParts("play", play_source(action), None, play_pile(action))
    if is_discard(action):
        return ActionParts("discard", None, discard_value(action), discard_pile(action))
    return ActionParts("end_turn", None, None, None)


SOURCE_KINDS = ("hand", "stock", "discard", "partner_stock", "partner_discard")
"""The piles a play takes its card from: the hand, the own stockpile, an own discard pile, the partner's."""
_FIRST_SOURCE = {"hand": 0, "stock": STOCK_SOURCE, "discard": DISCARD_SOURCE, "partner_stock": PARTNER_STOCK_SOURCE,
                 "partner_discard": PARTNER_DISCARD_SOURCE}


def source_kind(source: int) -> tuple[str, int]:
    """``(kind, index)`` of a play's source: the card value (1-13) for ``"hand"``, the discard slot (0-3)
    for ``"discard"`` and ``"partner_discard"``, 0 for the stockpiles."""
    if source < HAND_SOURCES:
        return "hand", source + 1
    kind = next(kind for kind in reversed(SOURCE_KINDS) if source >= _FIRST_SOURCE[kind])
    return kind, source - _FIRST_SOURCE[kind]


def source_of(kind: str, index: int = 0) -> int:
    """The source id of ``(kind, index)`` (the inverse of :func:`source_kind`)."""
    return index - 1 if kind == "hand" else _FIRST_SOURCE[kind] + index


def source_words(source: int, own: str = "", partners: str = "partner's") -> str:
    """The pile a play takes its card from, piles numbered from 1: ``"hand"``, ``"stockpile"``,
    ``"discard pile 2"``, ``"partner's stockpile"``, ``"partner's discard pile 2"``; ``own`` goes before
    the seat's own piles (``"your "``), ``partners`` names the partner (``"your partner's"``)."""
    kind, index = source_kind(source)
    pile = "stockpile" if kind.endswith("stock") else "hand" if kind == "hand" else f"discard pile {index + 1}"
    return f"{partners} {pile}" if kind.startswith("partner") else f"{own}{pile}"


def describe_source(source: int) -> str:
    """``"hand 5"``, ``"stockpile top"``, ``"discard pile 2 top"``, ``"partner's stockpile top"``, ..."""
    if source < HAND_SOURCES:
        return f"hand {card_name(source + 1)}"
    return f"{source_words(source)} top"


def describe_action(action: int) -> str:
    """A human-readable action, e.g. ``describe_action(16) == "play hand 5 on building pile 1"``."""
    if not isinstance(action, (int, np.integer)) or isinstance(action, bool) or not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action {action!r} is not an action id: use an integer from 0 to {NUM_ACTIONS - 1}")
    action = int(action)
    if action == END_TURN:
        return "end turn (empty hand, nothing to draw)"
    if is_discard(action):
        return f"discard {card_name(discard_value(action))} onto discard pile {discard_pile(action) + 1}"
    return f"play {describe_source(play_source(action))} on building pile {play_pile(action) + 1}"

