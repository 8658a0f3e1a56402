"""The benchmark protocol ``skipbo-bench-v1``: one policy against a fixed ladder, on fixed deals, one scorecard.

What the protocol fixes (change any of it and it is another protocol, ``skipbo-bench-v2``)
    - **Table sets** (:data:`TABLE_SETS`): two players (the default) or four, 30-card stockpiles, every
      other rule at its default (RULES.md). At two players the policy meets each rung head to head; at
      four it sits with three copies of the rung.
    - **Deals**: deal ``d`` of a table set is the game seed ``derived_seed(table seed, d)`` (the
      tournament seeds of :mod:`evaluation.schedule`), so its cards are fixed; the seeds are published in
      every result file, and :func:`deal_hash` (SHA-256 of every dealt position) is pinned by a test. A
      tier plays the first deals of its table set: ``quick`` a short prefix, ``full`` the long one.
    - **Seat orders**: every deal is played in every seat order (two games a deal at two seats, the
      policy in each of the four seats at four), against every rung, with the same deals for every rung.
    - **The ladder** (:data:`TABLE_SETS`, one list per table size): shipped players from ``random`` to the
      strongest, each with a rating fixed by the protocol (its *anchor*).

The scorecard (:class:`Scorecard`), per rung
    - win rate with its 95% Wilson interval over games, and the drawn hands (a draw is not a win);
    - the average points margin with its 95% interval: a hand's points are the rulebook's (the winner
      scores 25 plus 5 for each card left in the other stockpiles; a drawn hand scores nothing), the
      margin is the policy's points minus the rung's; the interval is the normal one over deals (each
      deal's margin averaged over its seat orders, so the duplicate games of a deal count once);
    - the policy's mean time a decision (on the batched engine a kernel bot's share of the kernel calls,
      stepping included; a network's forward passes).

    Then one rating (:func:`rating`): OpenSkill Plackett-Luce, the policy starting at mu 25, sigma 25/3,
    updated game by game (rungs in ladder order, games in schedule order) against the other seats, each
    held at its rung's anchor (sigma :data:`ANCHOR_SIGMA`), never updated, so a rating means the same on
    every machine. The anchors are a fixed point (:func:`measure_anchors`, on the quick tier): a rung
    benchmarked on the quick tier rates at its own anchor (within 0.05 at two seats, 0.5 above it at four).

Engines: :func:`evaluation.run_tournament` plays each rung, so kernel bots and saved networks play on the
batched engine, any other policy on the rules engine in ``workers`` processes or as Ray tasks; the games,
so the scorecard, are the same whichever plays them (only the times differ).
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import math
import re
import resource
import time
from typing import Sequence

from skipbo_env.game import Game
from skipbo_env.provenance import git_commit, machine, versions
from skipbo_env.rules import Rules
from agents.loading import load_policy, short_name
from evaluation.results import Z95, GameResult, wilson_interval
from evaluation.schedule import derived_seed, seatings
from evaluation.tournament import run_tournament

PROTOCOL = "skipbo-bench-v1"
RESULT_FORMAT = "skipbo-benchmark/1"
TIERS = ("quick", "full")
ANCHOR_SIGMA = 1.0
"""The sigma every rung is held at when the policy's rating is updated against it."""
ANCHOR_MEAN = 25.0
"""The mean of the ladder's anchors (openskill's starting mu), which fixes where the scale sits."""
RATING_METHOD = (
    "openskill PlackettLuce with tau 0 (no drift between games); the policy starts at mu 25, sigma 25/3 and is "
    "updated once per game, rungs in "
    "ladder order and games in schedule order, every other seat a player held at its rung's anchor mu and sigma "
    f"{ANCHOR_SIGMA} (never updated); the winner ranks first, the others tie behind; a drawn hand leaves the "
    "rating as it was; ordinal = mu - 3 sigma"
)
MARGIN_METHOD = ("points per hand by the rulebook (winner 25 + 5 per card left in the other stockpiles, a draw "
                 "scores nothing); margin = the policy's points - the rung's; 95% normal interval over deals, each "
                 "deal's margin averaged over its seat orders")


@dataclasses.dataclass(frozen=True)
class Rung:
    """One player of the ladder: its spec and its anchor (the mu the protocol fixes for it)."""

    spec: str
    anchor: float


@dataclasses.dataclass(frozen=True)
class TableSet:
    """One table size of the protocol: its rules, its deal seed, the deals of each tier and the ladder."""

    players: int
    seed: int
    deals: dict[str, int]
    ladder: tuple[Rung, ...]
    seating: str

    @property
    def rules(self) -> Rules:
        return Rules(num_players=self.players, stock_size=30)

    def deal_seeds(self, deals: int) -> list[int]:
        """The game seed of each of the first ``deals`` deals (``derived_seed(seed, d)``)."""
        return [derived_seed(self.seed, deal) for deal in range(deals)]


TABLE_SETS = {
    2: TableSet(
        players=2, seed=41_2, deals={"quick": 100, "full": 5000},
        ladder=(Rung("random", -16.3), Rung("greedy", 10.0), Rung("planner", 40.4), Rung("expert", 42.5),
                Rung("pretrained-2p", 48.4)),
        seating="the policy against one rung, each deal played twice, the policy first and second",
    ),
    4: TableSet(
        players=4, seed=41_4, deals={"quick": 50, "full": 2500},
        ladder=(Rung("random", 21.8), Rung("greedy", 22.0), Rung("planner", 25.2), Rung("expert", 25.9),
                Rung("pretrained-4p", 30.2)),
        seating="the policy and three copies of one rung, each deal played four times, the policy in each seat",
    ),
}
"""The table sets of the protocol by number of players; each ladder runs from ``random`` to the strongest."""


class BenchmarkError(ValueError):
    """The benchmark cannot be played as asked, or the policy failed in a game (the message says where)."""


def table_set(players: int) -> TableSet:
    """The table set for ``players``; :class:`BenchmarkError` names the sizes that exist."""
    if players not in TABLE_SETS:
        raise BenchmarkError(f"there is no {players}-player table set in {PROTOCOL}: use --players "
                             f"{' or '.join(map(str, TABLE_SETS))}")
    return TABLE_SETS[players]


def tier_deals(table: TableSet, tier: str, deals: int | None = None) -> int:
    """How many deals a run plays: the tier's, or the first ``deals`` of them (a partial run)."""
    if tier not in TIERS:
        raise BenchmarkError(f"there is no tier {tier!r} in {PROTOCOL}: use {' or '.join(TIERS)}")
    if deals is None:
        return table.deals[tier]
    if not isinstance(deals, int) or not 1 <= deals <= table.deals[tier]:
        raise BenchmarkError(f"deals={deals!r} is not allowed: use 1 to {table.deals[tier]:,}, the tier's deals")
    return deals


def deal_hash(players: int, deals: int) -> str:
    """SHA-256 of the protocol, the rules and every dealt position of the first ``deals`` deals."""
    table = table_set(players)
    digest = hashlib.sha256(json.dumps({"protocol": PROTOCOL, "rules": table.rules.to_dict()},
                                       sort_keys=True).encode())
    for seed in table.deal_seeds(deals):
        digest.update(json.dumps(Game.new(table.rules, seed=seed).to_dict(), sort_keys=True).encode())
    return digest.hexdigest()


@dataclasses.dataclass
class RungCard:
    """The policy's games against one rung, and what the scorecard reads from them."""

    rung: Rung
    engine: str
    games: list[GameResult]
    elapsed_s: float

    def figures(self) -> dict:
        games = len(self.games)
        wins = sum(_policy_won(game) for game in self.games)
        draws = sum(game.outcome != "win" for game in self.games)
        margins = deal_margins(self.games)
        actions = sum(game.seat_actions[seat] for game in self.games for seat in _policy_seats(game))
        seconds = sum(game.seat_seconds[seat] for game in self.games for seat in _policy_seats(game))
        mean, half = mean_interval(list(margins.values()))
        return {
            "rung": self.rung.spec, "anchor": self.rung.anchor, "engine": self.engine, "games": games,
            "deals": len(margins), "wins": wins, "draws": draws, "losses": games - wins - draws,
            "win_rate": wins / games, "win_ci95": list(wilson_interval(wins, games)),
            "margin": mean, "margin_ci95": [mean - half, mean + half] if math.isfinite(half) else None,
            "policy_decisions": actions, "ms_per_decision": 1000 * seconds / actions if actions else None,
        }


def _policy_seats(game: GameResult) -> list[int]:
    return [seat for seat, agent in enumerate(game.seating) if agent == 0]


def _policy_won(game: GameResult) -> bool:
    return game.outcome == "win" and any(seat in game.winners for seat in _policy_seats(game))


def game_margin(game: GameResult) -> int:
    """The policy's points minus the rung's in one game (only the winner scores, so one of them is 0)."""
    policy = max(game.points[seat] for seat in _policy_seats(game))
    rung = max(points for seat, points in enumerate(game.points) if game.seating[seat] != 0)
    return policy - rung


def deal_margins(games: Sequence[GameResult]) -> dict[int, float]:
    """Each deal's margin, averaged over its seat orders."""
    by_deal: dict[int, list[int]] = {}
    for game in games:
        by_deal.setdefault(game.deal, []).append(game_margin(game))
    return {deal: sum(values) / len(values) for deal, values in sorted(by_deal.items())}


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float]:
    """``(mean, half width)`` of the normal 95% interval of the mean (sample standard deviation); half width
    ``inf`` for a single value."""
    if not values:
        raise ValueError("the mean of no values")
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, math.inf
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, z * math.sqrt(variance / n)


def rating(cards: Sequence[RungCard]) -> dict:
    """The policy's OpenSkill rating against the anchored ladder (see :data:`RATING_METHOD`)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=0.0)  # a player's skill is fixed: no added drift, so every game counts alike
    policy = model.rating(name="policy")
    for card in cards:
        for game in sorted(card.games, key=lambda g: g.index):
            if game.outcome != "win":
                continue  # a drawn hand says nothing of who is stronger (at four seats a weak table causes them)
            seats = [_policy_seats(game)[0]] + [s for s, agent in enumerate(game.seating) if agent != 0]
            teams = [[policy]] + [[model.rating(mu=card.rung.anchor, sigma=ANCHOR_SIGMA)] for _ in seats[1:]]
            ranks = [0 if seat in game.winners else 1 for seat in seats]
            policy = model.rate(teams, ranks=ranks)[0][0]
    return {"mu": policy.mu, "sigma": policy.sigma, "ordinal": policy.ordinal(), "method": RATING_METHOD}


@dataclasses.dataclass
class Scorecard:
    """A benchmark run: the policy's games against every rung played, and the run's provenance."""

    spec: str
    name: str
    players: int
    tier: str
    deals: int
    cards: list[RungCard]
    workers: int
    ray_address: str | None
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    interrupted: bool = False
    provenance: dict = dataclasses.field(default_factory=lambda: {"versions": versions(), "commit": git_commit(),
                                                                  "machine": machine()})
    """What the run started on: the versions, the commit and the machine (its load then)."""

    @property
    def table(self) -> TableSet:
        return table_set(self.players)

    @property
    def complete(self) -> bool:
        """Every rung played on every deal of the tier: a result that compares with other complete ones."""
        return (not self.interrupted and self.deals == self.table.deals[self.tier]
                and len(self.cards) == len(self.table.ladder))

    def to_json(self, command: str | None = None) -> dict:
        figures = [card.figures() for card in self.cards]
        actions = sum(f["policy_decisions"] for f in figures)
        seconds = sum(f["ms_per_decision"] * f["policy_decisions"] for f in figures if f["ms_per_decision"])
        return {
            "format": RESULT_FORMAT,
            "protocol": PROTOCOL,
            "tier": self.tier,
            "players": self.players,
            "complete": self.complete,
            "policy": {"spec": self.spec, "name": self.name},
            "rungs": figures,
            "rating": rating(self.cards) if self.cards else None,
            "ms_per_decision": seconds / actions if actions else None,
            "margin_method": MARGIN_METHOD,
            "deal_set": {
                "deals": self.deals, "tier_deals": self.table.deals[self.tier], "seed": self.table.seed,
                "derivation": "game seed of deal d: SeedSequence(seed, spawn_key=(d,)), 63 bits",
                "hash": deal_hash(self.players, self.deals), "seeds": self.table.deal_seeds(self.deals),
                "seating": self.table.seating,
            },
            "rules": self.table.rules.to_dict(),
            "command": command,
            **self.provenance,
            "workers": self.workers,
            "ray": self.ray_address,
            "cpu_seconds": round(self.cpu_seconds, 1),
            "wall_seconds": round(self.wall_seconds, 1),
            "interrupted": self.interrupted,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }


def run_benchmark(spec: str, players: int = 2, tier: str = "quick", *, deals: int | None = None, workers: int = 1,
                  ray_address: str | None = None, progress: bool = False) -> Scorecard:
    """Play the protocol: ``spec`` (any policy spec of ``agents.load_policy``) against every rung of the ladder.

    ``deals`` plays only the first deals of the tier (a partial run, ``complete`` false: for trying a policy
    out and for tests). Raises :class:`BenchmarkError` (a ``ValueError``) for a table size, tier or deal count
    that does not exist, ``PolicySpecError`` for a bad spec (both before any game), and :class:`BenchmarkError`
    when the policy raises or returns an illegal move, naming the rung, the deal and the move.
    """
    table = table_set(players)
    count = tier_deals(table, tier, deals)
    load_policy(spec)  # a bad spec fails here, before any game
    name = short_name(spec)
    card = Scorecard(spec, name, players, tier, count, [], workers, ray_address)
    cpu_start, wall_start = _cpu_seconds(), time.perf_counter()
    try:
        for rung in table.ladder:
            card.cards.append(_play_rung(spec, name, rung, table, count, workers, ray_address, progress))
    except KeyboardInterrupt:
        card.interrupted = True
    finally:
        card.cpu_seconds = _cpu_seconds() - cpu_start
        card.wall_seconds = time.perf_counter() - wall_start
    return card


def _play_rung(spec: str, name: str, rung: Rung, table: TableSet, deals: int, workers: int,
               ray_address: str | None, progress: bool) -> RungCard:
    agents = [spec] + [rung.spec] * (table.players - 1)
    rung_name = f"ladder:{short_name(rung.spec)}"
    names = [name] + [rung_name if seat == 1 else f"{rung_name}#{seat}" for seat in range(1, table.players)]
    per_deal = len(seatings(len(agents), table.rules))
    result = run_tournament(agents, table.rules, deals * per_deal, table.seed, workers=workers, names=names,
                            engine="auto", ray_address=ray_address, progress=progress)
    if result.error:
        raise BenchmarkError(f"{PROTOCOL}: {_with_deal(result.error, table, deals)} (rung {rung.spec!r})")
    if result.interrupted:
        raise KeyboardInterrupt
    return RungCard(rung, result.engine, result.games, result.elapsed_s)


GAME_SEED = re.compile(r"game seed (\d+)")


def _with_deal(error: str, table: TableSet, deals: int) -> str:
    """The tournament's error with the protocol's deal number beside the game seed it names."""
    found = GAME_SEED.search(error)
    seeds = table.deal_seeds(deals)
    if found is None or int(found.group(1)) not in seeds:
        return error
    deal = seeds.index(int(found.group(1)))
    return error.replace(found.group(0), f"deal {deal} of the {table.players}-player set, {found.group(0)}", 1)


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its finished worker processes (Ray's tasks are not counted)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure_anchors(players: int, deals: int, rounds: int = 50) -> dict[str, float]:
    """How the anchors of :data:`TABLE_SETS` were found: every rung plays the protocol (the first ``deals`` deals)
    against the whole ladder, itself included (:func:`ladder_cards`); then :func:`fixed_point_anchors`.
    Returns each rung's anchor, to one decimal."""
    return fixed_point_anchors(ladder_cards(players, deals), rounds)


def ladder_cards(players: int, deals: int) -> dict[str, list[RungCard]]:
    """Each rung's games against every rung of the ladder on the first ``deals`` deals of the table set."""
    table = table_set(players)
    return {rung.spec: [_play_rung(rung.spec, short_name(rung.spec), other, table, deals, 1, None, False)
                        for other in table.ladder] for rung in table.ladder}


def fixed_point_anchors(played: dict[str, list[RungCard]], rounds: int) -> dict[str, float]:
    """From anchors all 25, ``rounds`` times over: each rung's anchor becomes its own rating against the ladder
    (:func:`rating`), all shifted together so that they average 25 (the ratings alone drift as a whole). At
    the fixed point a rung benchmarked by the protocol rates at its anchor, up to that common shift."""
    anchors = {spec: 25.0 for spec in played}
    for _ in range(rounds):
        rated = {spec: rating([dataclasses.replace(card, rung=Rung(card.rung.spec, anchors[card.rung.spec]))
                               for card in cards])["mu"] for spec, cards in played.items()}
        shift = ANCHOR_MEAN - sum(rated.values()) / len(rated)
        anchors = {spec: mu + shift for spec, mu in rated.items()}
    return {spec: round(mu, 1) for spec, mu in anchors.items()}
