"""Batched-engine speed: steps per second of ``skipbo_env.vector`` and of its SB3 VecEnv.

    python benchmarks/vector_speed.py [--seconds 2] [--threads N] [--seed 0] [--players 2 3 4 5 6]
                                      [--training SECONDS] [--verify HANDS] [--json]

A step is one action in one game, with the new legal-action mask and the new observation vector
(``encode_observation`` of the seat to act) written for that game; the action is the batched
``random`` bot's choice, made in the kernels (on the engine's threads, as the seats its kernel bots
play are) and timed with the step. Hands that end are dealt
again inside the timing. Measured for batch sizes 1, 64, 1024 and 4096 (two players), then the
time per step for each table size at batch 1024 and 4096.

VecEnv: ``SkipBoVecEnv`` with ``greedy`` opponents, 1024 games, the learner's action drawn
uniformly from ``action_masks()`` in numpy. Its rate counts learner steps (what SB3 counts);
the opponents' actions taken meanwhile are printed too.

``--training SECONDS``: MaskablePPO learning (MlpPolicy 64x64, n_steps 128) for about that long
on the AEC path (``SingleAgentEnv`` against ``agents`` greedy in a ``DummyVecEnv`` of 8) and on
this one (``SkipBoVecEnv`` of 64 games, kernel greedy); environment steps per second of each.

``--verify HANDS``: the differential check of ``skipbo_env.vector.check`` over every table
size and variant, ``HANDS`` hands in all, before the timings.

Every rate is printed per second of wall-clock time and per second of this process's CPU time
(all threads), which other programs on a shared machine do not take; the load averages before
and after are printed. The engine table adds ``idle cores``: the CPU-time rate times the
kernel threads, what that many idle cores would give if the threads kept them busy (on a
loaded machine a CPU second does less, so this errs low). With ``--json`` the last line is
``{"steps_per_s": {"1": ..., "64": ..., "1024": ..., "4096": ...}, "vecenv_greedy_steps_per_s": ...}``
plus the other figures.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time

import numba
import numpy as np

from skipbo_cli.arguments import bounded_int, seconds, seed
from skipbo_cli.script import MAX_COUNT, ScriptParser, parallel, positive_seconds, run, table_size
import skipbo_env
from skipbo_env import Rules
from agents.batched import bots
from agents.batched.seating import batch_opponents
from skipbo_env.envs.vec_env import SkipBoVecEnv
from skipbo_env.vector import VectorGame
from agents.batched.bots import mixed_chooser
from skipbo_env.vector.check import differential_run
from agents import load_policy
from skipbo_env import SingleAgentEnv

BATCH_SIZES = (1, 64, 1024, 4096)
VERIFY_VARIANTS = (
    dict(), dict(stock_size=40), dict(num_players=3, stock_size=10), dict(num_players=4, stock_size=10),
    dict(num_players=4, partners=True, stock_size=10), dict(num_players=4, partners=True, team_win="either"),
    dict(num_players=6, partners=True, team_stock="shared", stock_size=8), dict(num_players=5, exhausted_draw="draw"),
    dict(num_players=6, stock_size=5), dict(max_turns=50), dict(decks=2, stock_size=40),
)


class Clock:
    """Wall-clock and CPU time since creation."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def rates(self, count: int) -> tuple[float, float]:
        return count / (time.perf_counter() - self.wall), count / max(time.process_time() - self.cpu, 1e-9)


def measure_engine(rules: Rules, batch_size: int, seconds: float, seed: int, threads: int | None) -> dict:
    engine = VectorGame(rules, batch_size, seed, threads=threads)
    rows = np.arange(batch_size)
    streams = bots.seed_streams(np.random.default_rng(seed), batch_size)
    actions = np.empty(batch_size, dtype=np.int64)

    def choose():  # the kernel bot's choices, the rows split among the engine's threads as its own bots are
        engine.run_rows(bots.random_actions, rows, (engine.games, engine.action_mask, streams), (actions,))

    for _ in range(3):  # warm-up (compiled code is cached on disk; this loads it)
        choose()
        engine.step(actions)
    steps = hands = 0
    clock = Clock()
    while time.perf_counter() - clock.wall < seconds:
        for _ in range(max(1, 4096 // batch_size)):
            choose()
            hands += engine.step(actions).num_hands
            steps += batch_size
    wall, cpu = clock.rates(steps)
    return {"steps_per_s": wall, "steps_per_cpu_s": cpu, "ns_per_step_cpu": 1e9 / cpu, "hands": hands,
            "threads": engine.threads}


def measure_vecenv(rules: Rules, num_envs: int, seconds: float, seed: int, threads: int | None) -> dict:
    env = SkipBoVecEnv(rules, num_envs=num_envs, opponents=batch_opponents("greedy"), seed=seed, threads=threads)
    env.reset()
    rng = np.random.default_rng(seed)
    env.step(_uniform_legal(env.action_masks(), rng))
    start_actions = env.seating.actions_taken
    steps = episodes = 0
    clock = Clock()
    while time.perf_counter() - clock.wall < seconds:
        _, _, dones, _ = env.step(_uniform_legal(env.action_masks(), rng))
        steps += num_envs
        episodes += int(dones.sum())
    wall, cpu = clock.rates(steps)
    opponent_actions = env.seating.actions_taken - start_actions
    env.close()
    return {"steps_per_s": wall, "steps_per_cpu_s": cpu, "episodes": episodes,
            "opponent_actions_per_learner_step": opponent_actions / max(steps, 1)}


def _uniform_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.argmax(rng.random(masks.shape) * masks, axis=1)


def measure_training(seconds: float, seed: int, threads: int | None) -> dict:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    def aec_env():
        return SingleAgentEnv(opponents=load_policy("greedy"), rules=Rules())

    setups = {
        "aec_single_agent_x8": lambda: DummyVecEnv([aec_env] * 8),
        "vector_vecenv_x64": lambda: SkipBoVecEnv(Rules(), num_envs=64, opponents=batch_opponents("greedy"), seed=seed, threads=threads),
    }
    results = {}
    for name, make in setups.items():
        env = make()
        model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=256, n_epochs=4, seed=seed,
                            policy_kwargs={"net_arch": [64, 64]})
        chunk = 128 * env.num_envs
        steps = 0
        clock = Clock()
        while time.perf_counter() - clock.wall < seconds:
            model.learn(chunk, reset_num_timesteps=False)
            steps += chunk
        wall, cpu = clock.rates(steps)
        results[name] = {"env_steps_per_s": wall, "env_steps_per_cpu_s": cpu, "steps": steps}
        env.close()
    return results


def verify(hands: int, seed: int) -> dict:
    per_variant = max(1, hands // len(VERIFY_VARIANTS))
    totals: dict = {}
    for settings in VERIFY_VARIANTS:
        coverage = differential_run(Rules(**settings), mixed_chooser(32, 0.6), hands=per_variant, seed=seed, batch_size=32)
        for key, value in coverage.items():
            totals[key] = totals.get(key, 0) + value
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=positive_seconds, default=2.0, help="time per measurement")
    parser.add_argument("--threads", type=parallel, default=None, help="kernel threads (default: the CPU count)")
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--players", type=table_size, nargs="+", default=[2, 3, 4, 5, 6])
    parser.add_argument("--training", type=seconds, default=0.0, metavar="SECONDS",
                        help="also measure MaskablePPO learning throughput, about this long per path")
    parser.add_argument("--verify", type=bounded_int(0, MAX_COUNT), default=0, metavar="HANDS",
                        help="first run the differential check over this many hands")
    parser.add_argument("--json", action="store_true", help="end with one line of JSON")
    args = parser.parse_args(argv)

    print(f"command: python {' '.join([os.path.relpath(sys.argv[0])] + (argv if argv is not None else sys.argv[1:]))}")
    print(f"seed {args.seed}; skipbo_env {skipbo_env.__version__}, numpy {np.__version__}, numba {numba.__version__}, "
          f"python {platform.python_version()}, {os.cpu_count()} CPUs; load average {os.getloadavg()}")
    report: dict = {}
    if args.verify:
        clock = Clock()
        coverage = verify(args.verify, args.seed)
        print(f"differential check: {coverage['hands']} hands, {coverage['steps']} game-steps identical "
              f"(states, masks, observations) in {time.perf_counter() - clock.wall:.1f} s; coverage {coverage}")
        report["verified"] = coverage

    print("\nengine (2 players, random bot actions, mask and observation every step)")
    print(f"{'batch':>6} {'steps/s':>12} {'steps/CPU-s':>12} {'ns/step (CPU)':>14} {'threads':>8} {'idle cores':>12}")
    engine = {}
    for batch_size in BATCH_SIZES:
        result = measure_engine(Rules(), batch_size, args.seconds, args.seed, args.threads)
        engine[str(batch_size)] = result
        print(f"{batch_size:>6} {result['steps_per_s']:>12,.0f} {result['steps_per_cpu_s']:>12,.0f} "
              f"{result['ns_per_step_cpu']:>14,.0f} {result['threads']:>8} "
              f"{result['steps_per_cpu_s'] * result['threads']:>12,.0f}")

    at_4096 = engine["4096"]
    print(f"issue 16's target, >= 2,000,000 steps/s at batch 4096 on two idle cores: "
          f"{at_4096['steps_per_cpu_s'] * at_4096['threads']:,.0f} estimated (steps per CPU-s x {at_4096['threads']} "
          f"threads), {at_4096['steps_per_s']:,.0f} measured wall-clock at load {os.getloadavg()[0]:.1f}")

    print("\ntime per step by table size (CPU ns per step; steps/s wall)")
    by_players = {}
    for players in args.players:
        row = {}
        for batch_size in (1024, 4096):
            result = measure_engine(Rules(num_players=players), batch_size, args.seconds / 2, args.seed, args.threads)
            row[str(batch_size)] = result
        by_players[str(players)] = row
        print(f"{players} players: " + "   ".join(
            f"batch {b}: {r['ns_per_step_cpu']:,.0f} ns, {r['steps_per_s']:,.0f}/s" for b, r in row.items()))

    vecenv = measure_vecenv(Rules(), 1024, args.seconds, args.seed, args.threads)
    print(f"\nSkipBoVecEnv, greedy opponents, 1024 games: {vecenv['steps_per_s']:,.0f} learner steps/s "
          f"({vecenv['steps_per_cpu_s']:,.0f} per CPU-s), {vecenv['opponent_actions_per_learner_step']:.2f} opponent "
          f"actions per learner step, {vecenv['episodes']} hands finished")

    training = {}
    if args.training:
        training = measure_training(args.training, args.seed, args.threads)
        print("\nMaskablePPO learning (MlpPolicy 64x64), environment steps per second:")
        for name, result in training.items():
            print(f"  {name}: {result['env_steps_per_s']:,.0f}/s ({result['env_steps_per_cpu_s']:,.0f} per CPU-s)")

    print(f"\nload average after: {os.getloadavg()}")
    if args.json:
        report.update({
            "steps_per_s": {size: result["steps_per_s"] for size, result in engine.items()},
            "steps_per_cpu_s": {size: result["steps_per_cpu_s"] for size, result in engine.items()},
            "vecenv_greedy_steps_per_s": vecenv["steps_per_s"],
            "vecenv_greedy_steps_per_cpu_s": vecenv["steps_per_cpu_s"],
            "ns_per_step_cpu_by_players": {p: {b: r["ns_per_step_cpu"] for b, r in row.items()}
                                           for p, row in by_players.items()},
            "training": training,
            "seed": args.seed,
            "threads": args.threads,
        })
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
