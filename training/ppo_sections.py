"""The config sections of the PPO backends (``backend: sb3`` and ``backend: rllib``): ``env``, ``opponents`` (the
self-play pool), ``network``, ``ppo``, ``evaluation`` and the steps of ``budget`` (``budget.total_timesteps``,
``budget.target_win_rate``, ``budget.target_opponent``), with their checks.

Both backends declare them (:data:`PPO_SECTIONS`, ``Backend.sections`` of ``training/sb3/config.py`` and
``training/rllib/config.py``); the config loader (:mod:`training.config`) adds each section once, and the
``budget`` keys to the shared ``budget`` section (:mod:`training.sections`), so a config of any backend is written
as before. ``skipbo train --list-keys`` lists them under those backends.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Literal, Optional

from agents.network import parameter_shapes
from agents.saved_model import MAX_MODEL_BYTES
from skipbo_env.encoding import OBS_SIZE
from training.checkpoint import MAX_TENSOR_BYTES
from training.schema import (
    BATCH, KEPT, LAYER_WIDTH, LEARNING_RATE, LOSS_WEIGHT, PASSES, PLAYED_GAMES, SNAPSHOTS, STEPS, ConfigError, setting,
)
from training.state_checks import MAX_STATE_BYTES

MAX_LAYERS = 16
MAX_ROLLOUT = 2**20
"""The most steps one rollout may hold (ppo.n_steps x env.num_envs): the buffer is allocated up front."""
MAX_PYTHON_ENVS = 256
"""The most environments of env.vec_env dummy or subproc (one Python game, or one process, each)."""


@dataclasses.dataclass
class EnvConfig:
    num_envs: int = setting(64, "environments stepped together (SB3 VecEnv); dummy and subproc: at most "
                                 f"{MAX_PYTHON_ENVS}", min=1, max=MAX_ROLLOUT)
    vec_env: Literal["dummy", "subproc", "vector"] = setting(
        "vector", "vector: the batched engine (skipbo_env.vector), num_envs hands stepped together in one "
                  "process, every shipped bot and snapshot played in batch; dummy: one Python game per env in "
                  "one process; subproc: one process per env (backend sb3)")
    random_seat: bool = setting(True, "the learner takes a random seat each hand (else seat 0)")
    shaping: Literal["none", "stockpile"] = setting(
        "none", "stockpile: potential-based shaping on the stockpiles left (skipbo_env.envs.common), a reward "
                "signal from the first hand that does not change which policy is best; none: the result only")


@dataclasses.dataclass
class OpponentConfig:
    mix: dict[str, float] = setting(
        {SNAPSHOTS: 0.6, "greedy": 0.3, "random": 0.1},
        "weight of each opponent kind: 'snapshots' (frozen copies of the learner) or any "
        "agents.load_policy spec (bot name or model file)",
    )
    snapshot_every: int = setting(50_000, "learner steps between two snapshots joining the pool", STEPS)
    max_snapshots: int = setting(10, "snapshots kept in the pool (the oldest leaves first)", KEPT)


@dataclasses.dataclass
class NetworkConfig:
    hidden: list[int] = setting([256, 256], "hidden layer sizes of the policy and of the value network",
                                   LAYER_WIDTH)
    activation: Literal["relu", "tanh"] = setting("relu", "activation between the layers")
    inputs: Literal["all", "table"] = setting("all", "all: the networks read the whole observation; table: only "
                                                      "the values this table size can set (the absent seats' are "
                                                      "always zero; a smaller first layer, the same policy, "
                                                      "faster to train)")


@dataclasses.dataclass
class PPOConfig:
    learning_rate: float = setting(3e-4, "Adam step size", LEARNING_RATE)
    n_steps: int = setting(128, "steps per environment in each rollout", min=1, max=MAX_ROLLOUT,
                          why_max="a rollout is allocated up front")
    batch_size: int = setting(256, "minibatch size", BATCH, min=2)
    n_epochs: int = setting(4, "passes over each rollout", PASSES)
    gamma: float = setting(0.999, "discount factor", min=0.0, max=1.0)
    gae_lambda: float = setting(0.95, "GAE lambda", min=0.0, max=1.0)
    clip_range: float = setting(0.2, "PPO clip range", min_exclusive=0.0, max=1.0,
                                 why_max="the share a ratio may move; past 1 it clips nothing below")
    ent_coef: float = setting(0.01, "entropy bonus", LOSS_WEIGHT)
    vf_coef: float = setting(0.5, "value loss weight", LOSS_WEIGHT)
    max_grad_norm: float = setting(0.5, "gradient clipping norm", min_exclusive=0.0, max=1e6,
                                    why_max="a larger norm clips no float32 gradient")
    target_kl: Optional[float] = setting(None, "stop an update early past this KL (null: never)", min_exclusive=0.0,
                                        max=100.0, why_max="no update moves so far: use null")
    anneal_lr: bool = setting(False, "lower the step size linearly to zero over the budget (the share of "
                                      "budget.total_timesteps done or of budget.max_minutes spent, whichever is "
                                      "larger; a resume with a larger budget raises it again)")


@dataclasses.dataclass
class PPOBudgetConfig:
    """The PPO backends' keys of the ``budget`` section (the shared one holds ``budget.max_minutes``)."""

    total_timesteps: int = setting(200_000, "learner decisions to train for (and the periodic evaluations "
                                                   "of evaluation.every_steps must fit in a state.json)", STEPS)
    target_win_rate: Optional[float] = setting(None, "stop PPO once a periodic evaluation's win rate against "
                                                      "target_opponent reaches this (null: never)",
                                                min_exclusive=0.0, max=1.0)
    target_opponent: str = setting("greedy", "the evaluation.opponents entry target_win_rate is measured against")


@dataclasses.dataclass
class EvaluationConfig:
    every_steps: int = setting(50_000, "learner steps between two evaluations", STEPS)
    games: int = setting(200, "games per opponent in each periodic evaluation", PLAYED_GAMES, min=2)
    opponents: list[str] = setting(["greedy", "planner"], "bots of the periodic evaluation")
    final_games: int = setting(400, "games per opponent in the final evaluation", PLAYED_GAMES, min=2)
    final_opponents: list[str] = setting(["random", "greedy", "planner"], "bots of the final evaluation")


# ---------------------------------------------------------------------- checks
def check_ppo_sections(config) -> None:
    """What the two PPO backends (sb3, rllib) need of their sections: a target among the evaluated bots, a
    rollout that fits in memory, an opponent mix with weight, a network that fits in a model file."""
    mix = config.opponents.mix
    if not mix:
        raise ConfigError("opponents.mix is empty: give at least one opponent kind with a weight > 0")
    for name, weight in mix.items():
        if not (math.isfinite(weight) and weight >= 0):  # a NaN passes `< 0` and every sum check
            raise ConfigError(f"opponents.mix.{name}={weight!r} is not allowed: use a finite weight >= 0")
    if sum(mix.values()) <= 0:
        raise ConfigError("opponents.mix: the weights sum to 0; give at least one a weight > 0")
    check_network(config.network.hidden)
    budget = config.budget
    if budget.target_win_rate is not None and budget.target_opponent not in config.evaluation.opponents:
        raise ConfigError(f"budget.target_opponent={budget.target_opponent!r} is not one of evaluation.opponents "
                          f"({', '.join(config.evaluation.opponents)}): add it there or pick one of them")
    rollout = config.ppo.n_steps * config.env.num_envs
    if rollout > MAX_ROLLOUT:
        raise ConfigError(f"a rollout of ppo.n_steps x env.num_envs = {rollout:,} steps is too large: "
                          f"use at most {MAX_ROLLOUT:,}")
    state = ppo_state_bytes(config)
    if state > MAX_STATE_BYTES:
        raise ConfigError(f"budget.total_timesteps={config.budget.total_timesteps:,} with evaluation.every_steps="
                          f"{config.evaluation.every_steps:,} against {len(config.evaluation.opponents)} opponents is "
                          f"not allowed: the evaluation history of a checkpoint's state.json would take up to "
                          f"{state / 2**20:,.1f} MiB, more than the {MAX_STATE_BYTES / 2**20:g} MiB a resume reads: "
                          "evaluate less often or train fewer steps")

    for name, size in checkpoint_tensor_bytes(config).items():
        if size > MAX_TENSOR_BYTES:
            raise ConfigError(f"network.hidden={config.network.hidden!r} with opponents.max_snapshots="
                              f"{config.opponents.max_snapshots} is not allowed: a checkpoint's {name} would take up "
                              f"to {size / 2**20:,.0f} MiB, more than the {MAX_TENSOR_BYTES / 2**20:,.0f} MiB a "
                              "resume reads: use smaller layers or fewer snapshots")


EVALUATION_BYTES = 128
"""The most characters of a PPO evaluation in ``state.json``'s history beside its opponents' stats (the step, the
clocks, the keys)."""
OPPONENT_STATS_BYTES = 256
"""The most characters of one opponent's stats in an evaluation (games, wins, draws, losses, win rate, interval,
mean points, at their widest) beside the opponent's name."""
PPO_STATE_BYTES = 2**16
"""More than a PPO ``state.json`` holds beside its history and snapshot steps (counters, clocks, the best
evaluation, the pretraining report)."""


def ppo_state_bytes(config) -> int:
    """The most bytes a PPO checkpoint's ``state.json`` may take: an evaluation every ``evaluation.every_steps`` of
    ``budget.total_timesteps`` (and one at each end), each naming every opponent, and the pool's snapshot steps."""
    evaluations = config.budget.total_timesteps // config.evaluation.every_steps + 2
    point = EVALUATION_BYTES + sum(OPPONENT_STATS_BYTES + len(name) for name in config.evaluation.opponents)
    return evaluations * point + 24 * config.opponents.max_snapshots + PPO_STATE_BYTES


TENSOR_OVERHEAD = 2**16
"""More than ``torch.save`` spends beside the numbers of a file of a few dozen tensors (names, shapes, zip entries)."""


def checkpoint_tensor_bytes(config) -> dict[str, int]:
    """The most bytes of each tensor file a PPO checkpoint writes (``training.checkpoint``): the learner (the policy
    and a value network of the same layers), Adam's two moments of it, RLlib's learner state (both in one file)
    and the pool of ``opponents.max_snapshots`` policies; every number float32."""
    policy = sum(math.prod(shape) for shape in parameter_shapes(OBS_SIZE, config.network.hidden).values())
    learner = 2 * policy
    return {"learner.pt": 4 * learner + TENSOR_OVERHEAD, "optimizer.pt": 8 * learner + TENSOR_OVERHEAD,
            "learner state (rllib)": 12 * learner + TENSOR_OVERHEAD,
            "pool.pt": config.opponents.max_snapshots * (4 * policy + TENSOR_OVERHEAD)}


def check_network(hidden: list[int]) -> None:
    """Layer sizes >= 1, at most :data:`MAX_LAYERS` of them, and a policy that fits in a model file."""
    if not hidden or len(hidden) > MAX_LAYERS or any(size < 1 for size in hidden):
        raise ConfigError(f"network.hidden={hidden!r} is not allowed: use a list of 1 to {MAX_LAYERS} sizes >= 1")
    parameters = sum(math.prod(shape) for shape in parameter_shapes(OBS_SIZE, hidden).values())
    if 4 * parameters > MAX_MODEL_BYTES:
        raise ConfigError(f"network.hidden={hidden!r} makes a policy of {parameters:,} weights, larger than a model "
                          f"file may hold ({MAX_MODEL_BYTES // 4:,} float32 weights): use smaller layers")


PPO_SECTIONS = (("env", EnvConfig), ("opponents", OpponentConfig), ("network", NetworkConfig), ("ppo", PPOConfig),
                ("budget", PPOBudgetConfig), ("evaluation", EvaluationConfig))
"""The sections the PPO backends declare (``Backend.sections``): ``(key, dataclass)``; ``budget`` adds its keys to
the shared section of that name."""
