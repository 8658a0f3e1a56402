"""The schedule of a tournament: which games are played, with which deal, seats and seeds.

How seats are filled
    A *unit* is a seat in singles and a team in partners (partners sit opposite each other,
    so an agent assigned to a team plays both of its seats). A *lineup* gives every unit an
    agent:

    - as many agents as units: one lineup, every agent once;
    - more agents than units: every combination of agents (so with 2 players, every pairing);
    - fewer agents than units: the agents repeated in turn, one lineup per starting agent
      (``planner greedy`` at 4 seats: planner, greedy, planner, greedy and greedy, planner,
      greedy, planner), so every agent holds as many seats as every other.

    Every lineup is played in every rotation (unit ``k`` gets the lineup's agent ``k + r``), so
    each agent sits in each position equally often. Rotations keep the order around the table:
    at (net, planner, greedy, greedy) the network always plays just before the planner and just
    after a greedy seat, and at more than two units who sits next to whom is worth more than
    the seat. ``seat_orders="all"`` plays every distinct order of each lineup's agents instead
    (every permutation, so the rotations too, each once): 12 seatings for net, planner, greedy,
    greedy at four seats, 24 for four distinct agents.

Duplicate deals (default)
    A *deal* is one game seed, so one shuffle and one dealer. With duplicate deals every deal is
    played by every lineup in every rotation: every agent gets every seat with the same cards,
    and luck of the deal cancels out of the comparison. Without (``duplicate=False``) every game
    gets its own deal, with the same balanced schedule of lineups and rotations. The number of
    games is rounded up to whole schedules (lineups x rotations).

Seeds
    Deal ``d`` of a tournament with seed ``S`` uses game seed ``SeedSequence(S, spawn_key=(d,))``;
    the policy in seat ``s`` of game ``i`` is reset with ``SeedSequence(S, spawn_key=(i, s, 1))``
    (:func:`derived_seed`, 63 bits). Results do not depend on the number of workers.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

from skipbo_env.rules import Rules
from skipbo_env.seeds import derived_seed

SEED_DERIVATION = {
    "python": "game seed of deal d: SeedSequence(seed, spawn_key=(d,)); policy seed of seat s in game i: "
              "SeedSequence(seed, spawn_key=(i, s, 1)); 63 bits each",
    "vector": "game seed of deal d: SeedSequence(seed, spawn_key=(d,)), 63 bits (the same deals as the python "
              "engine); the kernel bot in seat s of game i draws from default_rng(SeedSequence(seed, "
              "spawn_key=(i, s, 1))), as on the python engine; a sampling network of agent a from "
              "SeedSequence(seed, spawn_key=(a, 2))",
}
SEATING_RULE = (
    "seatings lists the agent in every seat for each game of one set; with duplicate deals every deal is "
    "played once in each. Units are seats (teams in partners); as many agents as units: one lineup; more: "
    "every combination; fewer: the agents repeated in turn, one lineup per starting agent; each lineup in "
    "every rotation (seat_orders 'rotations') or in every distinct order of its agents (seat_orders 'all')"
)
SEAT_ORDERS = ("rotations", "all")
"""How a lineup is seated: its rotations only (the default), or every distinct order of its agents."""
POLICY_KEY = 1
"""The last key of a seat's policy seed: ``derived_seed(seed, game, seat, POLICY_KEY)``."""
NETWORK_KEY = 2
"""The last key of a sampling network's seed on the vector engine: ``derived_seed(seed, agent, NETWORK_KEY)``."""


@dataclasses.dataclass(frozen=True)
class GameSpec:
    """One game to play: its number, its deal, its seed and the agent (index) in every seat."""

    index: int
    deal: int
    seed: int
    seating: tuple[int, ...]
    policy_seeds: tuple[int, ...]


def lineups(num_agents: int, num_units: int) -> list[tuple[int, ...]]:
    """The agent (index) for every unit (seat, or team in partners) of each lineup; see the module doc."""
    if num_agents < 1:
        raise ValueError("a tournament needs at least one agent")
    if num_agents == num_units:
        return [tuple(range(num_agents))]
    if num_agents > num_units:
        return list(itertools.combinations(range(num_agents), num_units))
    return [tuple((start + k) % num_agents for k in range(num_units)) for start in range(num_agents)]


def unit_orders(lineup: tuple[int, ...], seat_orders: str) -> list[tuple[int, ...]]:
    """The agent of every unit in each seating of ``lineup``: its rotations, or every distinct permutation (the
    lineup's own order first)."""
    if seat_orders not in SEAT_ORDERS:
        raise ValueError(f"seat_orders={seat_orders!r} is not allowed: use one of {', '.join(SEAT_ORDERS)}")
    units = len(lineup)
    if seat_orders == "rotations":
        return [tuple(lineup[(unit + rotation) % units] for unit in range(units)) for rotation in range(units)]
    return list(dict.fromkeys(itertools.permutations(lineup)))


def seatings(num_agents: int, rules: Rules, seat_orders: str = "rotations") -> list[tuple[int, ...]]:
    """Every lineup in every rotation, or every distinct order of every lineup (``seat_orders="all"``, each order
    once), as the agent index of every seat: one duplicate set."""
    by_units = [order for lineup in lineups(num_agents, rules.num_teams) for order in unit_orders(lineup, seat_orders)]
    if seat_orders == "all":
        by_units = list(dict.fromkeys(by_units))
    return [tuple(by_unit[rules.team_of(seat)] for seat in range(rules.num_players)) for by_unit in by_units]


def scheduled_games(num_agents: int, rules: Rules, games: int, seat_orders: str = "rotations") -> int:
    """How many games :func:`schedule` plays for ``games``: rounded up to whole duplicate sets."""
    one_set = len(seatings(num_agents, rules, seat_orders))
    return math.ceil(games / one_set) * one_set


def schedule(num_agents: int, rules: Rules, games: int, seed: int, duplicate: bool = True,
             seat_orders: str = "rotations") -> list[GameSpec]:
    """The games of a tournament, rounded up to whole duplicate sets (see the module docstring)."""
    if not isinstance(games, int) or games < 1:
        raise ValueError(f"games={games!r} is not allowed: use an integer >= 1")
    one_set = seatings(num_agents, rules, seat_orders)
    specs = []
    for index in range(scheduled_games(num_agents, rules, games, seat_orders)):
        deal = index // len(one_set) if duplicate else index
        seating = one_set[index % len(one_set)]
        policy_seeds = tuple(derived_seed(seed, index, seat, POLICY_KEY) for seat in range(rules.num_players))
        specs.append(GameSpec(index, deal, derived_seed(seed, deal), seating, policy_seeds))
    return specs
