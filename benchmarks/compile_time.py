"""How long the batched engine's numba kernels take to compile, as a fresh clone meets them.

Runs the same small workload in fresh Python processes: first with an empty numba cache (what a
fresh clone pays: every kernel compiled), then again with the cache that run left (what every
later run pays: the kernels loaded from disk). The workload builds a batch, steps it with the
kernel bots, builds observations and masks, for each table in ``--tables`` (one rule set per
deck count and table size, so extra specialisations show up as extra time). ``--engine-only`` steps
it with the first legal action instead: the engine's kernels without the bots' (whose one dispatch
kernel compiles every kernel bot at once, most of the cold time).

    python benchmarks/compile_time.py
    python benchmarks/compile_time.py --tables 2:1 2:2 4:1 --json
    python benchmarks/compile_time.py --tables 2:1 --engine-only      # what CI runs
"""

from __future__ import annotations

from argparse import RawDescriptionHelpFormatter
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skipbo_cli.arguments import flag_check  # noqa: E402
from skipbo_cli.script import ScriptParser, run  # noqa: E402
from skipbo_env.provenance import header  # noqa: E402
from skipbo_env.rules import MAX_DECKS, MAX_PLAYERS, MIN_PLAYERS  # noqa: E402

WORKLOAD = """
import sys, time
import numpy as np
start = time.perf_counter()
from skipbo_env import Rules
from skipbo_env.vector import VectorGame
from agents.batched.policies import KernelBot
from agents.batched.seating import Seating
for players, decks in {tables}:
    rules = Rules(num_players=players, decks=decks, stock_size=5)
    engine = VectorGame(rules, 8, seed=1, threads=1)
    rows = np.arange(8)
    if {engine_only}:
        engine.step(engine.action_mask.argmax(axis=1))
    else:
        seating = Seating(engine, [KernelBot("greedy"), KernelBot("random")])
        seating.assign(rows, np.array([[s % 2 for s in range(players)]] * 8))
        seating.advance(rows)
    engine.observe(rows)
print(time.perf_counter() - start)
"""


@flag_check
def table(text: str) -> tuple[int, int]:
    """``PLAYERS:DECKS`` as ``(players, decks)``: 2-6 players, 1 to ``MAX_DECKS`` decks."""
    players, colon, decks = text.partition(":")
    if colon and players.isdigit() and decks.isdigit() and MIN_PLAYERS <= int(players) <= MAX_PLAYERS \
            and 1 <= int(decks) <= MAX_DECKS:
        return int(players), int(decks)
    raise ValueError(f"{text!r} is not a table: use PLAYERS:DECKS, {MIN_PLAYERS}-{MAX_PLAYERS} players and 1-{MAX_DECKS} "
                     "decks, e.g. 2:1")


def run_once(tables, engine_only: bool, cache_dir: str) -> tuple[float, float]:
    """(seconds of the workload, CPU seconds of its whole process) with the numba cache ``cache_dir``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    code = WORKLOAD.format(tables=tables, engine_only=engine_only)
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT,
                         capture_output=True, text=True)
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"compile_time.py: the workload failed (exit {out.returncode}): {last}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return float(out.stdout.strip().splitlines()[-1]), cpu


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__, formatter_class=RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=table, nargs="+", default=[(2, 1), (4, 1), (2, 2)], metavar="PLAYERS:DECKS",
                        help="the tables the workload plays (default: 2:1 4:1 2:2)")
    parser.add_argument("--engine-only", action="store_true",
                        help="step with the first legal action instead of the kernel bots: the engine's kernels alone")
    parser.add_argument("--json", action="store_true", help="end with one line of JSON")
    args = parser.parse_args(argv)
    tables = args.tables
    names = [f"{players}:{decks}" for players, decks in tables]
    print(header("python " + " ".join([os.path.relpath(__file__, ROOT)] + (argv or sys.argv[1:])), seed=1))
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        wall = time.perf_counter()
        cold, cold_cpu = run_once(tables, args.engine_only, cache)
        warm, warm_cpu = run_once(tables, args.engine_only, cache)
        wall = time.perf_counter() - wall
    what = "the engine alone" if args.engine_only else "the engine and the kernel bots"
    print(f"tables {' '.join(names)}, {what}: cold cache {cold:.1f} s (compiling), warm cache {warm:.1f} s (loading); "
          f"both runs {wall:.1f} s of wall time including interpreter start; CPU time of the processes "
          f"{cold_cpu:.1f} s cold, {warm_cpu:.1f} s warm (the figure to compare on a shared machine)")
    if args.json:
        print(json.dumps({"cold_s": round(cold, 2), "warm_s": round(warm, 2), "cold_cpu_s": round(cold_cpu, 2),
                          "warm_cpu_s": round(warm_cpu, 2), "tables": names,
                          "engine_only": args.engine_only}))
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
