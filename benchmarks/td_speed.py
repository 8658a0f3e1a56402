"""The TD learner's speed: whole iterations (self-play and fit) a wall-second, by ``threads`` and ``td.chunk``.

    python benchmarks/td_speed.py [--config td_teacher_2p | --run RUN_DIR] [--iterations 4] [--threads 1 2]
                                  [--chunks 0 32] [--ray-workers N] [--seed 0] [--tiny]

Each cell builds the learner afresh, from ``--config`` (a shipped config or a YAML file, its ``seed`` set to
``--seed``: the network's start) or from the last checkpoint of the ``backend: td`` run ``--run`` (read only:
nothing is written), with that many threads (torch's and the self-play's) and that chunk (0: the iteration in one
part, the engine's kernels splitting its searches among the threads; else parts of that many hands played at once
on the threads: ``training.td.learner.TDRun.play``). It plays one iteration untimed (the kernels compiled or
loaded from numba's cache), then times ``--iterations`` more: hands a wall-second (what a run's progress is),
hands a CPU-second of all threads (what the machine spends) and the wall-clock gain over the first cell. Every
cell plays the same deals; cells with parts draw other explored moves than cells without, so their moves differ
where a draw differs. A thread count above the free cores measures the waiting; read the load lines. With
``--ray-workers N`` each chunk above 0 is timed once more with its parts as tasks of a Ray instance of N CPUs
started here (``ray.address=local``; Ray must be installed): processes, so no part waits on another's Python.
"""

from __future__ import annotations

import dataclasses
import io
import os
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skipbo_cli.arguments import bounded_int  # noqa: E402
from skipbo_cli.script import ScriptParser, count, run  # noqa: E402
from skipbo_env.provenance import header  # noqa: E402
from training.checkpoint import RunFolder  # noqa: E402
from training.config import load_config  # noqa: E402
from training.distributed import WorkPool  # noqa: E402

TINY = {"overrides": ["td.hands=8", "rules.stock_size=5"], "iterations": 1, "threads": [1, 2], "chunks": [0, 4]}
"""``--tiny``: one timed iteration of 8 five-card hands per cell (seconds once the kernels are compiled)."""
MAX_SEED = 2 ** 31
MAX_THREADS = 64


def learner_of(args, threads: int, chunk: int):
    """The learner of the cell: from the config or the run's last checkpoint, with ``threads`` and ``chunk``."""
    from training.td.learner import TDRun
    from training.td.trainer import TDTrainer

    folder = None if args.run is None else RunFolder.open(args.run)
    config = (load_config(args.config, [*args.overrides, f"seed={args.seed}"]) if folder is None
              else load_config(folder.config_path, args.overrides))
    if config.backend != "td":
        raise ValueError(f"{args.run or args.config} trains with backend {config.backend}: give a backend: td "
                         "config or run (td_teacher_2p, td_scratch_2p)")
    trainer = TDTrainer(config, folder, False, io.StringIO())
    learner = trainer.load()[0] if folder is not None else TDRun(trainer.learner_settings())
    learner.settings = dataclasses.replace(learner.settings, threads=threads, chunk=chunk)
    return learner


def timed_cell(args, threads: int, chunk: int, pool=None) -> dict:
    """``--iterations`` iterations of the cell's learner after one untimed (its parts on ``pool``, a
    ``training.distributed.WorkPool``, where given): the hands, wall and CPU seconds (the Ray tasks' among them)."""
    import torch

    torch.set_num_threads(threads)
    learner = learner_of(args, threads, chunk)
    learner.work_pool = pool
    learner.iterate()
    wall, cpu = time.perf_counter(), learner.cpu_seconds
    for _ in range(args.iterations):
        learner.iterate()
    return {"hands": args.iterations * learner.settings.hands, "wall": time.perf_counter() - wall,
            "cpu": learner.cpu_seconds - cpu}


def print_cell(label: str, cell: dict, iterations: int, first: float) -> None:
    rate = cell["hands"] / cell["wall"]
    print(f"{label}: {rate:.1f} hands a wall-second ({cell['wall'] / iterations:.2f} s an iteration), "
          f"{cell['hands'] / cell['cpu']:.1f} a CPU-second, x{rate / first:.2f} the first cell's; load "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--config", default="td_teacher_2p",
                        help="a shipped config's name or a YAML file with backend: td (default td_teacher_2p)")
    source.add_argument("--run", metavar="RUN_DIR", help="a backend: td run folder: time its last checkpoint")
    parser.add_argument("--iterations", type=count, default=4, help="timed iterations a cell (default 4)")
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), nargs="+", default=[1, 2],
                        help="the thread counts timed (default 1 2)")
    parser.add_argument("--chunks", type=bounded_int(0, 4096), nargs="+", default=[0, 32],
                        help="the td.chunk values timed (default 0 32)")
    parser.add_argument("--ray-workers", type=bounded_int(0, MAX_THREADS), default=0,
                        help="also time each chunk above 0 as tasks of a local Ray instance of this many CPUs "
                             "(default 0: no)")
    parser.add_argument("--seed", type=int, default=0, help="--config's seed: the network's start (default 0)")
    parser.add_argument("--tiny", action="store_true", help="one iteration of 8 five-card hands a cell (seconds)")
    args = parser.parse_args(argv)
    if not 0 <= args.seed < MAX_SEED:
        parser.error(f"--seed {args.seed} is not allowed: use an integer from 0 to {MAX_SEED - 1}")
    args.overrides = []
    if args.tiny:
        args.overrides, args.iterations = TINY["overrides"], TINY["iterations"]
        args.threads, args.chunks = TINY["threads"], TINY["chunks"]
    command = " ".join(["python", "benchmarks/td_speed.py",
                        *map(shlex.quote, argv if argv is not None else sys.argv[1:])])
    learner = learner_of(args, 1, 0)  # checks the config or the run before any timing
    print(header(command, args.seed), flush=True)
    settings = learner.settings
    print(f"learner: {args.run or args.config}, td.start {settings.start}, {settings.hands} hands an iteration, "
          f"{settings.stock_size}-card stockpiles, hidden {list(settings.hidden)}, {learner.hands_played:,} hands "
          f"played; {args.iterations} timed iterations a cell after one untimed", flush=True)
    first = None
    for threads in args.threads:
        for chunk in args.chunks:
            cell = timed_cell(args, threads, chunk)
            first = first or cell["hands"] / cell["wall"]
            print_cell(f"threads {threads}, chunk {chunk}", cell, args.iterations, first)
    if args.ray_workers:
        with WorkPool("local", args.ray_workers) as pool:
            for chunk in [chunk for chunk in args.chunks if 0 < chunk < settings.hands]:
                cell = timed_cell(args, 1, chunk, pool)
                print_cell(f"Ray tasks on {args.ray_workers} CPUs, chunk {chunk}", cell, args.iterations, first)
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
