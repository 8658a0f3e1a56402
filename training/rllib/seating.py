"""Who plays each seat of each hand: RLlib's ``policy_mapping_fn`` for the Skip-Bo self-play pool.

Module ids: :data:`LEARNER` (the one trained policy, shared by every seat it plays),
``snapshot_0`` ... ``snapshot_{k-1}`` (frozen copies of the learner, ``opponents.max_snapshots``
slots filled in turn, the oldest overwritten) and ``bot_0``, ``bot_1``, ... (one fixed module
per bot spec of ``opponents.mix``, in the mix's order).

Per hand, one seat is the learner's (a random seat, or seat 0 with ``env.random_seat: false``)
and every other seat draws an opponent *kind* with the weights of ``opponents.mix``, as the
``skipbo train`` pool does (:class:`training.sb3.selfplay.OpponentPool`): ``"snapshots"`` (one of
the kept snapshots, uniformly; another kind while none is kept), a bot spec, or ``"self"``,
the learner itself (its moves from that seat train the shared policy too).

RLlib asks the mapping once per agent of an episode, so the whole seating of a hand is drawn
at the first question and kept until :meth:`SeatDrawer.pop` (called when the hand ends, for the
metrics). Seatings come in the order hands start, from one generator per env runner seeded by
the run seed and the runner's index (:meth:`SeatDrawer.start_stream`), so a seeded run seats
the same hands the same way again (RLlib's episode ids are random, so they seed nothing).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from training.schema import SELF, SNAPSHOTS

LEARNER = "learner"
MAX_PENDING = 10_000


def snapshot_module(slot: int) -> str:
    return f"snapshot_{slot}"


def bot_modules(mix: Mapping[str, float]) -> dict[str, str]:
    """Bot spec -> module id, for every bot kind of the mix (weight 0 included: the ids stay stable)."""
    bots = [kind for kind in mix if kind not in (SNAPSHOTS, SELF)]
    return {kind: f"bot_{index}" for index, kind in enumerate(bots)}


def seat_of(agent_id: str) -> int:
    return int(agent_id.rpartition("_")[2])


class SeatDrawer:
    """A picklable ``policy_mapping_fn(agent_id, episode)``; each env runner holds its own copy.

    ``kept_snapshots`` (how many snapshot slots hold a snapshot) is updated on every env runner
    by the trainer when a snapshot joins; :meth:`start_stream` is called by every env runner
    when it creates its environments (:class:`training.rllib.metrics.SelfPlayMetrics`).
    """

    def __init__(self, mix: Mapping[str, float], num_players: int, random_seat: bool, seed: int) -> None:
        self.kinds = [kind for kind, weight in mix.items() if weight > 0]
        weights = np.array([mix[kind] for kind in self.kinds], dtype=np.float64)
        self.probabilities = weights / weights.sum()
        self.bots = bot_modules(mix)
        self.num_players = num_players
        self.random_seat = random_seat
        self.seed = seed
        self.kept_snapshots = 0
        self._seatings: dict[str, list[tuple[str, str]]] = {}
        self.start_stream(0)

    def start_stream(self, env_runner_index: int) -> None:
        """Draw the coming seatings from the generator of env runner ``env_runner_index`` (0: the driver's)."""
        self._rng = np.random.default_rng([self.seed, env_runner_index])

    def __call__(self, agent_id: str, episode, **kwargs) -> str:
        return self.seating(episode.id_)[seat_of(agent_id)][1]

    def seating(self, episode_id: str) -> list[tuple[str, str]]:
        """``(kind, module id)`` for every seat of the hand ``episode_id``; the learner's kind is ``"learner"``."""
        if episode_id not in self._seatings:
            if len(self._seatings) >= MAX_PENDING:  # episodes that never reached their end
                self._seatings.pop(next(iter(self._seatings)))
            self._seatings[episode_id] = self._draw()
        return self._seatings[episode_id]

    def pop(self, episode_id: str) -> list[tuple[str, str]]:
        """The seating of a finished hand, forgotten afterwards."""
        seating = self.seating(episode_id)
        del self._seatings[episode_id]
        return seating

    def _draw(self) -> list[tuple[str, str]]:
        rng = self._rng
        learner_seat = int(rng.integers(self.num_players)) if self.random_seat else 0
        probabilities = self.probabilities
        if not self.kept_snapshots and SNAPSHOTS in self.kinds:
            probabilities = np.where(np.array(self.kinds) == SNAPSHOTS, 0.0, probabilities)
            if probabilities.sum() == 0:
                raise ValueError("the opponent mix wants snapshots only, and the pool holds none yet")
            probabilities = probabilities / probabilities.sum()
        seating = []
        for seat in range(self.num_players):
            if seat == learner_seat:
                seating.append((LEARNER, LEARNER))
                continue
            kind = self.kinds[int(rng.choice(len(self.kinds), p=probabilities))]
            if kind == SELF:
                seating.append((SELF, LEARNER))
            elif kind == SNAPSHOTS:
                seating.append((SNAPSHOTS, snapshot_module(int(rng.integers(self.kept_snapshots)))))
            else:
                seating.append((kind, self.bots[kind]))
        return seating

