"""Cards, the deck, and the one shuffle every engine shares (RULES.md, "Cards").

Values ``1``-``12`` are number cards, ``13`` is the SKIP-BO wild card and ``0`` means
"no card" wherever a slot can be empty. One deck holds 12 copies of each number and
18 SKIP-BO cards (162 cards); the ``decks`` setting multiplies it.

Randomness contract (the batched engine reproduces it exactly): a shuffle of ``m``
cards draws ``rng.random(m)`` once and orders the cards by ``argsort`` of those keys
(stable); the last element of a pile is its top card.
"""

from __future__ import annotations

import numpy as np

NO_CARD = 0
WILD = 13
NUM_VALUES = 13
TOP_VALUE = 12
HAND_SIZE = 5
NUM_BUILDING_PILES = 4
NUM_DISCARD_PILES = 4
COPIES_PER_NUMBER = 12
WILDS_PER_DECK = 18
CARDS_PER_DECK = TOP_VALUE * COPIES_PER_NUMBER + WILDS_PER_DECK


def card_name(value: int) -> str:
    """``"SKIP-BO"`` for the wild card, the number otherwise."""
    return "SKIP-BO" if value == WILD else str(value)


def deck_counts(decks: int) -> list[int]:
    """How many cards of each value (index 1..13) ``decks`` decks hold; index 0 is unused."""
    return [0] + [COPIES_PER_NUMBER * decks] * TOP_VALUE + [WILDS_PER_DECK * decks]


def new_deck(decks: int) -> list[int]:
    """The unshuffled deck in a fixed order: all 1s, all 2s, ..., then the SKIP-BO cards."""
    counts = deck_counts(decks)
    return [value for value in range(1, NUM_VALUES + 1) for _ in range(counts[value])]


def shuffled(cards: list[int], rng: np.random.Generator) -> list[int]:
    """The cards in a random order: ``rng.random(len(cards))`` keys, stable argsort."""
    order = np.argsort(rng.random(len(cards)), kind="stable")
    return [cards[i] for i in order.tolist()]


def fits_on(card: int, pile_length: int) -> bool:
    """Whether ``card`` may go on a building pile holding ``pile_length`` cards.

    RULES.md, "A turn": a pile starts with a 1 or a SKIP-BO card, each next card is
    one higher, and a SKIP-BO card takes the value the pile needs next.
    """
    return card == WILD or card == pile_length + 1


def canonical_slots(piles) -> tuple[int, ...]:
    """Started slots plus the lowest empty slot: RULES.md's canonical slots (``piles``: the piles, or
    anything whose truth says whether each is started)."""
    slots = []
    empty_offered = False
    for slot, pile in enumerate(piles):
        if pile:
            slots.append(slot)
        elif not empty_offered:
            empty_offered = True
            slots.append(slot)
    return tuple(slots)


def cards_in_order(counts) -> list[int]:
    """The cards of per-value ``counts`` (index 1..13, as ``Game.hand_counts[seat]``), lowest first, SKIP-BO last."""
    return [value for value in range(1, WILD + 1) for _ in range(counts[value])]
