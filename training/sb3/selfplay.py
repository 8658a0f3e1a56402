"""Self-play opponents: a pool of frozen snapshots of the learner plus bots, mixed by weight.

At the start of every hand each opponent seat draws who plays it: an opponent *kind* with the
probability its weight in ``opponents.mix`` gives (``"snapshots"`` or any ``agents.load_policy``
spec such as ``"greedy"``), and for ``"snapshots"`` one of the kept snapshots uniformly. The
trainer adds a snapshot of the learner every ``opponents.snapshot_every`` steps; past
``max_snapshots`` the oldest leaves. Snapshots play by sampling from their policy, so the
learner meets varied play rather than one fixed line.
"""

from __future__ import annotations

from typing import Callable, Mapping

import gymnasium
import numpy as np

from agents.network import NetworkPolicy
from agents.policy import reset_policy
from training.schema import SNAPSHOTS


class OpponentPool:
    """The snapshots and the mix, shared by the :class:`PoolOpponent` seats of one environment.

    ``network`` is ``(hidden, activation)`` of the snapshots' policy network.
    """

    def __init__(self, mix: Mapping[str, float], max_snapshots: int, network: tuple[list[int], str]) -> None:
        kinds = [kind for kind, weight in mix.items() if weight > 0]
        weights = np.array([mix[kind] for kind in kinds], dtype=np.float64)
        if not kinds:
            raise ValueError("the opponent mix gives no kind a weight > 0")
        self.kinds = kinds
        self.probabilities = weights / weights.sum()
        self.max_snapshots = max_snapshots
        self.hidden, self.activation = network
        self.snapshots: list[tuple[int, dict]] = []  # (learner step, weights), oldest first

    def add_snapshot(self, weights: Mapping[str, np.ndarray], step: int) -> None:
        """A frozen copy of the learner at ``step`` joins; the oldest leaves past ``max_snapshots``."""
        frozen = {name: np.array(value, dtype=np.float32, copy=True) for name, value in weights.items()}
        self.snapshots.append((int(step), frozen))
        del self.snapshots[:-self.max_snapshots]

    @property
    def snapshot_steps(self) -> list[int]:
        return [step for step, _ in self.snapshots]

    def draw(self, rng: np.random.Generator) -> tuple[str, int | None]:
        """``(kind, snapshot step or None)`` for one seat of one hand.

        When the mix wants a snapshot and none is kept yet, another kind is drawn instead.
        """
        probabilities = self.probabilities
        if not self.snapshots and SNAPSHOTS in self.kinds:
            probabilities = np.where(np.array(self.kinds) == SNAPSHOTS, 0.0, probabilities)
            if probabilities.sum() == 0:
                raise ValueError("the opponent mix wants snapshots only, and the pool holds none yet")
            probabilities = probabilities / probabilities.sum()
        kind = self.kinds[int(rng.choice(len(self.kinds), p=probabilities))]
        if kind != SNAPSHOTS:
            return kind, None
        return kind, self.snapshots[int(rng.integers(len(self.snapshots)))][0]

    def snapshot_weights(self, step: int) -> dict:
        for snapshot_step, weights in self.snapshots:
            if snapshot_step == step:
                return weights
        raise KeyError(f"no snapshot of step {step} in the pool (kept: {self.snapshot_steps})")


class PoolOpponent:
    """One opponent seat: at every ``reset`` it draws from the pool who plays the next hand.

    ``load_bot(spec, seed)`` builds bots (``agents.load_policy``); each seat keeps its own bot
    instances and snapshot policies, so seats never share state.
    """

    def __init__(self, pool: OpponentPool, seed: int, load_bot: Callable) -> None:
        self.pool = pool
        self._rng = np.random.default_rng(seed)
        self._load_bot = load_bot
        self._bots: dict[str, object] = {}
        self._snapshots: dict[int, NetworkPolicy] = {}
        self.current: tuple[str, int | None] | None = None
        self._policy = None

    def reset(self, seed: int | None = None) -> None:
        kind, step = self.current = self.pool.draw(self._rng)
        if kind == SNAPSHOTS:
            self._policy = self._snapshot_policy(step)
        else:
            if kind not in self._bots:
                self._bots[kind] = self._load_bot(kind, int(self._rng.integers(2**31)))
            self._policy = self._bots[kind]
        reset_policy(self._policy, seed if seed is not None else int(self._rng.integers(2**31)))

    def _snapshot_policy(self, step: int) -> NetworkPolicy:
        kept = set(self.pool.snapshot_steps)
        for old in [s for s in self._snapshots if s not in kept]:
            del self._snapshots[old]
        if step not in self._snapshots:
            self._snapshots[step] = NetworkPolicy(self.pool.snapshot_weights(step), self.pool.hidden,
                                                  self.pool.activation, deterministic=False,
                                                  seed=int(self._rng.integers(2**31)))
        return self._snapshots[step]

    @property
    def kind(self) -> str:
        """Who plays this hand: a bot spec or ``"snapshots"``."""
        return "none" if self.current is None else self.current[0]

    def act(self, observation: dict) -> int:
        if self._policy is None:
            self.reset()
        return self._policy.act(observation)


class SelfPlayEnv(gymnasium.Wrapper):
    """A ``SingleAgentEnv`` whose other seats are :class:`PoolOpponent` seats of one pool.

    The trainer reaches the pool through ``VecEnv.env_method("add_snapshot", weights, step)``,
    which works the same in one process and in subprocesses. When a hand ends, ``info`` gets
    ``selfplay_opponents`` (the kinds that played it, e.g. ``"greedy"``) and ``selfplay_result``
    (the learner's reward: +1 win, -1 loss, 0 draw).
    """

    def __init__(self, env: gymnasium.Env, pool: OpponentPool, opponents: list[PoolOpponent]) -> None:
        super().__init__(env)
        self.pool = pool
        self.opponents = opponents

    def add_snapshot(self, weights: Mapping[str, np.ndarray], step: int) -> None:
        self.pool.add_snapshot(weights, step)

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()

    def step(self, action):
        observation, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            info["selfplay_opponents"] = "+".join(sorted(opponent.kind for opponent in self.opponents))
            info["selfplay_result"] = float(reward)
        return observation, reward, terminated, truncated, info
