"""Self-play on the batched engine: ``env.vec_env: vector`` (imports stable-baselines3).

:class:`VectorSelfPlayEnv` is a :class:`skipbo_env.envs.vec_env.SkipBoVecEnv` whose other
seats follow the opponent pool exactly as the AEC path does (``training.sb3.selfplay``): at every
new hand each opponent seat of that game draws its player from the ``opponents.mix`` weights,
and for ``"snapshots"`` one of the kept snapshots uniformly. The players are batch policies
(``random``/``greedy``/``planner`` inside the kernels; each snapshot one batched forward pass, sampling;
any other ``agents.load_policy`` spec asked game by game), so the draws cost nothing per step.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from agents.loading import load_policy
from agents.network import NetworkPolicy
from skipbo_env.rules import Rules
from agents.batched.bots import kernel_bot_code
from agents.batched.policies import LogitsPolicy, PerObservationPolicy, batch_policy
from agents.batched.seating import BatchOpponents
from skipbo_env.vector.layout import CALLER
from skipbo_env.envs.vec_env import SkipBoVecEnv
from training.schema import SNAPSHOTS
from training.sb3.selfplay import OpponentPool


class VectorSelfPlayEnv(SkipBoVecEnv):
    """``num_envs`` hands on the batched engine, the learner's opponents drawn from ``pool`` per hand.

    Like ``training.sb3.selfplay.SelfPlayEnv``: ``add_snapshot(weights, step)`` (reached through
    ``env_method``) adds to the pool, and a finished hand's ``info`` gets ``selfplay_opponents``
    and ``selfplay_result``.
    """

    def __init__(self, rules: Rules, num_envs: int, pool: OpponentPool, *, seed: int,
                 learner_seat: int | None = None, shaping: str = "none", gamma: float = 0.99) -> None:
        # one player per bot kind of the pool (snapshots join as they are drawn), seated hand by
        # hand in _seat_players
        bots = [kind for kind in pool.kinds if kind != SNAPSHOTS]
        policies = [batch_policy(kind if kernel_bot_code(kind) is not None else load_policy(kind, seed=seed), seed=seed)
                    for kind in bots]
        super().__init__(rules, num_envs, BatchOpponents(policies), seed=seed, learner_seat=learner_seat,
                         shaping=shaping, gamma=gamma)
        self.pool = pool
        self._rng = np.random.default_rng(seed)
        self._bot_index = {kind: index for index, kind in enumerate(bots)}
        self._snapshot_index: dict[int, int] = {}  # pool step -> index of its policy in the seating
        self._kinds = [""] * num_envs

    def add_snapshot(self, weights: Mapping[str, np.ndarray], step: int) -> None:
        self.pool.add_snapshot(weights, step)

    def per_game_players(self) -> list[str]:
        """The opponent kinds with no batched interface, asked game by game (a user's own policy class)."""
        return [kind for kind, index in self._bot_index.items()
                if isinstance(self.seating.policies[index], PerObservationPolicy)]

    def _opponent_players(self, rows: np.ndarray, learner: np.ndarray) -> np.ndarray:
        """The pool's draw for every seat but the learner's in each new hand."""
        n = self.rules.num_players
        players = np.empty((len(rows), n), dtype=np.int64)
        for k, row in enumerate(rows.tolist()):
            kinds = []
            for seat in range(n):
                if seat == learner[k]:
                    players[k, seat] = CALLER
                    continue
                kind, step = self.pool.draw(self._rng)
                players[k, seat] = self._bot_index[kind] if step is None else self._snapshot_policy(step, rows)
                kinds.append(kind)
            self._kinds[row] = "+".join(sorted(kinds))
        return players

    def _snapshot_policy(self, step: int, dealing: np.ndarray) -> int:
        """The seating index of snapshot ``step``, reusing the slot of a snapshot the pool dropped."""
        if step in self._snapshot_index:
            return self._snapshot_index[step]
        network = NetworkPolicy(self.pool.snapshot_weights(step), self.pool.hidden, self.pool.activation,
                                deterministic=False)
        policy = LogitsPolicy(network, seed=int(self._rng.integers(2**31)))
        kept = set(self.pool.snapshot_steps)
        for old in [s for s in self._snapshot_index if s not in kept]:
            if not self._in_use(self._snapshot_index[old], dealing):
                index = self._snapshot_index.pop(old)
                self.seating.policies[index] = policy
                self._snapshot_index[step] = index
                return index
        self.seating.policies.append(policy)
        self._snapshot_index[step] = len(self.seating.policies) - 1
        return self._snapshot_index[step]

    def _in_use(self, index: int, dealing: np.ndarray) -> bool:
        """Whether a hand in progress (not one being dealt now) has ``index`` at a seat."""
        playing = np.ones(self.num_envs, dtype=bool)
        playing[dealing] = False
        return bool((self.seating.players[playing, :self.rules.num_players] == index).any())

    def _report(self, rows, rewards, dones, infos) -> None:
        super()._report(rows, rewards, dones, infos)
        for row in rows.tolist():
            infos[row]["selfplay_opponents"] = self._kinds[row]
            infos[row]["selfplay_result"] = float(rewards[row])
