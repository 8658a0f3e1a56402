"""End-to-end training speed: masked PPO environment steps per second, as ``skipbo train`` runs it.

    python benchmarks/training_speed.py [--seconds 20] [--seed 0] [--paths vector dummy]
                                        [--mixes greedy planner snapshots] [--networks quickstart shipped]
                                        [--n-steps N] [--json]

Each cell is ``MaskablePPO.learn`` (sb3-contrib, one torch thread, the trainer's own environments and
opponent pool from ``training.sb3.trainer``) for about ``--seconds`` seconds: rollouts *and* updates,
counted in learner steps (what SB3 counts) per second of wall-clock time, from the start of the
second rollout (the first pays for numba compilation and warm-up).

- paths: ``vector``, the batched engine (``env.vec_env: vector``, configs/quickstart.yaml's
  ``env.num_envs`` hands, every opponent in the kernels or one batched forward pass);
  ``dummy``, the single-agent Gymnasium environments in a ``DummyVecEnv`` of 8, opponents asked
  game by game in Python.
- mixes: the opponent pool (``opponents.mix``) is ``greedy`` only, ``planner`` only, or
  ``snapshots`` only (one frozen copy of the learner, sampling).
- networks: ``quickstart`` (configs/quickstart.yaml's ``network.hidden``) and ``shipped`` (the
  network of agents/pretrained/ppo-2p.zip, read from its metadata); the PPO settings are
  configs/quickstart.yaml's, with ``ppo.n_steps`` 256 on the dummy path.

The first lines are ``skipbo_env.provenance.header`` (command, seed, versions, load). ``--json``
prints one last line ``{"steps_per_s": {"vector": {"greedy": ..., "planner": ..., "snapshots": ...},
"dummy": {...}}, "network": [...], ...}`` for the quickstart network (``"shipped"`` holds the
other network's table).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skipbo_cli.arguments import positive_int, seed  # noqa: E402
from skipbo_cli.script import ScriptParser, positive_seconds, run  # noqa: E402
from skipbo_env.provenance import header  # noqa: E402
from agents.saved_model import read_model  # noqa: E402
from training.config import load_config  # noqa: E402
from training.sb3.trainer import env_factory, vector_selfplay_env, learner_weights, limit_threads  # noqa: E402

QUICKSTART = ROOT / "configs" / "quickstart.yaml"
SHIPPED = ROOT / "agents" / "pretrained" / "ppo-2p.zip"
MIXES = ("greedy", "planner", "snapshots")
PATHS = ("vector", "dummy")
DUMMY_ENVS, DUMMY_STEPS = 8, 256


def shipped_hidden() -> list[int]:
    return list(read_model(SHIPPED)[1]["hidden"])


def cell_config(path: str, mix: str, hidden: list[int], seed: int, n_steps: int | None = None):
    overrides = [f"seed={seed}", f"opponents.mix={{{mix}: 1.0}}", f"network.hidden={json.dumps(hidden)}",
                 f"env.vec_env={path}", "pretrain.enabled=false"]
    if path == "dummy":
        overrides += [f"env.num_envs={DUMMY_ENVS}", f"ppo.n_steps={n_steps or DUMMY_STEPS}",
                      f"ppo.batch_size={min(1024, DUMMY_ENVS * (n_steps or DUMMY_STEPS))}"]
    elif n_steps:
        overrides += [f"ppo.n_steps={n_steps}"]
    return load_config(QUICKSTART, overrides)


def measure(path: str, mix: str, hidden: list[int], seconds: float, seed: int, n_steps: int | None = None) -> dict:
    """Learner steps per second of ``MaskablePPO.learn`` with the trainer's environments for one cell."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    from training.sb3.network import policy_kwargs
    config = cell_config(path, mix, hidden, seed, n_steps)
    rules = config.make_rules()
    limit_threads(config.threads)
    if path == "vector":
        env = VecMonitor(vector_selfplay_env(config, rules, seed))
    else:
        env = VecMonitor(DummyVecEnv([env_factory(config, rules, i, seed) for i in range(config.env.num_envs)]))
    ppo = config.ppo
    model = MaskablePPO("MlpPolicy", env, learning_rate=ppo.learning_rate, n_steps=ppo.n_steps,
                        batch_size=ppo.batch_size, n_epochs=ppo.n_epochs, gamma=ppo.gamma, clip_range=ppo.clip_range,
                        ent_coef=ppo.ent_coef, target_kl=ppo.target_kl, seed=seed, verbose=0,
                        policy_kwargs=policy_kwargs(config.network, rules.num_players))
    if mix == "snapshots":
        env.env_method("add_snapshot", learner_weights(model), 0)

    class Clock(BaseCallback):
        """Starts the clock at the second rollout; stops learning ``seconds`` later."""

        def __init__(self) -> None:
            super().__init__()
            self.rollouts, self.start, self.steps_at_start = 0, None, 0

        def _on_rollout_start(self) -> None:
            self.rollouts += 1
            if self.rollouts == 2:
                self.start, self.steps_at_start = time.perf_counter(), self.num_timesteps

        def _on_step(self) -> bool:
            return self.start is None or time.perf_counter() - self.start < seconds

    clock = Clock()
    model.learn(total_timesteps=10**9, callback=clock)
    elapsed = time.perf_counter() - clock.start
    env.close()
    steps = model.num_timesteps - clock.steps_at_start
    return {"steps_per_s": steps / elapsed, "steps": steps, "seconds": round(elapsed, 1),
            "rollouts": clock.rollouts - 1}


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=positive_seconds, default=20.0, help="measured seconds per cell (default 20)")
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS))
    parser.add_argument("--mixes", nargs="+", choices=MIXES, default=list(MIXES))
    parser.add_argument("--networks", nargs="+", choices=("quickstart", "shipped"), default=["quickstart", "shipped"])
    parser.add_argument("--n-steps", type=positive_int, default=None, metavar="N",
                        help=f"ppo.n_steps of every cell (default: the config's; {DUMMY_STEPS} on the dummy path)")
    parser.add_argument("--json", action="store_true", help="print one JSON line last")
    args = parser.parse_args(argv)
    print(header(" ".join(["python", *map(shlex.quote, sys.argv)]), args.seed), flush=True)
    networks = {"quickstart": list(load_config(QUICKSTART).network.hidden), "shipped": shipped_hidden()}
    tables: dict[str, dict] = {}
    for name in args.networks:
        hidden = networks[name]
        table = tables[name] = {path: {} for path in args.paths}
        for path in args.paths:
            for mix in args.mixes:
                result = measure(path, mix, hidden, args.seconds, args.seed, args.n_steps)
                table[path][mix] = result["steps_per_s"]
                print(f"network {name} {hidden}, {path:6s} path, opponents {mix:9s}: "
                      f"{result['steps_per_s']:8,.0f} steps/s ({result['steps']:,} steps, {result['rollouts']} "
                      f"rollouts begun, each with its update, in {result['seconds']} s)", flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    for name, table in tables.items():
        if "vector" in table and {"greedy", "planner"} <= set(table["vector"]):
            ratio = table["vector"]["planner"] / table["vector"]["greedy"]
            print(f"{name}: vector path, planner mix at {ratio:.0%} of the greedy mix's speed")
    if args.json:
        first = "quickstart" if "quickstart" in tables else args.networks[0]
        print(json.dumps({"steps_per_s": tables[first], "network": networks[first],
                          "shipped": tables.get("shipped"), "seconds": args.seconds, "seed": args.seed}))
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
