"""Self-play games of the neural bot on the batched engine, and what they teach its network.

:func:`play_value_games` plays a list of hands (each a deal seed and who sits in each seat) and returns,
for every discard a recorded seat made, the network inputs of its *stop* (the position with the discard
to make) and of its *turn end* (after the discard), each labelled with how the hand ended for that seat
(1 won, 0 lost, 0.5 drawn or cut off): Monte-Carlo returns, as in TD(1) or DouZero. A seat is played by
the network being trained (``"self"``, recorded), by a frozen network (recorded or not), or by a kernel
bot (``planner``, ``pretrained-2p``, ...; recorded when it is the teacher of the first generation).

Everything a hand does follows from its deal seed and its seats: the network and the kernel bots draw
nothing at random beyond the seeded generator of each seat, so a work item gives the same data on any
machine, in any process, in any order (the Ray backend relies on this).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.batched import bots
from agents.batched.neural import RECORDED, decide_rows, record_rows
from skipbo_env.rules import Rules
from skipbo_env.vector import VectorGame
from skipbo_env.vector.layout import RUNNING

WIN, LOSS, DRAW = 1.0, 0.0, 0.5
BATCH = 512
"""Hands played at once by one worker."""


@dataclass(frozen=True)
class Seat:
    """Who plays a seat: ``network`` (an index into the networks given, -1 for none) or ``bot`` (a kernel bot
    code); ``recorded``: whether its discards become training data."""

    network: int = -1
    bot: int = -1
    recorded: bool = False


@dataclass
class ValueData:
    """Inputs (int16 ``[rows, inputs]``) and targets (float32 ``[rows]``) of stops and turn ends, and per hand
    the result of seat 0 (``1``, ``0.5`` or ``0``)."""

    inputs: np.ndarray
    targets: np.ndarray
    seat0_results: np.ndarray

    @classmethod
    def concatenate(cls, parts: list) -> ValueData:
        return cls(np.concatenate([p.inputs for p in parts]), np.concatenate([p.targets for p in parts]),
                   np.concatenate([p.seat0_results for p in parts]))


def play_value_games(rules: Rules, networks: list, seatings: list, seeds: np.ndarray, input_count: int,
                     explore: float = 0.0, threads: int = 1) -> ValueData:
    """Play hand ``i`` from deal seed ``seeds[i]`` with ``seatings[i]`` (a tuple of :class:`Seat`, one per seat);
    ``networks``: the networks' kernel arrays (``agents.neural.Network.arrays``); ``input_count``: their
    number of inputs (all networks read the same inputs). A recorded seat takes a uniformly random legal
    action with probability ``explore`` (drawn from a generator seeded by the hand's seed), so the data also
    hold positions its own choices never reach (stopping before a stockpile play, other discards). Returns
    the data of the recorded seats, hand by hand in the order of ``seeds``."""
    seeds = np.asarray(seeds, dtype=np.int64)
    n = rules.num_players
    engine = VectorGame(rules, batch_size=min(BATCH, len(seeds)), auto_reset=False, threads=threads)
    b = engine.batch_size
    controllers = np.full((b, n), bots.OTHER, dtype=np.int64)
    streams = bots.new_streams(b)
    hand_of_row = np.full(b, -1, dtype=np.int64)
    seating_of_row: list = [None] * b
    explorers: list = [None] * b
    recorded_inputs: list[list] = [[] for _ in range(len(seeds))]
    recorded_seats: list[list] = [[] for _ in range(len(seeds))]
    results = np.zeros((len(seeds), n), dtype=np.float32)
    next_hand = 0
    try:
        while True:
            idle = np.flatnonzero(hand_of_row < 0)[:len(seeds) - next_hand]
            if len(idle):
                hands = np.arange(next_hand, next_hand + len(idle))
                next_hand += len(idle)
                engine.deal(idle, seeds[hands])
                hand_of_row[idle] = hands
                for row, hand in zip(idle.tolist(), hands.tolist()):
                    seating_of_row[row] = seatings[hand]
                    controllers[row] = [seat.bot if seat.network < 0 and not seat.recorded else bots.OTHER
                                        for seat in seatings[hand]]
                    explorers[row] = np.random.default_rng([int(seeds[hand]), EXPLORE_STREAM])
                bots.seed_rows(streams, idle, bots.streams_for(seeds[hands]))
            live = np.flatnonzero(hand_of_row >= 0)
            if not len(live):
                break
            steps = np.zeros(len(live), dtype=np.int64)
            bots.play_bots(engine.games, engine.action_mask, engine.cfg, controllers, streams, live, steps)
            live = live[engine.games["outcome"][live] == RUNNING]
            _move_recorded(engine, live, seating_of_row, hand_of_row, networks, input_count, streams, explorers,
                           explore, recorded_inputs, recorded_seats)
            _collect(engine, hand_of_row, results)
    finally:
        engine.close()
    return _labelled(recorded_inputs, recorded_seats, results, input_count)


EXPLORE_STREAM = 0x5EED
"""Salt of the generators of the exploring moves (one per hand, from its deal seed)."""


def _move_recorded(engine, live, seating_of_row, hand_of_row, networks, input_count, streams, explorers, explore,
                   recorded_inputs, recorded_seats) -> None:
    """One action in each live game whose seat to act is not a plain kernel bot (a network, or a recorded
    teacher), recording every discard of a recorded seat."""
    if not len(live):
        return
    seats = engine.games["seat"][live]
    keys = np.array([_player_key(seating_of_row[row][seat]) for row, seat in zip(live.tolist(), seats.tolist())])
    for key in np.unique(keys).tolist():
        rows = live[keys == key]
        kind, index = key // 1_000_000, key % 1_000_000
        observations = engine.observe(rows)  # fresh: kernel bots may have moved since the last step
        masks = engine.action_mask[rows]
        actions = np.empty(len(rows), dtype=np.int64)
        if kind == 1:  # a network
            decide_rows(observations, masks, networks[index], actions)
        else:  # a recorded kernel bot (the teacher)
            bots.bot_actions(engine.games, engine.action_mask, engine.cfg, rows, streams, index, actions)
        recording = np.array([seating_of_row[row][seat].recorded
                              for row, seat in zip(rows.tolist(), engine.games["seat"][rows].tolist())])
        if explore > 0:
            for i in np.flatnonzero(recording).tolist():
                explorer = explorers[rows[i]]
                if explorer.random() < explore:
                    legal = np.flatnonzero(masks[i])
                    actions[i] = legal[explorer.integers(len(legal))]
        positions = np.zeros((len(rows), RECORDED, input_count), dtype=np.int64)
        recorded = np.zeros(len(rows), dtype=np.bool_)
        record_rows(observations, masks, actions, networks[0], positions, recorded)
        for i in np.flatnonzero(recorded & recording).tolist():
            row = int(rows[i])
            seat = int(engine.games["seat"][row])
            hand = int(hand_of_row[row])
            recorded_inputs[hand].append(checked_int16(positions[i]))
            recorded_seats[hand].extend([seat] * RECORDED)
        engine.step_rows(rows, actions)


def _player_key(seat: Seat) -> int:
    """A number per player of a live seat: 1_000_000 + network index, or 2_000_000 + a recorded bot's code."""
    return 1_000_000 + seat.network if seat.network >= 0 else 2_000_000 + seat.bot


def _collect(engine, hand_of_row, results) -> None:
    """Each hand that ended: the result of every seat into ``results``, its row freed."""
    over = np.flatnonzero((hand_of_row >= 0) & (engine.games["outcome"] != RUNNING))
    if not len(over):
        return
    finished = engine.finished()
    at = np.searchsorted(finished.rows, over)
    for row, i in zip(over.tolist(), at.tolist()):
        winners = finished.winners[i]
        results[hand_of_row[row]] = np.where(winners, WIN, LOSS) if winners.any() else DRAW
    hand_of_row[over] = -1


def checked_int16(positions: np.ndarray) -> np.ndarray:
    """The positions as int16 (the data's type: a position's integer inputs are at most a few thousand)."""
    if np.abs(positions).max() > np.iinfo(np.int16).max:
        raise ValueError("a recorded position's input exceeds int16: the rules' decks or stockpiles are too large "
                         "for backend: neural's data")
    return positions.astype(np.int16)


def _labelled(recorded_inputs, recorded_seats, results, input_count) -> ValueData:
    inputs, targets = [], []
    for hand, (rows, seats) in enumerate(zip(recorded_inputs, recorded_seats)):
        inputs.extend(rows)
        targets.extend(results[hand, seats].tolist())
    array = np.concatenate(inputs) if inputs else np.zeros((0, input_count), dtype=np.int16)
    return ValueData(array, np.array(targets, dtype=np.float32), results[:, 0].copy())
