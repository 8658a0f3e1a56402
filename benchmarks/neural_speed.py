"""Neural bot speed: valued positions per CPU second of its search, and network self-play hands per CPU second.

    python benchmarks/neural_speed.py [--model neural-2p] [--hands 200] [--batch 50] [--stock-size 30] [--seed 0]
    python benchmarks/neural_speed.py --tiny      # a few small hands: seconds (what CI runs)
    python benchmarks/neural_speed.py --hands 8 --residual-hands 32 --seed 1000   # docs/research-log.md's residual figures

The network (``--model``: a shipped name or a model file) plays every seat of ``--hands`` hands against
itself on the batched engine (``skipbo_env.vector``, one thread), ``--batch`` hands at a time, each batch
played to its end; hand ``k`` is the deal of seed ``seed + k``. Every decision goes through
``agents.batched.neural.decide_rows_valued``, which also says how many positions (the search's stops and
the turn ends of the discards) the network valued for it.

Printed: the positions valued per CPU second of the bot's kernel and the microseconds a decision; the CPU
milliseconds a hand takes, the bot's decisions alone and with the engine's steps and observations; and the
self-play hands per CPU second.

Then the residual bot (``td.start: teacher``, :mod:`agents.batched.residual`: the teacher's search, each stop
corrected by a network ``r`` of ``td_teacher_2p``'s size, :data:`RESIDUAL_HIDDEN`) plays every seat of
``--residual-hands`` two-player hands (deals ``seed``, ``seed + 1``, ...), all at once: the CPU milliseconds a
hand of its decisions with ``r`` = 0 (where training starts: the teacher's moves) and with a correction (its
layers PyTorch's initialisation and an output layer drawn with standard deviation :data:`RANDOM_OUTPUT`, seeded by
``--seed``), over every stop, over the teacher's best :data:`SEARCH_TOP` stops, and over those with the correction
bounded (``td.correction_bound`` :data:`CORRECTION_BOUND`: stops and discards it cannot lift to the best are not
valued). Each then plays the same hands one at a time on the rules engine, loaded from a model file through
``agents.load_policy``: the CPU milliseconds of ``act`` a decision (the issue's limit: 5 ms). CPU time is this process's (``time.process_time``), so a busy machine
slows the figures less than wall time would; the load averages before and after are printed.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
import time

import numpy as np

import torch

from agents.batched.neural import decide_rows_valued
from agents.neural import SHIPPED_MODELS, read_model, model_path
from agents.loading import load_policy
from agents.batched.residual import BOUND
from agents.residual import ResidualBot, residual_dict
from skipbo_cli.arguments import bounded_int
from skipbo_cli.script import MAX_COUNT, ScriptParser, batch, count, run
from skipbo_env.files import write_json_atomically
from skipbo_env.provenance import header
from skipbo_env.encoding import observe
from skipbo_env.game import Game
from skipbo_env.rules import Rules
from skipbo_env.vector import VectorGame
from training.td.residual import CORRECTION_UNIT, ResidualNet, kernel_model

TINY = {"hands": 4, "batch": 4, "stock_size": 5, "residual_hands": 2}
"""``--tiny``: a few short hands (seconds once the kernels are compiled)."""
MAX_SEED = 2 ** 62
RESIDUAL_HIDDEN = (128, 32)
"""``r``'s hidden layers in ``configs/td_teacher_2p.yaml`` (``td.hidden``)."""
SEARCH_TOP = 8
"""``td.search_top`` in ``configs/td_teacher_2p.yaml``: the teacher's best stops of a decision ``r`` ranks."""
RANDOM_OUTPUT = 0.05
"""The standard deviation of the timed correction's output weights (its bias: a fifth of it)."""
CORRECTION_BOUND = 0.5
"""``td.correction_bound`` of the bounded timed bot (the teacher's units; the bounded teacher-start branch's)."""


def self_play(network, rules: Rules, hands: int, batch: int, seed: int) -> dict:
    """Play ``hands`` hands of ``network`` against itself, ``batch`` at a time; the counts and CPU seconds."""
    net = network.arrays
    totals = {"hands": 0, "decisions": 0, "choices": 0, "valued": 0, "bot_cpu": 0.0, "loop_cpu": 0.0}
    loop_start = time.process_time()
    while totals["hands"] < hands:
        size = min(batch, hands - totals["hands"])
        engine = VectorGame(rules, size, seed=seed + totals["hands"], auto_reset=False, observations=True,
                            threads=1)
        actions = np.empty(size, dtype=np.int64)
        valued = np.empty(size, dtype=np.int64)
        while True:
            rows = np.flatnonzero(~engine.over)
            if not len(rows):
                break
            observations, masks = engine.obs[rows], engine.action_mask[rows]
            start = time.process_time()
            decide_rows_valued(observations, masks, net, actions[:len(rows)], valued[:len(rows)])
            totals["bot_cpu"] += time.process_time() - start
            totals["decisions"] += len(rows)
            totals["choices"] += int((masks.sum(axis=1) > 1).sum())
            totals["valued"] += int(valued[:len(rows)].sum())
            engine.step_rows(rows, actions[:len(rows)])
        engine.close()
        totals["hands"] += size
    totals["loop_cpu"] = time.process_time() - loop_start
    return totals


def residual_bots(seed: int) -> dict[str, ResidualBot]:
    """The timed residual bots: ``r`` = 0, and a correction whose numbers are drawn with seed ``seed``."""
    torch.manual_seed(seed)
    corrected = ResidualNet(2, RESIDUAL_HIDDEN)
    with torch.no_grad():
        corrected.output.weight.normal_(0.0, RANDOM_OUTPUT)
        corrected.output.bias.fill_(RANDOM_OUTPUT / 5)
    network, scales = kernel_model(corrected)
    within = scales.copy()
    within[BOUND] = CORRECTION_BOUND / CORRECTION_UNIT
    return {"r = 0": ResidualBot.of(*kernel_model(ResidualNet(2, RESIDUAL_HIDDEN))),
            "r random": ResidualBot.of(network, scales),
            f"r random, best {SEARCH_TOP}": ResidualBot.of(network, scales, search_top=SEARCH_TOP),
            f"r random, best {SEARCH_TOP}, within ±{CORRECTION_BOUND:g}": ResidualBot.of(network, within, search_top=SEARCH_TOP)}


def residual_self_play(bot: ResidualBot, stock_size: int, hands: int, seed: int) -> dict:
    """Play ``hands`` two-player hands of ``bot`` against itself, all at once; the counts and the bot's CPU
    seconds."""
    engine = VectorGame(Rules(num_players=2, stock_size=stock_size), hands, seed=seed, auto_reset=False,
                        observations=True, threads=1)
    totals = {"hands": hands, "decisions": 0, "bot_cpu": 0.0}
    while True:
        rows = np.flatnonzero(~engine.over)
        if not len(rows):
            break
        observations = engine.obs[rows]
        start = time.process_time()
        actions = bot.act_rows(engine, rows, observations)
        totals["bot_cpu"] += time.process_time() - start
        totals["decisions"] += len(rows)
        engine.step_rows(rows, actions)
    engine.close()
    return totals


def rules_engine_play(bot: ResidualBot, stock_size: int, hands: int, seed: int) -> dict:
    """Play ``hands`` two-player hands on the rules engine (deals ``seed``, ``seed + 1``, ...), every seat ``bot``'s
    model loaded from a model file through ``agents.load_policy``; the decisions and the CPU seconds of ``act``."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.json")
        write_json_atomically(path, residual_dict(bot.network, bot.scales, bot.search_top))
        player = load_policy(f"residual:model={path}")
    totals = {"decisions": 0, "act_cpu": 0.0}
    for hand in range(hands):
        game = Game.new(Rules(num_players=2, stock_size=stock_size), seed=seed + hand)
        while not game.is_over:
            observation = observe(game, game.current_seat)
            start = time.process_time()
            action = player.act(observation)
            totals["act_cpu"] += time.process_time() - start
            totals["decisions"] += 1
            game.step(action)
    return totals


def report(totals: dict) -> list[str]:
    """The lines of the figures of :func:`self_play`'s ``totals``."""
    hands, bot, loop = totals["hands"], totals["bot_cpu"], totals["loop_cpu"]
    valued, decisions = totals["valued"], totals["decisions"]
    return [
        f"search: {valued / bot:,.0f} valued positions per CPU second ({1e6 * bot / valued:.2f} us each; "
        f"{valued:,} positions, {valued / max(totals['choices'], 1):.1f} per decision with a choice)",
        f"decisions: {decisions:,} ({decisions / hands:.0f} a hand, {totals['choices']:,} with a choice), "
        f"{1e6 * bot / decisions:.1f} us of CPU each",
        f"self-play: {hands} hands, {1e3 * bot / hands:.1f} ms of CPU a hand in the bot's decisions, "
        f"{1e3 * loop / hands:.1f} ms with the engine: {hands / loop:.1f} hands per CPU second",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="neural-2p",
                        help=f"a shipped network ({', '.join(SHIPPED_MODELS)}) or a model file (default neural-2p)")
    parser.add_argument("--hands", type=count, default=200, help="self-play hands timed (default 200)")
    parser.add_argument("--batch", type=batch, default=50, help="hands played at a time (default 50)")
    parser.add_argument("--stock-size", type=int, default=30, help="stockpile cards a seat (default 30)")
    parser.add_argument("--seed", type=int, default=0, help="the first hand's deal (default 0)")
    parser.add_argument("--residual-hands", type=bounded_int(0, MAX_COUNT), default=32,
                        help="two-player hands the residual bot is timed on, at r = 0 and with a correction "
                             "(default 32; 0: none)")
    parser.add_argument("--tiny", action="store_true",
                        help=f"{TINY['hands']} hands of {TINY['stock_size']} stockpile cards (seconds)")
    args = parser.parse_args(argv)
    if args.tiny:
        args.hands, args.batch, args.stock_size = TINY["hands"], TINY["batch"], TINY["stock_size"]
        args.residual_hands = TINY["residual_hands"]
    if not 0 <= args.seed < MAX_SEED:
        parser.error(f"--seed {args.seed} is not allowed: use an integer from 0 to {MAX_SEED - 1}")
    try:
        network = read_model(model_path(args.model))
        rules = Rules(num_players=network.num_players, stock_size=args.stock_size)
    except ValueError as error:
        parser.error(str(error).splitlines()[0])
    command = " ".join(["python", "benchmarks/neural_speed.py",
                        *map(shlex.quote, argv if argv is not None else sys.argv[1:])])
    print(header(command, args.seed), flush=True)
    print(f"model {args.model} ({network.num_players} seats, hidden {list(network.hidden)}); rules "
          f"{rules.to_dict()}; {args.hands} hands, {args.batch} at a time, one thread", flush=True)
    start = time.process_time()
    self_play(network, rules, 1, 1, args.seed)  # compiles the kernels (or loads them from numba's cache)
    print(f"compile or load, and one hand: {time.process_time() - start:.1f} s of CPU", flush=True)
    for line in report(self_play(network, rules, args.hands, args.batch, args.seed)):
        print(line, flush=True)
    if args.residual_hands:
        print(f"residual bot: r {list(RESIDUAL_HIDDEN)}, two players, {args.stock_size}-card stockpiles, "
              f"{args.residual_hands} hands at once, one thread", flush=True)
        for label, bot in residual_bots(args.seed).items():
            start = time.process_time()
            residual_self_play(bot, args.stock_size, 1, args.seed)  # compiles or loads its kernels
            compiled = time.process_time() - start
            totals = residual_self_play(bot, args.stock_size, args.residual_hands, args.seed)
            print(f"residual, {label}: {1e3 * totals['bot_cpu'] / totals['hands']:.1f} ms of CPU a hand in the "
                  f"bot's decisions ({totals['decisions'] / totals['hands']:.0f} decisions a hand; compile or "
                  f"load, and one hand: {compiled:.1f} s)", flush=True)
            rules_engine_play(bot, args.stock_size, 1, args.seed)  # compiles or loads the twin's kernels
            played = rules_engine_play(bot, args.stock_size, args.residual_hands, args.seed)
            print(f"residual, {label}, rules engine (agents.load_policy, act): "
                  f"{1e3 * played['act_cpu'] / played['decisions']:.3f} ms of CPU a decision "
                  f"({played['decisions']:,} decisions)", flush=True)
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
