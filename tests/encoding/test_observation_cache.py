"""ObservationCache: after every kind of action, each seat's vector is ``encode_observation``'s, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from skipbo_env import Game, Rules
from skipbo_env.actions import (
    DISCARD_SOURCE,
    END_TURN,
    FIRST_DISCARD,
    HAND_SOURCES,
    PARTNER_DISCARD_SOURCE,
    PARTNER_STOCK_SOURCE,
    STOCK_SOURCE,
    discard_pile,
    hand_play_action,
    play_source,
)
from skipbo_env.encoding import DISCARD_DEPTH, ObservationCache, encode_observation
from tests.positions import position

ALL_CHANGES = {"hand play", "stockpile play", "discard-pile play", "partner stockpile play",
               "partner discard-pile play", "discard", "card buried", "buried card uncovered", "pile completed",
               "completed piles recycled", "hand refilled", "turn passed", "hand over"}


def same_bits(first: np.ndarray, second: np.ndarray) -> bool:
    return first.dtype == second.dtype == np.float32 and np.array_equal(first.view(np.uint32), second.view(np.uint32))


def changes(before: Game, game: Game, action: int) -> set[str]:
    """What ``action`` did, read off the positions before and after it."""
    seat = before.current_seat
    found = set()
    if action < FIRST_DISCARD:
        source = play_source(action)
        kind = ("hand play" if source < HAND_SOURCES else "stockpile play" if source == STOCK_SOURCE
                else "partner stockpile play" if source == PARTNER_STOCK_SOURCE
                else "discard-pile play" if source < PARTNER_STOCK_SOURCE else "partner discard-pile play")
        found.add(kind)
        if kind.endswith("discard-pile play"):
            owner = seat if source < PARTNER_STOCK_SOURCE else game.partner_of(seat)
            pile = source - (DISCARD_SOURCE if source < PARTNER_STOCK_SOURCE else PARTNER_DISCARD_SOURCE)
            if len(game.discards[owner][pile]) >= DISCARD_DEPTH:
                found.add("buried card uncovered")
        if before.hand_sizes[seat] and game.hand_sizes[seat] > before.hand_sizes[seat]:
            found.add("hand refilled")
    elif action < END_TURN:
        found.add("discard")
        if len(game.discards[seat][discard_pile(action)]) > DISCARD_DEPTH:
            found.add("card buried")
    if len(game.completed) > len(before.completed):
        found.add("pile completed")
    if len(game.completed) < len(before.completed):
        found.add("completed piles recycled")
    if game.current_seat != seat:
        found.add("turn passed")
    if game.is_over:
        found.add("hand over")
    return found


def eager_action(game: Game, rng: np.random.Generator, eagerness: float = 0.9) -> int:
    """A play when there is one (with probability ``eagerness``), preferring the partner's piles; otherwise any
    legal id. Eager games complete and recycle piles; the others grow discard piles deeper than DISCARD_DEPTH."""
    legal = game.legal_actions()
    plays = [a for a in legal if a < FIRST_DISCARD]
    partner_plays = [a for a in plays if play_source(a) >= PARTNER_STOCK_SOURCE]
    choices = partner_plays or plays if plays and rng.random() < eagerness else legal
    return choices[int(rng.integers(len(choices)))]


SINGLES = {"partner stockpile play", "partner discard-pile play"}


@pytest.mark.parametrize(("table", "absent"), [
    ({"num_players": 2, "stock_size": 20}, SINGLES),
    ({"num_players": 4, "partners": True, "stock_size": 15}, set()),
    ({"num_players": 4, "partners": True, "team_stock": "shared", "stock_size": 15}, {"partner stockpile play"}),
    ({"num_players": 3, "max_turn_plays": 2, "stock_size": 10}, SINGLES | {"hand refilled"}),  # 2 plays a turn
    ({"num_players": 2, "decks": 2, "stock_size": 50, "max_turns": 150}, SINGLES),
], ids=lambda value: str(value) if isinstance(value, dict) else "")
def test_every_seat_sees_encode_observations_vector_after_every_kind_of_action(table, absent):
    """Observed after every action, some times from every seat; the games go through every kind of
    change the table allows (``absent``: those it does not)."""
    rng = np.random.default_rng(7)
    cache = ObservationCache()
    seen = set()
    for seed in range(4):
        game = Game.new(Rules(**table), seed=seed)
        while not game.is_over:
            before = game.copy()
            action = eager_action(game, rng, 0.9 if seed % 2 else 0.3)
            game.step(action)
            seen |= changes(before, game, action)
            seats = range(game.num_players) if rng.random() < 0.3 else [game.current_seat]
            for seat in seats:
                assert same_bits(cache.encode(game, seat), encode_observation(game, seat)), (seed, action, seat)
    assert seen == ALL_CHANGES - absent


def test_a_turn_ended_with_an_empty_hand_and_nothing_to_draw():
    """The last card played from the hand, nothing left to draw: the end-turn id, then the next seat."""
    state = position(seats=[{"hand": [1], "stock": [5]}, {"stock": [7]}], rest=("discard", 1, 0))
    game = Game.from_dict(state, seed=0)
    cache = ObservationCache()
    for action in (hand_play_action(1, 0), END_TURN):
        assert same_bits(cache.encode(game, 1), encode_observation(game, 1))
        game.step(action)
        for seat in (0, 1):
            assert same_bits(cache.encode(game, seat), encode_observation(game, seat))
    assert game.current_seat == 1 and game.turn == 1


def test_a_discard_pile_of_hundreds_of_cards_is_counted_exactly():
    """Counts past 255 (a byte) and buried cards from the first observation on."""
    state = position(rules={"decks": 4, "stock_size": 10}, seats=[{"hand": [3, 4], "stock": [5]}, {"stock": [7]}],
                     rest=("discard", 1, 2))
    game = Game.from_dict(state, seed=0)
    assert len(game.discards[1][2]) > 255
    cache = ObservationCache()
    rng = np.random.default_rng(0)
    for _ in range(30):
        for seat in (0, 1):
            assert same_bits(cache.encode(game, seat), encode_observation(game, seat))
        if game.is_over:
            break
        game.step(eager_action(game, rng))
