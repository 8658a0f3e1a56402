"""Training configurations: the YAML schema of the configs, its checks and overrides.

A run is described by one YAML file. The shipped configs travel inside the package
(``training/configs/*.yaml``, :func:`shipped_configs`, ``skipbo train --list-configs``): ``skipbo train
quickstart`` runs ``training/configs/quickstart.yaml`` wherever the package is installed. A CONFIG is a
shipped config's name or the path of a YAML file (:func:`config_path`); ``configs/NAME.yaml``, the
place of the shipped configs in a checkout before they moved into the package, still names the shipped
``NAME`` when no such file exists. Every section and key is listed below with its default;
a key the schema does not know, or a value of the wrong type or range, raises
:class:`ConfigError` naming the dotted key and what is allowed, before anything is trained.

``skipbo train CONFIG key.path=value ...`` overrides single keys; each value is read as YAML
(``ppo.learning_rate=1e-4``, ``network.hidden=[128,128]``, ``pretrain.enabled=false``).

Sections (see ``training/configs/quickstart.yaml`` for a commented example):

- top level: ``name``, ``seed``, ``device``, ``output_dir``
- ``rules``: any ``skipbo_env.Rules`` setting (RULES.md), checked by ``Rules`` itself
- ``env``: ``num_envs``, ``vec_env``, ``random_seat``, ``shaping``
- ``opponents``: the self-play pool: ``mix`` (weight per opponent kind), ``snapshot_every``,
  ``max_snapshots``
- ``network``: ``hidden`` layer sizes and ``activation`` of the policy and value networks
- ``ppo``: MaskablePPO hyper-parameters
- ``pretrain``: behaviour cloning of a teacher bot before PPO (warm start), its own ``max_minutes``
- ``budget``: ``total_timesteps``, an optional wall-clock ``max_minutes`` of PPO and an optional
  ``target_win_rate`` against ``target_opponent`` that ends training early
- ``evaluation``: the periodic and final tournaments against the bots
- ``checkpoint``: how often checkpoints are written and how many are kept
- ``backend`` (``sb3``, the default, ``rllib``, ``snes`` or ``neural``) and ``rllib``: where and how RLlib trains
  (``training.rllib``: a local Ray instance or a cluster, env runners, learners, warm start)
- ``snes``: the learned bot's weights trained by an evolution strategy in self-play
  (``backend: snes``, :mod:`training.learned`): population, deals, the tables of the pool and of
  the curve; it reads ``rules``, ``seed``, ``budget.max_minutes`` and ``checkpoint.keep`` and
  no network, PPO, pretraining or evaluation key
- ``neural``: the neural bot's value network trained by self-play (``backend: neural``,
  :mod:`training.neural`): the network's size, the teacher of generation 0, hands per generation, the
  tables, the window of positions fitted, the optimiser, the budget in generations, the curve and the
  final evaluation, Ray; it reads ``rules``, ``seed``, ``threads``, ``budget.max_minutes`` (a guard) and
  ``checkpoint.keep``
- ``ray``: where ``backend: snes`` and ``backend: neural`` play its candidates' games (this process, or Ray tasks on a
  local instance or a cluster: :mod:`training.distributed`); the result for a seed is the same
"""

from __future__ import annotations

import copy
import dataclasses
import math
import typing
from pathlib import Path
from typing import Any, Literal, Optional

import yaml

from agents.registry import KERNEL_SPECS
from skipbo_env.envs.common import ENV_MAX_TURNS
from skipbo_env.files import FileRefused, read_file_text
from skipbo_env.rules import Rules

SNAPSHOTS = "snapshots"
MAX_CONFIG_BYTES = 2**20
"""The largest config file read (a config is a few kilobytes)."""
MAX_LAYERS = 16
MAX_ROLLOUT = 2**20
"""The most steps one rollout may hold (ppo.n_steps x env.num_envs): the buffer is allocated up front."""
MAX_PYTHON_ENVS = 256
"""The most environments of env.vec_env dummy or subproc (one Python game, or one process, each)."""
SELF = "self"
"""``opponents.mix`` kind of ``backend: rllib``: the seat is played by the learner itself; in ``snes.tables``,
the search distribution's current mean."""
PAST = "past"
"""A seat of ``snes.tables``: the mean of an earlier generation, drawn each generation."""
TABLE_JOIN = "+"
"""Joins the bots of one table in ``neural.curve_opponents`` (``planner+greedy+greedy``: the other three seats)."""


def table_seats(opponent: str) -> list[str]:
    """The other seats' bots of a ``neural`` curve or final opponent: ``planner`` (one bot, in every other seat in
    turn) or a table, ``planner+greedy+greedy`` (the other seats in turn order)."""
    return opponent.split(TABLE_JOIN)


class ConfigError(ValueError):
    """A configuration that cannot run; the message names the key and the allowed values."""


def _field(default: Any, help: str, **checks: Any) -> Any:
    """A dataclass field with its documentation and range checks (``min``, ``max``, ``min_exclusive``)."""
    factory = (lambda: copy.deepcopy(default)) if isinstance(default, (list, dict)) else None
    metadata = {"help": help, **checks}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


@dataclasses.dataclass
class EnvConfig:
    num_envs: int = _field(64, "environments stepped together (SB3 VecEnv); dummy and subproc: at most "
                               f"{MAX_PYTHON_ENVS}", min=1, max=MAX_ROLLOUT)
    vec_env: Literal["dummy", "subproc", "vector"] = _field(
        "vector", "vector: the batched engine (skipbo_env.vector), num_envs hands stepped together in one "
                  "process, every shipped bot and snapshot played in batch; dummy: one Python game per env in "
                  "one process; subproc: one process per env (backend sb3)")
    random_seat: bool = _field(True, "the learner takes a random seat each hand (else seat 0)")
    shaping: Literal["none", "stockpile"] = _field(
        "none", "stockpile: potential-based shaping on the stockpiles left (skipbo_env.envs.common), a reward "
                "signal from the first hand that does not change which policy is best; none: the result only")


@dataclasses.dataclass
class OpponentConfig:
    mix: dict[str, float] = _field(
        {SNAPSHOTS: 0.6, "greedy": 0.3, "random": 0.1},
        "weight of each opponent kind: 'snapshots' (frozen copies of the learner) or any "
        "agents.load_policy spec (bot name or model file)",
    )
    snapshot_every: int = _field(50_000, "learner steps between two snapshots joining the pool", min=1)
    max_snapshots: int = _field(10, "snapshots kept in the pool (the oldest leaves first)", min=1)


@dataclasses.dataclass
class NetworkConfig:
    hidden: list[int] = _field([256, 256], "hidden layer sizes of the policy and of the value network")
    activation: Literal["relu", "tanh"] = _field("relu", "activation between the layers")
    inputs: Literal["all", "table"] = _field("all", "all: the networks read the whole observation; table: only "
                                                    "the values this table size can set (the absent seats' are "
                                                    "always zero; a smaller first layer, the same policy, "
                                                    "faster to train)")


@dataclasses.dataclass
class PPOConfig:
    learning_rate: float = _field(3e-4, "Adam step size", min_exclusive=0.0)
    n_steps: int = _field(128, "steps per environment in each rollout", min=1)
    batch_size: int = _field(256, "minibatch size", min=2)
    n_epochs: int = _field(4, "passes over each rollout", min=1)
    gamma: float = _field(0.999, "discount factor", min=0.0, max=1.0)
    gae_lambda: float = _field(0.95, "GAE lambda", min=0.0, max=1.0)
    clip_range: float = _field(0.2, "PPO clip range", min_exclusive=0.0)
    ent_coef: float = _field(0.01, "entropy bonus", min=0.0)
    vf_coef: float = _field(0.5, "value loss weight", min=0.0)
    max_grad_norm: float = _field(0.5, "gradient clipping norm", min_exclusive=0.0)
    target_kl: Optional[float] = _field(None, "stop an update early past this KL (null: never)", min_exclusive=0.0)
    anneal_lr: bool = _field(False, "lower the step size linearly to zero over the budget (the share of "
                                    "budget.total_timesteps done or of budget.max_minutes spent, whichever is "
                                    "larger; a resume with a larger budget raises it again)")


@dataclasses.dataclass
class PretrainConfig:
    enabled: bool = _field(False, "warm-start the policy by behaviour cloning the teacher bot")
    teacher: str = _field("planner", "the bot whose decisions are imitated (agents.load_policy spec)")
    games: int = _field(300, "teacher games played to collect (observation, mask, action) data", min=1)
    epochs: int = _field(10, "passes over the collected data", min=1)
    batch_size: int = _field(512, "minibatch size", min=2)
    learning_rate: float = _field(1e-3, "Adam step size", min_exclusive=0.0)
    value: bool = _field(True, "also fit the value network to the game outcomes")
    dagger_rounds: int = _field(0, "DAgger rounds after cloning: the learner plays, the teacher labels its "
                                   "decisions, the policy is refit on all the data", min=0)
    dagger_games: int = _field(200, "games the learner plays in each DAgger round", min=1)
    dagger_epochs: int = _field(2, "passes over all the data after each DAgger round", min=1)
    max_minutes: Optional[float] = _field(None, "wall-clock budget of the whole imitation phase (games, DAgger, "
                                                "fitting); past it no new game starts and no further epoch or "
                                                "round runs", min_exclusive=0.0)


@dataclasses.dataclass
class BudgetConfig:
    total_timesteps: int = _field(200_000, "learner decisions to train for", min=1)
    max_minutes: Optional[float] = _field(None, "stop PPO (with a checkpoint) once it has trained this many "
                                                "minutes over the whole run, resumes included (pretraining has "
                                                "its own pretrain.max_minutes)", min_exclusive=0.0)
    target_win_rate: Optional[float] = _field(None, "stop PPO once a periodic evaluation's win rate against "
                                                    "target_opponent reaches this (null: never)",
                                              min_exclusive=0.0, max=1.0)
    target_opponent: str = _field("greedy", "the evaluation.opponents entry target_win_rate is measured against")


@dataclasses.dataclass
class EvaluationConfig:
    every_steps: int = _field(50_000, "learner steps between two evaluations", min=1)
    games: int = _field(200, "games per opponent in each periodic evaluation", min=2)
    opponents: list[str] = _field(["greedy", "planner"], "bots of the periodic evaluation")
    final_games: int = _field(400, "games per opponent in the final evaluation", min=2)
    final_opponents: list[str] = _field(["random", "greedy", "planner"], "bots of the final evaluation")


@dataclasses.dataclass
class CheckpointConfig:
    every_steps: int = _field(50_000, "learner steps between two checkpoints", min=1)
    keep: int = _field(3, "checkpoints kept on disk (the latest ones)", min=1)


@dataclasses.dataclass
class RLlibConfig:
    address: Optional[str] = _field(None, "Ray cluster to train on: null starts a local Ray instance; 'auto' or "
                                          "HOST:PORT joins a running cluster (ray start --head)")
    num_env_runners: int = _field(2, "RLlib env runners (processes playing hands), 0: sample in the driver", min=0)
    num_envs_per_env_runner: int = _field(1, "environments stepped together in each env runner", min=1)
    num_cpus_per_env_runner: float = _field(1.0, "CPUs Ray reserves for each env runner (fractions share a core)",
                                            min_exclusive=0.0)
    num_learners: int = _field(0, "learner processes (0: learn in the driver process)", min=0)
    train_batch_size: int = _field(4000, "env steps (all seats) sampled per training iteration", min=2)
    iterations: Optional[int] = _field(None, "stop after this many training iterations (null: when the budget "
                                             "is spent)", min=1)
    warm_start: Optional[str] = _field(None, "a project model file (agents.saved_model format, same network) "
                                             "whose policy weights the learner starts from")


@dataclasses.dataclass
class SNESConfig:
    population: int = _field(16, "candidate weight vectors per generation (even: mirrored pairs)", min=2)
    deals: int = _field(32, "duplicate deals each candidate plays at each table of snes.tables, once in every "
                            "seat", min=1)
    sigma: float = _field(0.5, "initial spread of every free weight (stock_cards is the unit, held at 1)",
                          min_exclusive=0.0)
    start: Optional[str] = _field(None, "a learned weights file (JSON, e.g. agents/pretrained/learned-2p.json) "
                                        "the search starts from; null: stock_cards 1, every other weight 0")
    tables: list[list[str]] = _field(
        [["greedy"], ["planner"], [SELF], [PAST]],
        "the pool: each table lists who sits in the other seats (rules.num_players - 1 of them): a kernel bot "
        f"({KERNEL_SPECS}), {SELF!r} (the current mean) or "
        f"{PAST!r} (an earlier generation's mean); fitness is the mean win rate over the tables")
    curve_every: int = _field(5, "generations between two points of the training curve", min=1)
    curve_deals: int = _field(200, "held-out duplicate deals of each curve point, per curve table", min=1)
    curve_tables: list[list[str]] = _field([["planner"], ["greedy"]], "the tables of the training curve and the "
                                                                       "final evaluation (kernel bots only)")
    final_deals: int = _field(1000, "held-out duplicate deals of the final evaluation, per curve table (each "
                                    "played once in every seat)", min=1)
    generations: Optional[int] = _field(None, "stop once the run has this many generations (null: when "
                                              "budget.max_minutes is spent)", min=1)


RAY_NAMED_ADDRESSES = ("local", "auto")
"""``ray.address`` values that are not HOST:PORT: a Ray instance started here; the cluster this machine joined."""


@dataclasses.dataclass
class RayConfig:
    address: Optional[str] = _field(None, "where backend: snes plays its candidates' games: null: in this process; "
                                          "'local': a Ray instance started here (127.0.0.1, ray.workers CPUs); "
                                          "'auto': the Ray cluster this machine joined; HOST:PORT: the cluster of "
                                          "that head (ray start --head); the result for a seed is the same")
    workers: Optional[int] = _field(None, "CPUs of the Ray instance ray.address=local starts (null: the "
                                          "machine's); a cluster has the CPUs its nodes were started with", min=1)


@dataclasses.dataclass
class NeuralConfig:
    hidden: list[int] = _field([128, 32], "the value network's two hidden layers (ReLU)")
    teacher: str = _field("pretrained-2p", "the learned bot (learned, pretrained-2p, pretrained-4p) that lists and "
                                           "values where each recorded decision's turn could stop, and which discard "
                                           "it would make: what the network is fitted to")
    teacher_games: int = _field(1000, "hands of generation 0: the teacher against itself", min=1)
    teacher_epochs: int = _field(8, "passes over generation 0's lists", min=1)
    list_size: int = _field(16, "stops listed per decision: the teacher's best and a uniform sample of the others",
                            min=2, max=256)
    temperature: float = _field(10.0, "the teacher's values are divided by it before their softmax over a list (a "
                                      "stockpile card is worth 100)", min_exclusive=0.0)
    games: int = _field(500, "hands of each later generation: the network plays, the teacher lists its decisions",
                        min=1)
    tables: list[list[str]] = _field(
        [[SELF], [SELF], ["planner"], ["pretrained-2p"]],
        "who sits in the other seats, hand by hand in turn (the network takes every seat in turn): "
        f"{SELF!r} (the current network, its positions recorded too), {PAST!r} (an earlier generation's) or a "
        "kernel bot (random, greedy, planner[:options], expert[:options], learned, pretrained-2p, ...)")
    explore: float = _field(0.03, "share of a recorded seat's decisions taken at random (the lists then cover "
                                  "positions its own choices avoid, such as stopping before a stockpile play)",
                            min=0.0, max=1.0)
    window: int = _field(4, "generations of lists the network is fitted to (the latest ones)", min=1)
    epochs: int = _field(2, "passes over the window's lists per later generation", min=1)
    batch_size: int = _field(256, "lists per gradient step", min=1)
    learning_rate: float = _field(1e-3, "Adam's step size (a fresh Adam each generation)", min_exclusive=0.0)
    weight_decay: float = _field(0.0, "Adam's weight decay", min=0.0)
    outcome_weight: float = _field(0.0, "weight of the hands' results in the fit: each decision's position is also "
                                        "fitted to the result of its hand for the seat that decided (a Monte-Carlo "
                                        "return, beside the teacher's lists); 0: the lists alone", min=0.0)
    generations: int = _field(8, "generations after generation 0: the run's budget (work, not time)", min=0)
    start: Optional[str] = _field(None, "a neural model the network starts from instead of generation 0's teacher "
                                        "lists (a run's model.json, or a shipped one: neural-2p): later "
                                        "generations and the evolution go on from it")
    es_generations: int = _field(0, "generations of an evolution strategy (sNES) on the network's output layer after "
                                    "the fitted generations: candidates play neural.es_games duplicate games against "
                                    "each of neural.es_opponents, the mean moves toward the winners (0: none)",
                                 min=0)
    es_population: int = _field(12, "candidate output layers per sNES generation (even: mirrored pairs)", min=2)
    es_games: int = _field(300, "duplicate games of each candidate against each of neural.es_opponents (the same "
                                "deals for every candidate of a generation, new deals every generation)", min=2)
    es_opponents: list[str] = _field(["pretrained-2p", "planner"], "the sNES fitness: the mean win rate against "
                                     "these kernel bots (or tables joined by '+', as curve_opponents)")
    es_sigma: float = _field(0.1, "the first spread of each output weight, as a share of their root mean square",
                             min_exclusive=0.0)
    past_networks: int = _field(5, "earlier generations kept for 'past' seats", min=1)
    chunk: int = _field(250, "hands per work item (a thread's or a Ray task's share)", min=1)
    curve_every: int = _field(1, "generations between two points of the learning curve", min=1)
    curve_games: int = _field(400, "held-out duplicate games against each curve opponent per curve point", min=2)
    curve_opponents: list[str] = _field(["greedy", "planner", "pretrained-2p"],
                                        "opponents of the learning curve: kernel bots (one bot takes every other "
                                        "seat in turn), or tables of the other seats' bots joined by '+' "
                                        "(planner+greedy+greedy at four seats)")
    final_opponents: Optional[list[str]] = _field(None, "opponents of the final evaluation, as curve_opponents "
                                                        "(null: the curve opponents)")
    final_games: int = _field(4000, "held-out duplicate games against each final opponent at the end", min=2)
    seat_orders: str = _field("rotations", "how the curve's and the final evaluation's tables are seated: "
                                           "'rotations' (each in its rotations, the order around the table kept) or "
                                           "'all' (every distinct order: who sits after whom evens out too)")

    @property
    def final_bots(self) -> list[str]:
        """The final evaluation's opponents."""
        return self.curve_opponents if self.final_opponents is None else self.final_opponents


@dataclasses.dataclass
class TrainConfig:
    name: str = _field("run", "run name; the run folder is OUTPUT_DIR/NAME-TIMESTAMP")
    seed: int = _field(0, "seed of every random choice of the run", min=0)
    device: Literal["auto", "cpu", "cuda"] = _field("cpu", "torch device for training")
    output_dir: str = _field("runs", "folder that receives the run folders")
    threads: int = _field(1, "torch CPU threads (1 is fastest for networks this small)", min=1)
    rules: dict[str, Any] = _field({"num_players": 2}, "skipbo_env.Rules settings (docs/RULES.md); max_turns defaults "
                                   "to 1000 as in the environments (null: no limit)")
    env: EnvConfig = dataclasses.field(default_factory=EnvConfig)
    opponents: OpponentConfig = dataclasses.field(default_factory=OpponentConfig)
    network: NetworkConfig = dataclasses.field(default_factory=NetworkConfig)
    ppo: PPOConfig = dataclasses.field(default_factory=PPOConfig)
    pretrain: PretrainConfig = dataclasses.field(default_factory=PretrainConfig)
    budget: BudgetConfig = dataclasses.field(default_factory=BudgetConfig)
    evaluation: EvaluationConfig = dataclasses.field(default_factory=EvaluationConfig)
    checkpoint: CheckpointConfig = dataclasses.field(default_factory=CheckpointConfig)
    backend: Literal["sb3", "rllib", "snes", "neural"] = _field(
        "sb3", "sb3: MaskablePPO on one machine; rllib: RLlib PPO, locally or on a Ray cluster (see the rllib "
               "section); snes: the learned bot's weights by an evolution strategy (see the snes section); "
               "neural: the neural bot's value network by self-play (see the neural section)")
    rllib: RLlibConfig = dataclasses.field(default_factory=RLlibConfig)
    snes: SNESConfig = dataclasses.field(default_factory=SNESConfig)
    neural: NeuralConfig = dataclasses.field(default_factory=NeuralConfig)
    ray: RayConfig = dataclasses.field(default_factory=RayConfig)

    def make_rules(self) -> Rules:
        return Rules(**{"max_turns": ENV_MAX_TURNS, **self.rules})

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


# ---------------------------------------------------------------------- loading
SHIPPED_CONFIGS = Path(__file__).resolve().parent / "configs"
"""The folder of the configs that ship with the package (package data)."""
LEGACY_CONFIGS = "configs"
"""Where a checkout kept the shipped configs before they moved into the package."""


def shipped_configs() -> dict[str, Path]:
    """The shipped configs by name: ``{"quickstart": .../training/configs/quickstart.yaml, ...}``."""
    return {path.stem: path for path in sorted(SHIPPED_CONFIGS.glob("*.yaml"))}


def config_path(config: str | Path) -> Path:
    """The file a CONFIG names: a shipped config's name (``quickstart``), else a path; a path
    ``configs/NAME.yaml`` that does not exist names the shipped ``NAME`` (the checkout's old place).
    Raises :class:`ConfigError` naming the shipped configs when it names nothing."""
    path, shipped = Path(config), shipped_configs()
    if str(config) in shipped:
        return shipped[str(config)]
    if path.exists():
        return path
    if path.parent == Path(LEGACY_CONFIGS) and path.suffix == ".yaml" and path.stem in shipped:
        return shipped[path.stem]
    raise ConfigError(f"config file {str(path)!r} does not exist: give a YAML file or a shipped config "
                      f"({', '.join(shipped)}; skipbo train --list-configs)")


def load_config(path: str | Path, overrides: list[str] = ()) -> TrainConfig:
    """Read a YAML config (a path or a shipped config's name, :func:`config_path`), apply ``key.path=value``
    overrides and check everything."""
    path = config_path(path)
    try:
        data = yaml.safe_load(read_file_text(path, max_bytes=MAX_CONFIG_BYTES, what="config file"))
    except FileRefused as error:
        raise ConfigError(str(error)) from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path} is not valid YAML: {' '.join(str(error).split())}") from None
    except RecursionError:
        raise ConfigError(f"{path} is not valid YAML: it is nested too deeply") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a mapping of sections, not {type(data).__name__}")
    return config_from_dict(apply_overrides(data, overrides))


def apply_overrides(data: dict, overrides: list[str]) -> dict:
    """A copy of ``data`` with each ``dotted.key=yaml_value`` set (unknown keys are caught later)."""
    data = copy.deepcopy(data)
    for override in overrides:
        key, sep, text = override.partition("=")
        if not sep or not key:
            raise ConfigError(f"override {override!r} is not KEY=VALUE (for example ppo.learning_rate=1e-4)")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            raise ConfigError(f"override {override!r}: {text!r} is not a YAML value") from None
        node = data
        parts = key.split(".")
        for depth, part in enumerate(parts[:-1]):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"override {override!r}: {'.'.join(parts[:depth + 1])} is not a section")
            node = child
        node[parts[-1]] = value
    return data


def config_from_dict(data: dict) -> TrainConfig:
    """A checked :class:`TrainConfig` from plain data (as read from YAML)."""
    config = _build(TrainConfig, data, "")
    try:
        config.make_rules()
    except (TypeError, ValueError) as error:
        raise ConfigError(f"rules: {error}") from None
    _check_cross_field(config)
    return config


def _build(cls: type, data: Any, prefix: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix.rstrip('.') or 'the config'} must be a mapping, not {data!r}")
    fields = {field.name: field for field in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(
            f"unknown key {prefix}{unknown[0]}: allowed keys{' in ' + prefix.rstrip('.') if prefix else ''} "
            f"are {', '.join(fields)}"
        )
    hints = typing.get_type_hints(cls)
    values = {}
    for name, value in data.items():
        key = prefix + name
        kind = hints[name]
        if dataclasses.is_dataclass(kind):
            values[name] = _build(kind, value, key + ".")
        else:
            values[name] = _checked_value(key, value, kind, fields[name].metadata)
    return cls(**values)


def _checked_value(key: str, value: Any, kind: Any, checks: typing.Mapping) -> Any:
    value = _typed(key, value, kind)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise ConfigError(f"{key}={value!r} is not allowed: use a finite number")
        if "min" in checks and value < checks["min"]:
            raise ConfigError(f"{key}={value!r} is not allowed: use a number >= {checks['min']}")
        if "max" in checks and value > checks["max"]:
            raise ConfigError(f"{key}={value!r} is not allowed: use a number <= {checks['max']}")
        if "min_exclusive" in checks and value <= checks["min_exclusive"]:
            raise ConfigError(f"{key}={value!r} is not allowed: use a number > {checks['min_exclusive']}")
    return value


def _typed(key: str, value: Any, kind: Any) -> Any:
    """``value`` checked (and int widened to float) against the annotation ``kind``."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is typing.Union:  # Optional[X]
        if value is None:
            return None
        return _typed(key, value, next(arg for arg in args if arg is not type(None)))
    if origin is Literal:
        if value not in args:
            raise ConfigError(f"{key}={value!r} is not allowed: use one of {', '.join(map(repr, args))}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{key}={value!r} is not allowed: use a list")
        return [_typed(f"{key}[{index}]", item, args[0]) for index, item in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{key}={value!r} is not allowed: use a mapping")
        return {_typed(key, k, args[0]): _typed(f"{key}.{k}", v, args[1]) for k, v in value.items()}
    if kind is Any:
        return value
    if kind in (int, float) and isinstance(value, str):
        value = _number_from_text(value)  # PyYAML reads 1e-4 (no dot) as text
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind is int and isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)  # YAML reads 1e6 as a float
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise ConfigError(f"{key}={value!r} is not allowed: use a{'n' if kind is int else ''} {kind.__name__}")
    return value


def _number_from_text(text: str) -> Any:
    try:
        return float(text)
    except ValueError:
        return text


def _check_cross_field(config: TrainConfig) -> None:
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
    _check_network(config.network.hidden)
    _check_ray(config)
    if config.backend == "snes":
        _check_snes(config)
    if config.backend == "neural":
        _check_neural(config)
        return
    if config.backend == "rllib":
        _check_rllib(config)
    elif SELF in mix:
        raise ConfigError(f"opponents.mix.{SELF}: the learner in other seats is a backend: rllib kind; "
                          "with backend: sb3 use snapshots")
    budget = config.budget
    if budget.target_win_rate is not None and budget.target_opponent not in config.evaluation.opponents:
        raise ConfigError(f"budget.target_opponent={budget.target_opponent!r} is not one of evaluation.opponents "
                          f"({', '.join(config.evaluation.opponents)}): add it there or pick one of them")
    if config.backend == "sb3" and config.env.vec_env != "vector" and config.env.num_envs > MAX_PYTHON_ENVS:
        raise ConfigError(f"env.num_envs={config.env.num_envs} is too many for env.vec_env={config.env.vec_env!r}: "
                          f"use at most {MAX_PYTHON_ENVS}, or env.vec_env=vector")
    rollout = config.ppo.n_steps * config.env.num_envs
    if rollout > MAX_ROLLOUT:
        raise ConfigError(f"a rollout of ppo.n_steps x env.num_envs = {rollout:,} steps is too large: "
                          f"use at most {MAX_ROLLOUT:,}")
    if config.backend == "sb3" and config.ppo.batch_size > rollout:
        raise ConfigError(
            f"ppo.batch_size={config.ppo.batch_size} is larger than a rollout "
            f"(ppo.n_steps x env.num_envs = {rollout}): lower it or raise n_steps"
        )


def _check_network(hidden: list[int]) -> None:
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


def _check_rllib(config: TrainConfig) -> None:
    if config.ppo.batch_size > config.rllib.train_batch_size:
        raise ConfigError(f"ppo.batch_size={config.ppo.batch_size} is larger than an iteration's batch "
                          f"(rllib.train_batch_size = {config.rllib.train_batch_size}): lower it or raise "
                          "rllib.train_batch_size")
    if config.pretrain.enabled:
        raise ConfigError("pretrain.enabled=true is not allowed with backend: rllib: clone the teacher with "
                          "backend: sb3 and start from that model with rllib.warm_start=runs/.../model.zip")
    if config.env.vec_env == "subproc":
        raise ConfigError(f"env.vec_env={config.env.vec_env!r} is not allowed with backend: rllib: RLlib's env "
                          "runners step the environments (rllib.num_env_runners, rllib.num_envs_per_env_runner)")


def _check_ray(config: TrainConfig) -> None:
    """``ray.address``: a named address or HOST:PORT, for a backend that reads it, with Ray installed."""
    address, workers = config.ray.address, config.ray.workers
    if workers is not None and address != "local":
        raise ConfigError(f"ray.workers={workers} sizes the Ray instance ray.address=local starts: set "
                          "ray.address=local, or drop ray.workers (a cluster has the CPUs its nodes were started "
                          "with)")
    if address is None:
        return
    if config.backend not in ("snes", "neural"):
        hint = "; backend: rllib has rllib.address" if config.backend == "rllib" else ""
        raise ConfigError(f"ray.address is read by backend: snes and backend: neural, not backend: "
                          f"{config.backend}{hint}")
    host, _, port = address.rpartition(":")
    if address not in RAY_NAMED_ADDRESSES and not (host and port.isdigit() and 0 < int(port) < 65536):
        raise ConfigError(f"ray.address={address!r} is not allowed: use local, auto or HOST:PORT (ray start --head "
                          "prints it), or null to play in this process")
    try:
        import ray  # noqa: F401
    except ImportError:
        raise ConfigError(f"ray.address={address!r} needs Ray, which is not installed: pip install -e '.[rllib]' "
                          "(in a venv of its own, README: Ray section), or ray.address=null") from None


def _check_snes(config: TrainConfig) -> None:
    settings, seats = config.snes, config.make_rules().num_players - 1
    if settings.population % 2:
        raise ConfigError(f"snes.population={settings.population} is not allowed: use an even number (mirrored pairs)")
    if config.budget.max_minutes is None and settings.generations is None:
        raise ConfigError("backend: snes needs budget.max_minutes or snes.generations: give one, e.g. "
                          "budget.max_minutes=60")
    if settings.start is not None:
        from agents.learned_parameters import read_parameters

        try:
            read_parameters(settings.start)
        except ValueError as error:
            raise ConfigError(f"snes.start: {error}") from None
    for key, tables, allowed in (("snes.tables", settings.tables, (SELF, PAST)), ("snes.curve_tables",
                                                                                  settings.curve_tables, ())):
        if not tables:
            raise ConfigError(f"{key} is empty: give at least one table, e.g. [[planner]]")
        for index, table in enumerate(tables):
            if len(table) != seats:
                raise ConfigError(f"{key}[{index}]={table!r} is not allowed: a table of rules.num_players="
                                  f"{seats + 1} lists the {seats} other seat(s)")
            for spec in table:
                if spec not in allowed and not _is_kernel_bot(spec):
                    extra = f", {SELF!r} or {PAST!r}" if allowed else ""
                    raise ConfigError(f"{key}[{index}]: {spec!r} is not allowed: use a kernel bot "
                                      f"({KERNEL_SPECS}){extra}")


def _check_neural(config: TrainConfig) -> None:
    settings, seats = config.neural, config.make_rules().num_players - 1
    if len(settings.hidden) != 2 or not all(1 <= width <= 1024 for width in settings.hidden):
        raise ConfigError(f"neural.hidden={settings.hidden!r} is not allowed: give two layer widths from 1 to 1024, "
                          "e.g. [128, 32]")
    from agents.learned_parameters import NAME as LEARNED, PRETRAINED_WEIGHTS
    from agents.spec_names import unaliased

    teachers = [LEARNED, *PRETRAINED_WEIGHTS]
    if unaliased(settings.teacher) not in teachers:
        raise ConfigError(f"neural.teacher: {settings.teacher!r} is not allowed: use a learned bot "
                          f"({', '.join(teachers)})")
    if not settings.tables:
        raise ConfigError("neural.tables is empty: give at least one table, e.g. [[self]]")
    for index, table in enumerate(settings.tables):
        if len(table) != seats:
            raise ConfigError(f"neural.tables[{index}]={table!r} is not allowed: a table of rules.num_players="
                              f"{seats + 1} lists the {seats} other seat(s)")
        for spec in table:
            if spec not in (SELF, PAST) and not _is_kernel_bot(spec):
                raise ConfigError(f"neural.tables[{index}]: {spec!r} is not allowed: use {SELF!r}, {PAST!r} or a "
                                  "kernel bot (random, greedy, planner[:options], expert[:options], learned, "
                                  "pretrained-2p, ...)")
    if settings.start is not None:
        from agents.neural import model_path, read_model

        try:
            network = read_model(model_path(settings.start))
        except (OSError, ValueError) as error:
            raise ConfigError(f"neural.start: {error}") from None
        if network.num_players != seats + 1 or list(network.hidden) != list(settings.hidden):
            raise ConfigError(f"neural.start {settings.start!r} is a {network.num_players}-seat network of layers "
                              f"{list(network.hidden)}: the run needs {seats + 1} seats and neural.hidden="
                              f"{list(settings.hidden)}")
    if settings.es_population % 2:
        raise ConfigError(f"neural.es_population={settings.es_population} is not allowed: use an even number "
                          "(mirrored pairs)")
    from evaluation.schedule import SEAT_ORDERS

    if settings.seat_orders not in SEAT_ORDERS:
        raise ConfigError(f"neural.seat_orders={settings.seat_orders!r} is not allowed: use one of "
                          f"{', '.join(SEAT_ORDERS)}")
    for key in ("curve_opponents", "final_opponents", "es_opponents"):
        specs = getattr(settings, key)
        if specs is None and key == "final_opponents":
            continue
        if not specs:
            raise ConfigError(f"neural.{key} is empty: give at least one kernel bot, e.g. [planner]")
        for spec in specs:
            bots = table_seats(spec)
            if not all(_is_kernel_bot(bot) for bot in bots):
                raise ConfigError(f"neural.{key}: {spec!r} is not allowed: use kernel bots (random, greedy, "
                                  "planner[:options], expert[:options], learned, pretrained-2p, ...), or a table "
                                  f"of the {seats} other seats' bots joined by {TABLE_JOIN!r} (planner+greedy+greedy)")
            if len(bots) > 1 and len(bots) != seats:
                raise ConfigError(f"neural.{key}: the table {spec!r} is not allowed: a table of rules.num_players="
                                  f"{seats + 1} lists the {seats} other seat(s), joined by {TABLE_JOIN!r}")


def _is_kernel_bot(spec: str) -> bool:
    from agents.batched.bots import kernel_bot_code

    try:
        return kernel_bot_code(spec) is not None
    except ValueError:
        return False


def dump_config(config: TrainConfig) -> str:
    """The resolved config as YAML (every key, defaults included)."""
    return yaml.safe_dump(config.to_dict(), sort_keys=False)


def describe_schema() -> str:
    """Every key with its default and help, for ``skipbo train --list-keys``."""
    lines = []

    def walk(cls: type, prefix: str) -> None:
        hints = typing.get_type_hints(cls)
        for field in dataclasses.fields(cls):
            if dataclasses.is_dataclass(hints[field.name]):
                walk(hints[field.name], prefix + field.name + ".")
                continue
            default = field.default if field.default is not dataclasses.MISSING else field.default_factory()
            lines.append(f"{prefix + field.name:28s} {default!r:36s} {field.metadata.get('help', '')}")

    walk(TrainConfig, "")
    return "\n".join(lines)
