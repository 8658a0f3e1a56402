"""``SkipBoVecEnv``: a Stable-Baselines3 ``VecEnv`` over the batched engine.

The learner plays one seat of every game; the other seats are played, in batch, by the given
opponents (``"random"``, ``"greedy"`` and ``"planner[:options]"`` inside the kernels; networks, SB3 snapshots and Python
policies through :mod:`agents.batched.policies`, one batched call per opponent per round).
``step`` returns when it is the learner's turn again in every game.

## Action Space
``Discrete(145)``, the action ids of RULES.md; ``action_masks()`` (bool ``[num_envs, 145]``)
gives the legal ones, as ``MaskablePPO`` expects.

## Observation Space
``Box(OBS_LOW, OBS_HIGH, (OBS_SIZE,), float32)``: ``skipbo_env.encoding.encode_observation`` of
the learner's seat, identical to the AEC environment's vector.

## Rewards
At the end of a hand: +1 when the learner's side won, -1 when another side won, 0 for a draw or
a truncated hand (``max_turns``); 0 on every other step. With ``shaping="stockpile"`` every step
also pays the potential-based stockpile shaping of :mod:`skipbo_env.envs.common` (discount
``gamma``): ``gamma * Phi(next decision) - Phi(this decision)``, ``-Phi`` on the step that ends the
hand; ``infos[i]["episode"]["r"]`` and the final reward's sign still tell the hand's result.

## Episode End
A hand ends with a win, a draw (``exhausted_draw``) or truncation (``max_turns``; reported as
``TimeLimit.truncated``; without ``rules`` the table is ``Rules(max_turns=1000)``, the
environments' default, so that no episode runs for ever; a given ``Rules`` is used as it is,
``max_turns=None`` included). The game is dealt again at once with the next seed; ``infos[i]``
then holds ``terminal_observation``, ``episode`` (``r``, ``l``: return and learner steps),
``outcome``, ``seed`` and ``points``. Hands that end before the learner's first move (possible
with tiny stockpiles) are dealt again without an episode.

Seats: by default the learner takes seat ``seed % num_players`` of the hand dealt with ``seed``,
so it plays every seat equally often; ``opponents[k]`` plays the seat ``k + 1`` places to the
learner's left (in a partners game the learner's partner is one of them).
"""

from __future__ import annotations

import time

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.encoding import OBS_HIGH, OBS_LOW, OBS_SIZE
from skipbo_env.envs.common import ENV_MAX_TURNS, check_shaping
from skipbo_env.rules import Rules
from skipbo_env.vector.engine import VectorGame
from skipbo_env.vector.layout import CALLER, OUTCOME_NAMES, TRUNCATED, WIN


class SkipBoVecEnv(VecEnv):
    """``num_envs`` hands, the learner in one seat of each, the opponents played in batch.

    ``opponents`` says who plays the other seats; the environment resolves no names. It is an
    object with ``count`` (how many players it has) and ``seat(engine)``, which returns a seating
    of the batch: ``assign(rows, players)`` gives seat ``s`` of game ``rows[i]`` to player
    ``players[i, s]`` (``CALLER``, -1, for the learner) and ``advance(rows)`` plays every seat
    but the learner's until the learner is to act. ``agents.batched.seating.batch_opponents("greedy")``
    (or a list with one spec per other seat: bot names, networks, SB3 models, callables) builds
    one; player ``k % count`` sits ``k + 1`` places to the learner's left (so one player plays every
    other seat, and ``num_players - 1`` players one seat each). ``learner_seat``: a fixed seat, or
    ``None`` to rotate with the seed. ``threads``: kernel threads (default: the CPU count).
    ``shaping``/``gamma``: reward shaping (module docstring, "Rewards").
    """

    metadata = {"render_modes": []}
    render_mode = None

    def __init__(self, rules: Rules | None = None, num_envs: int = 64, opponents=None, *, seed: int = 0,
                 learner_seat: int | None = None, threads: int | None = None, shaping: str = "none",
                 gamma: float = 0.99) -> None:
        self.rules = rules if rules is not None else Rules(max_turns=ENV_MAX_TURNS)
        self.shaping = check_shaping(shaping, gamma)
        self.gamma = float(gamma)
        n = self.rules.num_players
        if not (hasattr(opponents, "seat") and hasattr(opponents, "count")):
            raise ValueError(f"opponents={opponents!r} is not a set of batch players: build one with "
                             "agents.batched.seating.batch_opponents(spec or [spec per other seat])")
        if learner_seat is not None and not (isinstance(learner_seat, int) and 0 <= learner_seat < n):
            raise ValueError(f"learner_seat={learner_seat!r} is not a seat: use 0 to {n - 1}, or None to rotate")
        self.learner_seat = learner_seat
        self.opponents = opponents
        self.engine = VectorGame(self.rules, num_envs, seed, auto_reset=False, observations=False, threads=threads)
        self.seating = opponents.seat(self.engine)
        self._seed = seed
        self._started = False
        self._learner = np.zeros(num_envs, dtype=np.int64)
        self._episode_steps = np.zeros(num_envs, dtype=np.int64)
        self._episode_start = np.zeros(num_envs, dtype=np.float64)
        self._actions: np.ndarray | None = None
        self._potential = np.zeros(num_envs, dtype=np.float64)
        self._stockpile = np.array([s % self.rules.num_teams if self.rules.team_stock == "shared" else s
                                    for s in range(n)])
        teams = np.array([self.rules.team_of(s) if self.rules.partners else s for s in range(n)])
        self._opponent_seats = (teams[:, None] != teams[None, :]).astype(np.float64)  # [learner, other]
        space = gymnasium.spaces.Box(OBS_LOW, OBS_HIGH, (OBS_SIZE,), np.float32)
        super().__init__(num_envs, space, gymnasium.spaces.Discrete(NUM_ACTIONS))

    # ------------------------------------------------------------------ VecEnv
    def reset(self) -> np.ndarray:
        """Deal every game afresh: from the seed given to :meth:`seed` (or the constructor) the first
        time, otherwise with the next unused seeds."""
        seed = self._seeds[0]
        if seed is None:
            seed = self._seed if not self._started else self.engine._next_seed
        self._started = True
        self._reset_seeds()
        self.engine.reset(int(seed))
        rows = np.arange(self.num_envs)
        self._seat_players(rows)
        self._advance(rows)
        self._potential[:] = self._potentials(rows)
        return self.engine.observe()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self):
        rows = np.arange(self.num_envs)
        self.engine.step_rows(rows, self._actions.astype(np.int64))
        self._episode_steps += 1
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        self.seating.advance(rows)
        ended = np.flatnonzero(self.engine.over)
        after = np.where(self.engine.over, 0.0, self._potentials(rows))
        if len(ended):
            self._report(ended, rewards, dones, infos)
        if self.shaping != "none":
            rewards += (self.gamma * after - self._potential).astype(np.float32)
        if len(ended):
            self._advance(ended)
        if self.shaping != "none":
            self._potential[:] = self._potentials(rows)
        return self.engine.observe(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """bool[num_envs, 145]: the learner's legal actions in each game."""
        return self.engine.action_mask.copy()

    def close(self) -> None:
        self.engine.close()

    def get_attr(self, attr_name: str, indices=None) -> list:
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        rows = self._indices(indices)
        if method_name == "action_masks":
            return list(self.action_masks()[rows])
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * len(rows)

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [indices] if isinstance(indices, int) else list(indices)

    # ------------------------------------------------------------------ hands
    def _potentials(self, rows: np.ndarray) -> np.ndarray:
        """The stockpile potential ``Phi`` of the learner in each game of ``rows``."""
        if self.shaping == "none":
            return np.zeros(len(rows))
        left = self.engine.games["stock_len"][rows][:, self._stockpile].astype(np.float64)  # [k, seat]
        others = self._opponent_seats[self._learner[rows]]
        own = left[np.arange(len(rows)), self._learner[rows]]
        return ((left * others).sum(1) / others.sum(1) - own) / self.rules.stock_size

    def _seat_players(self, rows: np.ndarray) -> None:
        """The learner's seat in each new hand, and the opponents around it (:meth:`_opponent_players`)."""
        n = self.rules.num_players
        seeds = self.engine.seeds[rows]
        learner = seeds % n if self.learner_seat is None else np.full(len(rows), self.learner_seat)
        self._learner[rows] = learner
        self.seating.assign(rows, self._opponent_players(rows, learner))
        self._episode_steps[rows] = 0
        self._episode_start[rows] = time.time()

    def _opponent_players(self, rows: np.ndarray, learner: np.ndarray) -> np.ndarray:
        """``players[i, seat]`` for the new hands in ``rows``: ``CALLER`` at the learner's seat,
        player ``k % count`` of ``opponents`` ``k + 1`` places to its left."""
        n = self.rules.num_players
        players = np.empty((len(rows), n), dtype=np.int64)
        for offset in range(n):
            player = (offset - 1) % self.opponents.count
            players[np.arange(len(rows)), (learner + offset) % n] = CALLER if offset == 0 else player
        return players

    def _advance(self, rows: np.ndarray) -> None:
        """Deal ``rows`` again (if over) and play until the learner is to act in each."""
        engine = self.engine
        while len(rows):
            over = rows[engine.over[rows]]
            if len(over):
                engine.deal(over)
                self._seat_players(over)
            self.seating.advance(rows)
            rows = rows[engine.over[rows]]  # ended before the learner moved: deal again

    def _report(self, rows: np.ndarray, rewards: np.ndarray, dones: np.ndarray, infos: list[dict]) -> None:
        finished = self.engine.finished()
        by_row = {int(row): i for i, row in enumerate(finished.rows)}
        terminal = self.engine.observe(rows, self._learner[rows])
        now = time.time()
        for k, row in enumerate(rows.tolist()):
            i = by_row[row]
            learner = self._learner[row]
            outcome = int(finished.outcome[i])
            reward = 0.0
            if outcome == WIN:
                reward = 1.0 if finished.winners[i, learner] else -1.0
            rewards[row] = reward
            dones[row] = True
            infos[row] = {
                "terminal_observation": terminal[k],
                "TimeLimit.truncated": outcome == TRUNCATED,
                "episode": {"r": reward, "l": int(self._episode_steps[row]), "t": round(now - self._episode_start[row], 6)},
                "outcome": OUTCOME_NAMES[outcome],
                "seed": int(finished.seeds[i]),
                "points": int(finished.points[i, learner]),
            }
