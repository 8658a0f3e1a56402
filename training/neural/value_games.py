"""Games of the neural bot on the batched engine, and the teacher's lists that teach its network.

:func:`play_list_games` plays a list of hands (each a deal seed and who sits in each seat). At every
decision of a *recorded* seat the teacher (a learned bot, ``pretrained-2p`` ...) searches the position and
lists where the turn could stop, with its value of each, and which discard it would make
(:mod:`agents.batched.neural_teacher`); the seat then plays its own move. The position of every recorded decision is kept too, with the hand's
result for its seat (the Monte-Carlo return ``neural.outcome_weight`` fits). A recorded seat is the teacher
itself (generation 0: the network learns the teacher's choices on the teacher's games) or the network
being trained (later generations: the teacher labels the positions the network's own play reaches, as in
DAgger, so the network learns what to do where its own mistakes lead). Other seats are a frozen network
or a kernel bot (``planner``, ``pretrained-2p``, ...).

Everything a hand does follows from its deal seed and its seats: the network and the kernel bots draw
nothing at random beyond the seeded generator of each seat, so a work item gives the same data on any
machine, in any process, in any order (the Ray backend relies on this).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.batched import bots
from agents.batched.neural import decide_rows
from agents.batched.neural_teacher import MAX_DISCARDS, decision_roots, teacher_lists
from skipbo_env.rules import Rules
from skipbo_env.vector import VectorGame
from skipbo_env.vector.layout import RUNNING

WIN, LOSS, DRAW = 1.0, 0.0, 0.5
BATCH = 512
"""Hands played at once by one worker."""
EXPLORE_STREAM = 0x5EED
"""Salt of the generators of the exploring moves (one per hand, from its deal seed)."""
DECISION_SEEDS = 1_000_003
"""A decision's reservoir seed: its hand's deal seed times this, plus the decisions its hand has made."""


@dataclass(frozen=True)
class Seat:
    """Who plays a seat: ``network`` (an index into the networks given, -1 for none) or ``bot`` (a kernel bot
    code); ``recorded``: whether the teacher lists its decisions."""

    network: int = -1
    bot: int = -1
    recorded: bool = False


@dataclass
class ListData:
    """The teacher's lists of the recorded seats' decisions: the stop lists' rows (int16 ``[rows, inputs]``,
    the teacher's best first in each list) with the teacher's values, the discard lists' rows with the index
    of the teacher's choice, each list's length; the position of every recorded decision (its inputs as a
    stop) with the result of the hand for the seat that decided; per hand the result of seat 0. A result is
    1 won, 0.5 drawn or cut off, 0 lost."""

    stop_inputs: np.ndarray
    stop_values: np.ndarray
    stop_lengths: np.ndarray
    discard_inputs: np.ndarray
    discard_lengths: np.ndarray
    discard_chosen: np.ndarray
    root_inputs: np.ndarray
    root_results: np.ndarray
    seat0_results: np.ndarray

    @classmethod
    def taken_from(cls, parts: list) -> ListData:
        """The parts one after another. It takes the parts' arrays, each dropped from its part once copied, so
        joining a window of generations holds their lists about once, not twice (four-player lists run to
        gigabytes); the parts are left empty."""
        joined = {}
        for name in cls.__dataclass_fields__:
            first = getattr(parts[0], name)
            out = np.empty((sum(len(getattr(part, name)) for part in parts), *first.shape[1:]), dtype=first.dtype)
            start = 0
            for part in parts:
                array = getattr(part, name)
                out[start:start + len(array)] = array
                start += len(array)
                setattr(part, name, np.empty((0, *array.shape[1:]), dtype=array.dtype))
            joined[name] = out
        return cls(**joined)

    @property
    def lists(self) -> int:
        return len(self.stop_lengths) + len(self.discard_lengths)

    def arrays(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def teacher_index(code: int) -> int:
    """The index in ``agents.batched.learned.SHIPPED`` of the learned bot of kernel code ``code`` (the teacher must
    be one)."""
    bot, variant = bots.kernel_bot_of(code)
    if bot != "learned":
        raise ValueError("the neural bot's teacher must be a learned bot (learned, learned-2p, learned-4p)")
    return variant


def play_list_games(rules: Rules, networks: list, seatings: list, seeds: np.ndarray, teacher: int, list_size: int,
                    explore: float = 0.0, threads: int = 1, positions: bool = True) -> ListData:
    """Play hand ``i`` from deal seed ``seeds[i]`` with ``seatings[i]`` (a tuple of :class:`Seat`, one per seat);
    ``networks``: the networks (``agents.neural.Network``; all read the same inputs); ``teacher``: the kernel
    code of the learned bot that lists the recorded seats' decisions (stop lists of at most ``list_size``
    stops). A recorded seat takes a uniformly random legal action with probability ``explore`` (drawn from a
    generator seeded by the hand's seed), so the lists also cover positions its own choices never reach.
    ``positions``: also keep each recorded decision's position with its hand's result for the seat (else
    none). Returns the lists, hand by hand in the order of ``seeds``."""
    shipped = teacher_index(teacher)
    seeds = np.asarray(seeds, dtype=np.int64)
    width = len(networks[0].inputs)
    engine = VectorGame(rules, batch_size=min(BATCH, len(seeds)), auto_reset=False, threads=threads)
    b = engine.batch_size
    controllers = np.full((b, rules.num_players), bots.OTHER, dtype=np.int64)
    streams = bots.new_streams(b)
    hand_of_row = np.full(b, -1, dtype=np.int64)
    decisions = np.zeros(b, dtype=np.int64)
    seating_of_row: list = [None] * b
    explorers: list = [None] * b
    lists: list[list] = [[] for _ in range(len(seeds))]
    results = np.zeros((len(seeds), rules.num_players), dtype=np.float32)
    table = _Table(engine, networks, shipped, list_size, width, explore, positions)
    next_hand = 0
    try:
        while True:
            idle = np.flatnonzero(hand_of_row < 0)[:len(seeds) - next_hand]
            if len(idle):
                hands = np.arange(next_hand, next_hand + len(idle))
                next_hand += len(idle)
                engine.deal(idle, seeds[hands])
                hand_of_row[idle] = hands
                decisions[idle] = 0
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
            if len(live):
                seats = engine.games["seat"][live]
                choosers = [seating_of_row[row][seat] for row, seat in zip(live.tolist(), seats.tolist())]
                actions = table.move(live, seats, choosers, seeds[hand_of_row[live]] * DECISION_SEEDS + decisions[live],
                                     explorers, [lists[hand] for hand in hand_of_row[live].tolist()])
                decisions[live] += 1
                engine.step_rows(live, actions)
            _collect(engine, hand_of_row, results)
    finally:
        engine.close()
    return _list_data(lists, results, width)


class _Table:
    """The moves of the seats that are not plain kernel bots, and the teacher's lists of the recorded ones."""

    def __init__(self, engine, networks, teacher, list_size, width, explore, positions) -> None:
        self.engine, self.networks, self.teacher = engine, networks, teacher
        self.list_size, self.width, self.explore, self.positions = list_size, width, explore, positions

    def move(self, rows, seats, choosers, decision_seeds, explorers, lists) -> np.ndarray:
        engine = self.engine
        masks = engine.action_mask
        observations = engine.observe(rows)  # fresh: kernel bots may have moved since the last step
        actions = np.empty(len(rows), dtype=np.int64)
        recorded = np.array([seat.recorded for seat in choosers])
        if recorded.any():
            self._listed(rows, seats, recorded, observations, decision_seeds, actions, lists)
        for index in sorted({seat.network for seat in choosers if seat.network >= 0}):
            mine = np.flatnonzero([seat.network == index for seat in choosers])
            chosen = np.empty(len(mine), dtype=np.int64)
            decide_rows(observations[mine], masks[rows[mine]], self.networks[index].arrays, chosen)
            actions[mine] = chosen
        if self.explore > 0:
            for i in np.flatnonzero(recorded).tolist():
                explorer = explorers[int(rows[i])]
                if explorer.random() < self.explore:
                    legal = np.flatnonzero(masks[rows[i]])
                    actions[i] = legal[explorer.integers(len(legal))]
        return actions

    def _listed(self, rows, seats, recorded, observations, decision_seeds, actions, lists) -> None:
        """The teacher's lists of the recorded rows (and its action, which a network seat then replaces), and the
        position each decides in (with its seat: the hand's result is its target)."""
        engine = self.engine
        at = np.flatnonzero(recorded)
        count = len(at)
        taught = np.empty(count, dtype=np.int64)
        stop_rows = np.zeros((count, self.list_size, self.width), dtype=np.int64)
        stop_values = np.zeros((count, self.list_size), dtype=np.float64)
        discard_rows = np.zeros((count, MAX_DISCARDS, self.width), dtype=np.int64)
        lengths = np.zeros((count, 3), dtype=np.int64)
        teacher_lists(engine.games, engine.action_mask, engine.cfg, rows[at], self.teacher,
                      np.ascontiguousarray(observations[at]), self.networks[0].arrays, decision_seeds[at], taught,
                      stop_rows, stop_values, discard_rows, lengths)
        actions[at] = taught
        roots = None
        if self.positions:
            roots = np.zeros((count, self.width), dtype=np.int64)
            decision_roots(np.ascontiguousarray(observations[at]), self.networks[0].arrays, roots)
            roots = checked_int16(roots)
        for k, i in enumerate(at.tolist()):
            if roots is not None:
                lists[i].append(("root", roots[k:k + 1], int(seats[i])))
            stops, discards, chosen = lengths[k].tolist()
            if stops > 1:
                lists[i].append(("stop", checked_int16(stop_rows[k, :stops]),
                                 stop_values[k, :stops].astype(np.float32)))
            if discards > 1:
                lists[i].append(("discard", checked_int16(discard_rows[k, :discards]), chosen))


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


def _list_data(lists, results, width) -> ListData:
    stops = [entry for hand in lists for entry in hand if entry[0] == "stop"]
    discards = [entry for hand in lists for entry in hand if entry[0] == "discard"]
    roots = [("root", entry[1], results[hand, entry[2]]) for hand, entries in enumerate(lists)
             for entry in entries if entry[0] == "root"]

    def rows(entries):
        return np.concatenate([e[1] for e in entries]) if entries else np.zeros((0, width), dtype=np.int16)

    return ListData(rows(stops), np.concatenate([e[2] for e in stops]) if stops else np.zeros(0, np.float32),
                    np.array([len(e[1]) for e in stops], dtype=np.int16), rows(discards),
                    np.array([len(e[1]) for e in discards], dtype=np.int16),
                    np.array([e[2] for e in discards], dtype=np.int16), rows(roots),
                    np.array([e[2] for e in roots], dtype=np.float32), results[:, 0].copy())
