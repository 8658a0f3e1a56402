"""Every kernel bot of the registry against its class: the same moves, draw for draw, in the positions of hands the
class played on the rules engine.

For each line of ``agents.registry.REGISTRY`` that names a kernel, instances of the class (built by
``agents.load_policy`` from the specs of the kernel's variants: the bot's name, switch masks, the shipped players its
kernel plays) play whole hands at 2, 3 and 4 seats, each seat one variant. At each decision the position is copied
into a batched record (``VectorGame.set_game``) and the acting seat's generator into the kernel's stream of that
seat; the kernel of that variant's code (``agents.batched.bots.bot_actions``) must pick the class's action and leave
the generator where the class left it. The test reads the registry: a new kernel bot is checked without a change here.
"""

from __future__ import annotations

import inspect
from collections import Counter

import numpy as np
import pytest

from agents.batched import bots
from agents.loading import SHIPPED, load_policy
from agents.policy import reset_policy
from agents.registry import REGISTRY
from skipbo_env import Rules
from skipbo_env.encoding import observe
from skipbo_env.game import Game
from skipbo_env.vector import pcg
from skipbo_env.vector.engine import VectorGame

KERNEL_LINES = [bot for bot in REGISTRY if bot.kernel is not None]
TABLES = (
    Rules(num_players=2, stock_size=8),
    Rules(num_players=3, stock_size=6),
    Rules(num_players=4, partners=True, stock_size=5),
)
DECISIONS = 340
"""Decisions compared at each table (at least 1,020 a bot)."""
SAMPLED_MASKS = 4
"""Switch masks drawn at random, beside the default, each switch turned the other way and all of them turned."""


def switch_spec(bot, switches: dict) -> str:
    return f"{bot.name}:" + ",".join(f"{name}={'true' if on else 'false'}" for name, on in switches.items())


def variant_specs(bot) -> list[str]:
    """Specs of the bot's kernel variants, one per code: its name; with switches, each turned the other way, all
    turned and :data:`SAMPLED_MASKS` masks drawn at random; every shipped player its kernel plays as this bot."""
    specs = [bot.name]
    if bot.switches:
        parameters = inspect.signature(bot.policy).parameters
        defaults = {name: bool(parameters[name].default) for name in bot.switches}
        specs += [switch_spec(bot, {name: not defaults[name]}) for name in bot.switches]
        specs.append(switch_spec(bot, {name: not on for name, on in defaults.items()}))
        rng = np.random.default_rng(len(bot.switches))
        specs += [switch_spec(bot, dict(zip(bot.switches, (bool(b) for b in rng.integers(0, 2, len(bot.switches))))))
                  for _ in range(SAMPLED_MASKS)]
    specs += [name for name in SHIPPED if (code := bots.kernel_bot_code(name)) is not None
              and bots.kernel_bot_of(code)[0] == bot.name]
    by_code = {}
    for spec in specs:
        by_code.setdefault(bots.kernel_bot_code(spec), spec)
    return list(by_code.values())


def generator_words(policy) -> np.ndarray:
    """The kernel's stream (``uint64[6]``) in the state of the policy's generator."""
    state = policy.rng.bit_generator.state
    words = np.zeros(pcg.GENERATOR_WORDS, dtype=np.uint64)
    words[:4] = pcg.from_numpy_state(state)
    words[4], words[5] = state["has_uint32"], state["uinteger"]
    return words


def compare_table(bot, rules: Rules, specs: list[str], coverage: Counter) -> list:
    """Hands the class plays at ``rules`` (seat ``s`` of hand ``h`` plays ``specs[(h * n + s) % len(specs)]``) until
    :data:`DECISIONS` decisions are compared; returns the mismatches."""
    n = rules.num_players
    players = [[load_policy(spec, seed=seat) for seat in range(n)] for spec in specs]
    codes = [bots.kernel_bot_code(spec) for spec in specs]
    assert all(type(player) is bot.policy for row in players for player in row)
    engine = VectorGame(rules, 1, 0, observations=False, threads=1)
    streams = bots.new_streams(1)
    rows, got = np.zeros(1, dtype=np.int64), np.empty(1, dtype=np.int64)
    mismatches, decisions, hand = [], 0, 0
    while decisions < DECISIONS:
        game = Game.new(rules, seed=1000 * n + hand)
        seating = [(hand * n + seat) % len(specs) for seat in range(n)]
        for seat, variant in enumerate(seating):
            reset_policy(players[variant][seat], 7 * hand + seat)
        while not game.is_over and decisions < DECISIONS:
            seat = game.current_seat
            variant = seating[seat]
            player = players[variant][seat]
            streams[0, seat] = generator_words(player)
            engine.set_game(0, game)
            expected = int(player.act(observe(game, seat)))
            bots.bot_actions(engine.games, engine.action_mask, engine.cfg, rows, streams, codes[variant], got)
            apart = not np.array_equal(streams[0, seat], generator_words(player))
            if int(got[0]) != expected or apart:
                mismatches.append((specs[variant], seat, int(got[0]), expected, apart, game.to_dict()))
            coverage[specs[variant]] += 1
            coverage["choices"] += len(game.legal_actions()) > 1
            decisions += 1
            game.step(expected)
        coverage["hands ended"] += game.is_over
        hand += 1
    return mismatches


@pytest.mark.parametrize("bot", KERNEL_LINES, ids=[bot.name for bot in KERNEL_LINES])
def test_each_kernel_bot_plays_the_moves_of_its_class_in_the_hands_its_class_played(bot):
    specs = variant_specs(bot)
    coverage: Counter = Counter()
    mismatches = []
    for rules in TABLES:
        mismatches += compare_table(bot, rules, specs, coverage)
    decisions = sum(coverage[spec] for spec in specs)
    assert not mismatches, f"{len(mismatches)} of {decisions} decisions differ; first: {mismatches[0]}"
    assert decisions >= 1000 and all(coverage[spec] for spec in specs), coverage
    assert coverage["choices"] > decisions // 2 and coverage["hands ended"] >= len(TABLES)
