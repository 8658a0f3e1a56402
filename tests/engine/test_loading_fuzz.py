"""Fuzzing the loaders: a mutated state or record loads correctly or is refused with ``ValueError``.

RULES.md, "State format": every refusal is a ``ValueError``, whatever the input's types; no other
exception escapes loading. The mutations start from real states of several variants (mid-game
and finished, with and without the saved generator) and change types, ranges, nesting, counts
and keys. ``SKIPBO_FUZZ_EXAMPLES`` raises the number of cases for a longer run by hand.
"""

from __future__ import annotations

import copy
import functools
from collections import Counter
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skipbo_env import Game, Rules
from skipbo_env.validation import MAX_DEPTH, excerpt
from skipbo_env.cards import deck_counts
from tests.positions import all_cards

EXAMPLES = int(os.environ.get("SKIPBO_FUZZ_EXAMPLES", "200"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# (settings, random steps to play: None plays the hand to its end, keep the saved generator)
VARIANTS = [
    ({"num_players": 2}, 60, True),
    ({"num_players": 3}, 40, False),
    ({"num_players": 6}, 80, True),
    ({"num_players": 4, "partners": True}, 70, True),
    ({"num_players": 6, "partners": True, "team_stock": "shared"}, 50, False),
    ({"num_players": 2, "decks": 2, "stock_size": 40}, 50, True),
    ({"num_players": 2, "stock_size": 3}, None, True),
    ({"num_players": 4, "partners": True, "team_win": "either", "stock_size": 3}, None, False),
    ({"num_players": 3, "max_turns": 6}, None, True),
]
HUGE_AND_NEGATIVE = [2**31, 2**64, 2**128, 2**200, 10**80, -1, -(2**70)]
NOT_SAFE_TO_ENLARGE = {("rules", "decks")}  # a record deals its deck: decks=2**64 would build it (no cap here yet)


def played(settings_: dict, steps: int | None, seed: int) -> Game:
    rng = np.random.default_rng(seed)
    game = Game.new(Rules(**settings_), seed=seed)
    for _ in range(steps if steps is not None else 20_000):
        if game.is_over:
            break
        legal = game.legal_actions()
        game.step(legal[int(rng.integers(len(legal)))])
    assert steps is not None or game.is_over
    return game


@functools.lru_cache(maxsize=None)
def base_states() -> tuple[dict, ...]:
    states = []
    for index, (settings_, steps, keep_rng) in enumerate(VARIANTS):
        state = played(settings_, steps, seed=index).to_dict()
        if not keep_rng:
            del state["rng"]
        states.append(state)
    return tuple(states)


@functools.lru_cache(maxsize=None)
def base_records() -> tuple[dict, ...]:
    records = [played(settings_, 30, seed=index).record() for index, (settings_, _, _) in enumerate(VARIANTS[:6])]
    loaded = Game.from_dict(base_states()[1])
    for action in loaded.legal_actions()[:1]:
        loaded.step(action)
    records.append(loaded.record())
    return tuple(records)


def deeply_nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def node_paths(root) -> list[tuple]:
    """The path of every value in ``root`` (keys and indexes), without descending too deep."""
    paths, pending = [], [((), root)]
    while pending:
        path, value = pending.pop()
        paths.append(path)
        if len(path) >= MAX_DEPTH:
            continue
        if isinstance(value, dict):
            pending.extend((path + (key,), child) for key, child in value.items())
        elif isinstance(value, list):
            pending.extend((path + (index,), child) for index, child in enumerate(value))
    return sorted(paths, key=repr)


def value_at(root, path: tuple):
    for key in path:
        root = root[key]
    return root


def replacement(data, old):
    """A value of another type or range for ``old``."""
    kind = data.draw(st.sampled_from(["float", "str", "bool", "none", "list", "dict", "huge", "small",
                                      "deep", "word"]))
    if kind == "float":
        return float(old) if isinstance(old, int) and abs(old) < 2**60 else data.draw(st.floats())
    if kind == "str":
        return old if isinstance(old, str) else excerpt(old)
    if kind == "bool":
        return data.draw(st.booleans())
    if kind == "none":
        return None
    if kind == "list":
        return [old]
    if kind == "dict":
        return {"value": old}
    if kind == "huge":
        return data.draw(st.sampled_from(HUGE_AND_NEGATIVE))
    if kind == "small":
        return data.draw(st.integers(-3, 200))
    if kind == "deep":
        return deeply_nested(data.draw(st.sampled_from([MAX_DEPTH, 200, 50_000])))
    return data.draw(st.sampled_from(["play", "draw", "win", "truncated", "PCG64", "", "seats"]))


def move_a_card(data, root) -> None:
    """Take a card off one pile (or hand, or stock) and put it on another: the deck stays whole."""
    piles = [path for path in node_paths(root) if _is_card_list(value_at(root, path))]
    sources = [path for path in piles if value_at(root, path)]
    if not sources:
        return
    card = value_at(root, data.draw(st.sampled_from(sources))).pop()
    value_at(root, data.draw(st.sampled_from(piles))).append(card)


def _is_card_list(value) -> bool:
    return isinstance(value, list) and all(type(card) is int for card in value)


def mutate(data, root, protected=frozenset()):
    """``root`` with one to three mutations; the paths in ``protected`` keep their ranges.

    Half the mutations aim at the shallow fields (counters, piles, settings, generator), which
    the card leaves would otherwise outnumber.
    """
    for _ in range(data.draw(st.integers(1, 3))):
        paths = node_paths(root)
        if data.draw(st.booleans()):
            paths = [path for path in paths if len(path) <= 3] or paths
        path = data.draw(st.sampled_from(paths))
        old = value_at(root, path)
        action = data.draw(st.sampled_from(["replace", "grow", "shrink", "add_key", "delete_key", "move_card"]))
        if action == "move_card":
            move_a_card(data, root)
        elif action == "grow" and isinstance(old, list):
            extra = data.draw(st.one_of(st.integers(1, 13), st.just([]), st.sampled_from(old or [0])))
            old.insert(data.draw(st.integers(0, len(old))), extra)
        elif action == "shrink" and isinstance(old, list) and old:
            del old[data.draw(st.integers(0, len(old) - 1))]
        elif action == "add_key" and isinstance(old, dict):
            key = data.draw(st.sampled_from(["outcome", "winners", "rng", "format", "extra", "start", "rules"]))
            old[key] = replacement(data, old.get(key, 0))
        elif action == "delete_key" and isinstance(old, dict) and old:
            del old[data.draw(st.sampled_from(sorted(old)))]
        elif path:
            new = replacement(data, old)
            if path in protected and isinstance(new, int) and not isinstance(new, bool) and new > 200:
                continue
            value_at(root, path[:-1])[path[-1]] = new
        else:
            root = replacement(data, root)
    return root


def assert_every_card_in_exactly_one_place(game: Game) -> None:
    """The loaded game holds the whole deck (its saved state lists every card exactly once)."""
    expected = deck_counts(game.rules.decks)
    assert Counter(all_cards(game.to_dict())) == Counter({value: expected[value] for value in range(1, 14)})
    assert sum(game.hand_sizes) == sum(sum(counts) for counts in game.hand_counts)
    assert all(0 <= size <= 5 for size in game.hand_sizes)


def assert_refused_in_one_short_line(error: ValueError) -> None:
    message = str(error)
    assert message and "\n" not in message and len(message) < 300, message


@FUZZ
@given(st.data())
def test_a_mutated_state_loads_with_every_card_in_one_place_or_is_refused_with_value_error(data):
    state = copy.deepcopy(data.draw(st.sampled_from(base_states())))
    state = mutate(data, state)
    try:
        game = Game.from_dict(state)
    except ValueError as error:
        assert_refused_in_one_short_line(error)
        return
    assert_every_card_in_exactly_one_place(game)
    saved = game.to_dict()
    assert Game.from_dict(copy.deepcopy(saved)).to_dict() == saved
    assert all(0 <= action < 145 for action in game.legal_actions())


@FUZZ
@given(st.data())
def test_a_mutated_record_replays_or_is_refused_with_value_error(data):
    record = copy.deepcopy(data.draw(st.sampled_from(base_records())))
    record = mutate(data, record, protected=NOT_SAFE_TO_ENLARGE)
    try:
        game = Game.replay(record)
    except ValueError as error:
        assert_refused_in_one_short_line(error)
        return
    assert_every_card_in_exactly_one_place(game)
    assert Game.replay(game.record()).to_dict() == game.to_dict()
