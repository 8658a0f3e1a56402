"""A tournament played on the batched engine: thousands of hands at once, bots inside the kernels.

``tournament(agents, rules, games, seed)`` seats ``agents[j]`` at seat ``j`` (rotated, see below)
and plays ``games`` hands; it returns every hand's result and a summary per agent. With only
``random``/``greedy``/``planner`` players whole hands run inside one kernel call; other players (networks,
SB3 models, Python policies) are asked in batch (see :mod:`agents.batched.policies`).

Seeds and seats: hand ``h`` is ``Game.new(rules, seed=seed + h // n)`` with the seating rotated
by ``h % n`` (``n`` players): agent ``j`` sits at seat ``(j + h % n) % n``. With
``duplicate=True`` (default) every deal is therefore played ``n`` times, once per rotation, so
every agent meets the same cards from every seat; with ``duplicate=False`` hand ``h`` uses
``seed + h`` and still rotates the seats. The results do not depend on ``batch_size`` or
``threads``: the bots of a hand draw from a stream derived from its seed and rotation.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from skipbo_env.rules import Rules
from skipbo_env.vector.engine import VectorGame
from skipbo_env.vector.layout import DRAW, TRUNCATED
from agents.batched.policies import batch_policy
from agents.batched.seating import Seating


@dataclasses.dataclass
class TournamentResult:
    """Every hand of a tournament (arrays indexed by hand) and the agents' summary.

    ``winners[h, j]``: agent ``j`` was on the winning side of hand ``h``; ``points[h, j]``: the
    points agent ``j`` scored in it; ``seats[h, j]``: the seat agent ``j`` held.
    """

    agents: list[str]
    rules: Rules
    seeds: np.ndarray
    rotations: np.ndarray
    seats: np.ndarray
    outcome: np.ndarray
    winners: np.ndarray
    points: np.ndarray
    turns: np.ndarray
    actions: np.ndarray

    def summary(self) -> list[dict]:
        """Per agent: games, wins, draws, truncated, win_rate, mean_points, mean_turns, actions_per_turn."""
        games = len(self.seeds)
        draws = int((self.outcome == DRAW).sum())
        truncated = int((self.outcome == TRUNCATED).sum())
        turns = max(int(self.turns.sum()), 1)
        rows = []
        for j, name in enumerate(self.agents):
            wins = int(self.winners[:, j].sum())
            rows.append({
                "agent": name,
                "games": games,
                "wins": wins,
                "draws": draws,
                "truncated": truncated,
                "win_rate": wins / games if games else 0.0,
                "mean_points": float(self.points[:, j].mean()) if games else 0.0,
                "mean_turns": float(self.turns.mean()) if games else 0.0,
                "actions_per_turn": float(self.actions.sum() / turns),
            })
        return rows


def tournament(agents: list, rules: Rules | None = None, games: int = 1000, seed: int = 0, *, duplicate: bool = True,
               batch_size: int = 1024, threads: int | None = None,
               progress: Callable[[int], None] | None = None) -> TournamentResult:
    """Play ``games`` hands with ``agents[j]`` seated at seat ``j`` (rotated); see the module docstring.

    ``agents``: one player per seat (``num_players`` of them; in partners, agents ``j`` and
    ``j + n/2`` are a team), each a spec for :func:`~agents.batched.policies.batch_policy`.
    ``progress(k)`` is called with the number of hands finished so far.
    """
    rules = rules if rules is not None else Rules()
    n = rules.num_players
    if len(agents) != n:
        raise ValueError(f"a tournament needs one agent per seat: {n} for num_players={n}, got {len(agents)}")
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games={games!r} is not allowed: use an integer >= 1")
    policies = [batch_policy(agent, seed=seed + j) for j, agent in enumerate(agents)]
    hands = np.arange(games)
    rotations = hands % n
    seeds = seed + (hands // n if duplicate else hands)
    engine = VectorGame(rules, min(batch_size, games), int(seeds[0]), auto_reset=False, observations=False,
                        threads=threads)
    seating = Seating(engine, policies)
    result = _empty_result([_name(agent) for agent in agents], rules, seeds, rotations, games, n)
    hand_of_row = np.full(engine.batch_size, -1, dtype=np.int64)
    next_hand = 0
    done = 0
    rows = np.arange(engine.batch_size)
    while len(rows):
        start = next_hand
        rows = rows[:max(0, min(len(rows), games - start))]
        if len(rows):
            _deal(engine, seating, rows, np.arange(start, start + len(rows)), seeds, rotations, n, result)
            hand_of_row[rows] = np.arange(start, start + len(rows))
            next_hand += len(rows)
        seating.advance(np.flatnonzero(hand_of_row >= 0))
        finished = engine.finished()
        playing = hand_of_row[finished.rows] >= 0  # rows left idle at the end still hold their last hand
        _record(finished, finished.rows[playing], hand_of_row[finished.rows[playing]], result)
        hand_of_row[finished.rows] = -1
        done += int(playing.sum())
        if progress is not None:
            progress(done)
        rows = finished.rows if next_hand < games else finished.rows[:0]
    engine.close()
    return result


def _name(agent) -> str:
    return agent if isinstance(agent, str) else getattr(agent, "name", None) or type(agent).__name__


def _empty_result(names, rules, seeds, rotations, games, n) -> TournamentResult:
    seats = (np.arange(n)[None, :] + rotations[:, None]) % n
    return TournamentResult(
        agents=names, rules=rules, seeds=seeds, rotations=rotations, seats=seats,
        outcome=np.zeros(games, dtype=np.int64), winners=np.zeros((games, n), dtype=bool),
        points=np.zeros((games, n), dtype=np.int64), turns=np.zeros(games, dtype=np.int64),
        actions=np.zeros(games, dtype=np.int64),
    )


def _deal(engine, seating, rows, hands, seeds, rotations, n, result) -> None:
    engine.deal(rows, seeds[hands])
    agent_at_seat = np.empty((len(rows), n), dtype=np.int64)
    agent_at_seat[np.arange(len(rows))[:, None], result.seats[hands]] = np.arange(n)[None, :]
    seating.assign(rows, agent_at_seat, salt=rotations[hands])


def _record(finished, rows, hands, result) -> None:
    """Copy the results of the hands ``hands``, played in ``rows``, into ``result`` (agent order)."""
    at = np.searchsorted(finished.rows, rows)
    seats = result.seats[hands]
    result.outcome[hands] = finished.outcome[at]
    result.winners[hands] = finished.winners[at[:, None], seats]
    result.points[hands] = finished.points[at[:, None], seats]
    result.turns[hands] = finished.turns[at]
    result.actions[hands] = finished.actions[at]
