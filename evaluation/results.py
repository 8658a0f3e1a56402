"""The results of a tournament and the figures drawn from them.

Counting
    An agent *wins* a game when one of its seats is among the winners; a drawn or truncated hand
    is a *draw* for everyone in it. Points per hand are the points the agent's seats scored
    (a team's points once). Turns per hand count the agent's own turns (per seat it held);
    actions per turn are its actions divided by its turns. Win rates carry their 95% Wilson
    interval (:func:`wilson_interval`); :meth:`TournamentResult.ratings` are openskill ratings.
"""

from __future__ import annotations

import dataclasses
import datetime
import itertools
import math

from skipbo_env.provenance import versions
from skipbo_env.rules import Rules
from evaluation.schedule import SEATING_RULE, SEED_DERIVATION

RESULT_FORMAT = "skipbo-tournament/1"
RATING_METHOD = (
    "openskill PlackettLuce (mu 25, sigma 25/3), one update per game in game order: "
    "the winning agent ranked first, the others tied behind (a draw ties everyone); "
    "ordinal = mu - 3 sigma"
)
Z95 = 1.959963984540054


@dataclasses.dataclass
class GameResult:
    """What one game produced; ``seat_*`` lists are indexed by seat."""

    index: int
    deal: int
    seed: int
    seating: tuple[int, ...]
    outcome: str
    winners: tuple[int, ...]
    points: tuple[int, ...]
    turns: int
    seat_turns: list[int]
    seat_actions: list[int]
    seat_seconds: list[float]


@dataclasses.dataclass
class TournamentResult:
    """Every game of a tournament and the figures drawn from them (see :meth:`to_json`)."""

    names: list[str]
    specs: list[str]
    rules: Rules
    seed: int
    duplicate: bool
    games_requested: int
    games_scheduled: int
    seatings: list[tuple[int, ...]]
    games: list[GameResult]
    seat_orders: str = "rotations"
    error: str | None = None
    interrupted: bool = False
    elapsed_s: float = 0.0
    workers: int = 1
    engine: str = "python"
    engine_reason: str = "asked for"

    @property
    def complete(self) -> bool:
        return self.error is None and not self.interrupted and len(self.games) == self.games_scheduled

    def agent_stats(self) -> dict[str, dict]:
        """Per agent: games, wins, draws, losses, win rate with its 95% Wilson interval, and means."""
        return {name: self._stats_of(agent) for agent, name in enumerate(self.names)}

    def _stats_of(self, agent: int) -> dict:
        games = wins = draws = points = 0
        turns = actions = seat_games = 0
        seconds = 0.0
        for game in self.games:
            seats = [s for s, a in enumerate(game.seating) if a == agent]
            if not seats:
                continue
            games += 1
            if game.outcome == "win":
                wins += any(s in game.winners for s in seats)
            else:
                draws += 1
            points += max(game.points[s] for s in seats)
            seat_games += len(seats)
            turns += sum(game.seat_turns[s] for s in seats)
            actions += sum(game.seat_actions[s] for s in seats)
            seconds += sum(game.seat_seconds[s] for s in seats)
        return {
            "spec": self.specs[agent],
            "games": games,
            "wins": wins,
            "draws": draws,
            "losses": games - wins - draws,
            "win_rate": wins / games if games else None,
            "ci95": list(wilson_interval(wins, games)) if games else None,
            "mean_points": points / games if games else None,
            "mean_turns": turns / seat_games if seat_games else None,
            "mean_actions_per_turn": actions / turns if turns else None,
            "ms_per_action": 1000 * seconds / actions if actions else None,
        }

    def pairwise(self) -> dict[str, dict[str, dict]]:
        """For every ordered pair: in games with both, how often each won (a win by a third is neither)."""
        table = {a: {b: {"games": 0, "wins": 0, "losses": 0} for b in self.names if b != a} for a in self.names}
        for game in self.games:
            present = sorted(set(game.seating))
            winner = {game.seating[s] for s in game.winners}
            for a, b in itertools.permutations(present, 2):
                cell = table[self.names[a]][self.names[b]]
                cell["games"] += 1
                cell["wins"] += a in winner
                cell["losses"] += b in winner
        for row in table.values():
            for cell in row.values():
                decided = cell["wins"] + cell["losses"]
                cell["win_rate"] = cell["wins"] / decided if decided else None
                cell["ci95"] = list(wilson_interval(cell["wins"], decided)) if decided else None
        return table

    def ratings(self) -> dict:
        """openskill ratings from the games in order (see :data:`RATING_METHOD`)."""
        from openskill.models import PlackettLuce

        model = PlackettLuce()
        ratings = {agent: model.rating(name=name) for agent, name in enumerate(self.names)}
        for game in sorted(self.games, key=lambda g: g.index):
            present = sorted(set(game.seating))
            if len(present) < 2:
                continue
            winner = {game.seating[s] for s in game.winners}
            ranks = [0 if (a in winner or not winner) else 1 for a in present]
            updated = model.rate([[ratings[a]] for a in present], ranks=ranks)
            for a, team in zip(present, updated):
                ratings[a] = team[0]
        return {
            "method": RATING_METHOD,
            "agents": {
                self.names[a]: {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()} for a, r in ratings.items()
            },
        }

    def to_json(self, command: str | None = None) -> dict:
        """Every figure, the rules, the seeds and the versions; ``complete`` is false after an error."""
        games = sorted(self.games, key=lambda g: g.index)
        return {
            "format": RESULT_FORMAT,
            "complete": self.complete,
            "error": self.error,
            "interrupted": self.interrupted,
            "command": command,
            "agents": self.agent_stats(),
            "pairwise": self.pairwise(),
            "ratings": self.ratings() if len(self.names) > 1 else None,
            "rules": self.rules.to_dict(),
            "num_players": self.rules.num_players,
            "duplicate": self.duplicate,
            "seat_orders": self.seat_orders,
            "seatings": [[self.names[a] for a in seating] for seating in self.seatings],
            "seating_rule": SEATING_RULE,
            "seed": self.seed,
            "seeds": {
                "tournament": self.seed,
                "derivation": SEED_DERIVATION[self.engine],
                "games": [g.seed for g in games],
            },
            "games_requested": self.games_requested,
            "games_scheduled": self.games_scheduled,
            "games_played": len(self.games),
            "engine": self.engine,
            "engine_reason": self.engine_reason,
            "workers": self.workers,
            "elapsed_s": round(self.elapsed_s, 3),
            "versions": versions(),
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "games": [
                {"index": g.index, "deal": g.deal, "seed": g.seed, "seats": [self.names[a] for a in g.seating],
                 "outcome": g.outcome, "winners": list(g.winners), "points": list(g.points), "turns": g.turns,
                 "seat_turns": g.seat_turns, "seat_actions": g.seat_actions}
                for g in games
            ],
        }


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% with the default ``z``)."""
    if trials <= 0:
        raise ValueError("the Wilson interval needs at least one trial")
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))
