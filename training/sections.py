"""The config sections every backend reads: the run's name, seed and rules, the budget, the checkpoints, where Ray
plays (``ray``), and the sections of the two PPO backends (``env``, ``opponents``, ``network``, ``ppo``,
``evaluation``: ``backend: sb3`` and ``backend: rllib``), with their checks.

A backend's own section is its package's ``config.py`` (:mod:`training.backends` lists them); the fields are
made with :func:`training.schema.setting` (default, help, bounds).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal, Optional

from skipbo_env.envs.common import ENV_MAX_TURNS
from skipbo_env.rules import Rules
from training.schema import (
    BATCH, KEPT, LAYER_WIDTH, LEARNING_RATE, LOSS_WEIGHT, MINUTES, PASSES, PLAYED_GAMES, PROCESSES, SEED, SNAPSHOTS,
    STEPS, ConfigError, setting,
)

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
class BudgetConfig:
    total_timesteps: int = setting(200_000, "learner decisions to train for (and the periodic evaluations "
                                                   "of evaluation.every_steps must fit in a state.json)", STEPS)
    max_minutes: Optional[float] = setting(None, "stop PPO (with a checkpoint) once it has trained this many "
                                                  "minutes over the whole run, resumes included (pretraining has "
                                                  "its own pretrain.max_minutes)", MINUTES)
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


@dataclasses.dataclass
class CheckpointConfig:
    every_steps: int = setting(50_000, "learner steps between two checkpoints", STEPS)
    keep: int = setting(3, "checkpoints kept on disk (the latest ones)", KEPT)


RAY_NAMED_ADDRESSES = ("local", "auto")
"""``ray.address`` values that are not HOST:PORT: a Ray instance started here; the cluster this machine joined."""


@dataclasses.dataclass
class RayConfig:
    address: Optional[str] = setting(None, "where backend: snes, backend: neural and backend: td (with "
                                            "td.chunk) play their games: null: in this process; 'local': a Ray "
                                            "instance started here (127.0.0.1, ray.workers CPUs); 'auto': the Ray "
                                            "cluster this machine joined; "
                                            "HOST:PORT: the cluster of that head (ray start --head); the result for "
                                            "a seed is the same")
    workers: Optional[int] = setting(None, "CPUs of the Ray instance ray.address=local starts (null: the "
                                            "machine's); a cluster has the CPUs its nodes were started with",
                                  PROCESSES)


@dataclasses.dataclass
class SharedSettings:
    """The top-level keys and the sections every backend's config holds (``TrainConfig`` adds the ``backend`` key
    and one section per backend, :mod:`training.config`)."""

    name: str = setting("run", "run name; the run folder is OUTPUT_DIR/NAME-TIMESTAMP")
    seed: int = setting(0, "seed of every random choice of the run", SEED)
    device: Literal["auto", "cpu", "cuda"] = setting("cpu", "torch device for training")
    output_dir: str = setting("runs", "folder that receives the run folders")
    threads: int = setting(1, "torch CPU threads (1 is fastest for networks this small)",
                          PROCESSES)
    rules: dict[str, Any] = setting({"num_players": 2}, "skipbo_env.Rules settings (docs/RULES.md); max_turns defaults "
                                     "to 1000 as in the environments (null: no limit)")
    env: EnvConfig = dataclasses.field(default_factory=EnvConfig)
    opponents: OpponentConfig = dataclasses.field(default_factory=OpponentConfig)
    network: NetworkConfig = dataclasses.field(default_factory=NetworkConfig)
    ppo: PPOConfig = dataclasses.field(default_factory=PPOConfig)
    budget: BudgetConfig = dataclasses.field(default_factory=BudgetConfig)
    evaluation: EvaluationConfig = dataclasses.field(default_factory=EvaluationConfig)
    checkpoint: CheckpointConfig = dataclasses.field(default_factory=CheckpointConfig)
    ray: RayConfig = dataclasses.field(default_factory=RayConfig)

    def make_rules(self) -> Rules:
        return Rules(**{"max_turns": ENV_MAX_TURNS, **self.rules})

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)



# ---------------------------------------------------------------------- checks
def check_shared(config: SharedSettings, ray_readers: list[str], own_section: str) -> None:
    """The checks of the shared keys that span more than one value (types and ranges are checked on reading);
    ``ray_readers``: the backends that read the ``ray`` section; ``own_section``: the run's backend's section."""
    if not config.name or "/" in config.name or config.name.startswith("."):
        raise ConfigError(f"name={config.name!r} is not allowed: use a plain folder name")
    mix = config.opponents.mix
    if not mix:
        raise ConfigError("opponents.mix is empty: give at least one opponent kind with a weight > 0")
    for name, weight in mix.items():
        if weight < 0:
            raise ConfigError(f"opponents.mix.{name}={weight!r} is not allowed: use a weight >= 0")
    if sum(mix.values()) <= 0:
        raise ConfigError("opponents.mix: the weights sum to 0; give at least one a weight > 0")
    check_network(config.network.hidden)
    check_ray(config, ray_readers, own_section)


def check_ppo_sections(config: SharedSettings) -> None:
    """What the two PPO backends (sb3, rllib) need of the shared sections: a target among the evaluated bots, a
    rollout that fits in memory."""
    budget = config.budget
    if budget.target_win_rate is not None and budget.target_opponent not in config.evaluation.opponents:
        raise ConfigError(f"budget.target_opponent={budget.target_opponent!r} is not one of evaluation.opponents "
                          f"({', '.join(config.evaluation.opponents)}): add it there or pick one of them")
    rollout = config.ppo.n_steps * config.env.num_envs
    if rollout > MAX_ROLLOUT:
        raise ConfigError(f"a rollout of ppo.n_steps x env.num_envs = {rollout:,} steps is too large: "
                          f"use at most {MAX_ROLLOUT:,}")
    from training.checkpoint import MAX_TENSOR_BYTES
    from training.state_checks import MAX_STATE_BYTES

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


def ppo_state_bytes(config: SharedSettings) -> int:
    """The most bytes a PPO checkpoint's ``state.json`` may take: an evaluation every ``evaluation.every_steps`` of
    ``budget.total_timesteps`` (and one at each end), each naming every opponent, and the pool's snapshot steps."""
    evaluations = config.budget.total_timesteps // config.evaluation.every_steps + 2
    point = EVALUATION_BYTES + sum(OPPONENT_STATS_BYTES + len(name) for name in config.evaluation.opponents)
    return evaluations * point + 24 * config.opponents.max_snapshots + PPO_STATE_BYTES


TENSOR_OVERHEAD = 2**16
"""More than ``torch.save`` spends beside the numbers of a file of a few dozen tensors (names, shapes, zip entries)."""


def checkpoint_tensor_bytes(config: SharedSettings) -> dict[str, int]:
    """The most bytes of each tensor file a PPO checkpoint writes (``training.checkpoint``): the learner (the policy
    and a value network of the same layers), Adam's two moments of it, RLlib's learner state (both in one file)
    and the pool of ``opponents.max_snapshots`` policies; every number float32."""
    from agents.network import parameter_shapes
    from skipbo_env.encoding import OBS_SIZE

    policy = sum(math.prod(shape) for shape in parameter_shapes(OBS_SIZE, config.network.hidden).values())
    learner = 2 * policy
    return {"learner.pt": 4 * learner + TENSOR_OVERHEAD, "optimizer.pt": 8 * learner + TENSOR_OVERHEAD,
            "learner state (rllib)": 12 * learner + TENSOR_OVERHEAD,
            "pool.pt": config.opponents.max_snapshots * (4 * policy + TENSOR_OVERHEAD)}


def check_network(hidden: list[int]) -> None:
    """Layer sizes >= 1, at most :data:`MAX_LAYERS` of them, and a policy that fits in a model file."""
    from agents.network import parameter_shapes
    from agents.saved_model import MAX_MODEL_BYTES
    from skipbo_env.encoding import OBS_SIZE

    if not hidden or len(hidden) > MAX_LAYERS or any(size < 1 for size in hidden):
        raise ConfigError(f"network.hidden={hidden!r} is not allowed: use a list of 1 to {MAX_LAYERS} sizes >= 1")
    parameters = sum(math.prod(shape) for shape in parameter_shapes(OBS_SIZE, hidden).values())
    if 4 * parameters > MAX_MODEL_BYTES:
        raise ConfigError(f"network.hidden={hidden!r} makes a policy of {parameters:,} weights, larger than a model "
                          f"file may hold ({MAX_MODEL_BYTES // 4:,} float32 weights): use smaller layers")


def check_ray(config: SharedSettings, readers: list[str], own_section: str) -> None:
    """``ray.address``: a named address or HOST:PORT, for a backend that reads it (``readers``), with Ray
    installed; a backend with an address of its own (``rllib.address``) is pointed to it."""
    address, workers = config.ray.address, config.ray.workers
    if workers is not None and address != "local":
        raise ConfigError(f"ray.workers={workers} sizes the Ray instance ray.address=local starts: set "
                          "ray.address=local, or drop ray.workers (a cluster has the CPUs its nodes were started "
                          "with)")
    if address is None:
        return
    backend, section = config.backend, getattr(config, own_section)
    if backend not in readers:
        hint = f"; backend: {backend} has {own_section}.address" if hasattr(section, "address") else ""
        names = [f"backend: {name}" for name in readers]
        listed = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
        raise ConfigError(f"ray.address is read by {listed}, not backend: {backend}{hint}")
    host, _, port = address.rpartition(":")
    if address not in RAY_NAMED_ADDRESSES and not (host and port.isdigit() and 0 < int(port) < 65536):
        raise ConfigError(f"ray.address={address!r} is not allowed: use local, auto or HOST:PORT (ray start --head "
                          "prints it), or null to play in this process")
    try:
        import ray  # noqa: F401
    except ImportError:
        raise ConfigError(f"ray.address={address!r} needs Ray, which is not installed: pip install -e '.[rllib]' "
                          "(in a venv of its own, README: Ray section), or ray.address=null") from None
