"""The teacher's lists (``agents.batched.neural_teacher``, ``training.neural.value_games``): the teacher plays its own
moves while it lists them, each stop list starts with its best stop, the rows are the neural bot's inputs of
stops and turn ends, and the same seeds give the same lists however the hands are split."""

from __future__ import annotations

import numpy as np
import pytest

from agents.batched import bots
from agents.batched.neural import PENDING, root_inputs
from agents.batched.neural_teacher import MAX_DISCARDS, decision_roots, teacher_lists
from skipbo_env.rules import Rules
from skipbo_env.vector import VectorGame
from training.neural.value_games import ListData, Seat, play_list_games, teacher_index
from training.neural.value_net import zero_network

RULES = Rules(num_players=2, stock_size=8)
TEACHER = bots.kernel_bot_code("pretrained-2p")
NETWORK = zero_network(2, (4, 2))
PENDING_INPUT = int(np.flatnonzero(NETWORK.inputs == PENDING)[0])


@pytest.fixture(scope="module")
def lists() -> ListData:
    seats = (Seat(bot=TEACHER, recorded=True),) * 2
    return play_list_games(RULES, [NETWORK], [seats] * 6, np.arange(100, 106), TEACHER, 8, explore=0.05)


def test_the_teacher_plays_its_own_moves_while_it_lists_them():
    engine = VectorGame(RULES, batch_size=4, auto_reset=False)
    engine.deal(np.arange(4), np.arange(4) + 7)
    streams = bots.new_streams(4)
    width = len(NETWORK.inputs)
    try:
        for _ in range(150):
            rows = np.flatnonzero(engine.games["outcome"] == 0)
            if not len(rows):
                break
            expected = np.empty(len(rows), dtype=np.int64)
            bots.bot_actions(engine.games, engine.action_mask, engine.cfg, rows, streams, TEACHER, expected)
            listed = np.empty(len(rows), dtype=np.int64)
            teacher_lists(engine.games, engine.action_mask, engine.cfg, rows, teacher_index(TEACHER),
                          engine.observe(rows), NETWORK.arrays, np.arange(len(rows)), listed,
                          np.zeros((len(rows), 8, width), np.int64), np.zeros((len(rows), 8)),
                          np.zeros((len(rows), MAX_DISCARDS, width), np.int64), np.zeros((len(rows), 3), np.int64))
            assert listed.tolist() == expected.tolist()
            engine.step_rows(rows, listed)
    finally:
        engine.close()


def test_each_stop_list_starts_with_the_teachers_best_stop_and_holds_at_most_list_size(lists):
    starts = np.cumsum(lists.stop_lengths) - lists.stop_lengths
    assert len(starts) > 50 and lists.stop_lengths.max() <= 8 and lists.stop_lengths.min() >= 2
    for start, length in zip(starts, lists.stop_lengths):
        values = lists.stop_values[start:start + length]
        assert values[0] == values.max()
        rows = lists.stop_inputs[start:start + length]
        assert len({row.tobytes() for row in rows}) == length  # each stop once


def test_stops_wait_for_their_discard_and_turn_ends_do_not(lists):
    assert (lists.stop_inputs[:, PENDING_INPUT] == 1).mean() > 0.95  # 0 only where the turn ends without one
    assert (lists.discard_inputs[:, PENDING_INPUT] == 0).all()
    assert ((lists.discard_chosen >= 0) & (lists.discard_chosen < lists.discard_lengths)).all()


def test_the_same_seeds_give_the_same_lists_however_the_hands_are_split(lists):
    seats = (Seat(bot=TEACHER, recorded=True),) * 2
    halves = [play_list_games(RULES, [NETWORK], [seats] * 3, seeds, TEACHER, 8, explore=0.05)
              for seeds in (np.arange(100, 103), np.arange(103, 106))]
    joined = ListData.taken_from(halves)
    for name, array in lists.arrays().items():
        assert np.array_equal(array, getattr(joined, name)), name
        assert getattr(joined, name).dtype == array.dtype, name
    assert all(half.lists == 0 and half.seat0_results.size == 0 for half in halves)  # their arrays were taken


def test_a_network_seat_is_listed_by_the_teacher_and_plays_its_own_moves():
    greedy = Seat(bot=bots.kernel_bot_code("greedy"))
    deals = np.arange(12)

    def play(seat):
        return play_list_games(RULES, [NETWORK], [(seat, greedy)] * len(deals), deals, TEACHER, 8)

    listed, unlisted = play(Seat(network=0, recorded=True)), play(Seat(network=0))
    taught = play(Seat(bot=TEACHER, recorded=True))
    assert listed.lists > 20 and unlisted.lists == 0
    # the same hands as when nobody lists them: the network's moves, not the teacher's ...
    assert listed.seat0_results.tolist() == unlisted.seat0_results.tolist()
    # ... which reach other positions than the teacher's own moves do
    assert listed.stop_inputs.shape != taught.stop_inputs.shape or not np.array_equal(listed.stop_inputs,
                                                                                      taught.stop_inputs)


def test_a_decisions_position_is_its_observation_as_a_stop():
    engine = VectorGame(RULES, batch_size=3, auto_reset=False)
    engine.deal(np.arange(3), np.arange(3) + 40)
    try:
        observations = engine.observe(np.arange(3))
        roots = np.zeros((3, len(NETWORK.inputs)), dtype=np.int64)
        decision_roots(observations, NETWORK.arrays, roots)
    finally:
        engine.close()
    for observation, root in zip(observations, roots):
        expected = np.zeros(len(NETWORK.inputs), dtype=np.int64)
        root_inputs(observation, NETWORK.arrays[6], expected, np.zeros(14, dtype=np.int64))
        assert root.tolist() == expected.tolist() and root[PENDING_INPUT] == 1


def test_every_recorded_decision_keeps_its_position_with_its_seats_result():
    """A recorded network seat against greedy, hand by hand: one position per decision the seat made (at least
    one per list it was given), each with that hand's result for the seat; greedy's decisions none."""
    greedy = Seat(bot=bots.kernel_bot_code("greedy"))
    for deal in range(6):
        for seating, seat in (((Seat(network=0, recorded=True), greedy), 0), ((greedy, Seat(network=0, recorded=True)), 1)):
            data = play_list_games(RULES, [NETWORK], [seating], np.array([deal]), TEACHER, 8)
            result = data.seat0_results[0] if seat == 0 else 1.0 - data.seat0_results[0]
            assert len(data.root_results) >= max(len(data.stop_lengths), len(data.discard_lengths)) > 0
            assert data.root_inputs.shape == (len(data.root_results), len(NETWORK.inputs))
            assert (data.root_results == result).all(), (deal, seat)
            assert (data.root_inputs[:, PENDING_INPUT] == 1).all()


def test_only_a_learned_bot_can_teach():
    with pytest.raises(ValueError, match="must be a learned bot"):
        teacher_index(bots.kernel_bot_code("planner"))
