"""The machinery of the training configs: a setting with its help and bounds, the checked reading of a section,
the declaration of a training backend, and the words the sections share.

A config section is a dataclass whose fields are made with :func:`setting` (default, help, bounds);
:func:`build` reads plain data (YAML) into it, naming the dotted key and the allowed values of the first wrong
value (:class:`ConfigError`). The sections every backend reads are :mod:`training.sections`; each backend's own
section, checks and resume state are its package's ``config.py``, declared by a :class:`Backend` and listed in
:mod:`training.backends`; :mod:`training.config` assembles them into ``TrainConfig`` and reads the YAML files.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import typing
from typing import Any, Callable, Literal, Optional
from agents.batched.bots import kernel_bot_code

SNAPSHOTS = "snapshots"
"""``opponents.mix`` and ``td.opponents`` kind: the frozen copies of the learner (the PPO backends' and the TD
learner's pool)."""
SELF = "self"
"""``opponents.mix`` kind of ``backend: rllib``: the seat is played by the learner itself; in a table of
``snes.tables`` or ``neural.tables``, the current mean or network."""
PAST = "past"
"""A seat of ``snes.tables`` or ``neural.tables``: an earlier generation's mean or network, drawn each generation."""


class ConfigError(ValueError):
    """A configuration that cannot run; the message names the key and the allowed values."""


@dataclasses.dataclass(frozen=True)
class Bounds:
    """The allowed range of a kind of numeric setting, shared by every section that has one (every number is also
    checked to be finite and of its type): ``min``, ``max``, ``min_exclusive``, and why a limit is where it is
    (``why_min``, ``why_max``: said in a refusal)."""

    min: Optional[float] = None
    max: Optional[float] = None
    min_exclusive: Optional[float] = None
    why_min: Optional[str] = None
    why_max: Optional[str] = None


LEARNING_RATE = Bounds(min_exclusive=0.0, max=1.0, why_max="a step size; a larger one overflows the weights")
"""Every optimiser's step size (``ppo.learning_rate``, ``pretrain.learning_rate``, ``neural.learning_rate``)."""
TEMPERATURE = Bounds(min=1e-3, max=1e6, why_min="the values are divided by it: a smaller one overflows their softmax")
"""A softmax temperature (``neural.temperature``)."""
PLAYED_GAMES = Bounds(min=1, max=1_000_000, why_max="games are time: a million take hours, skipbo evaluate's cap")
"""Games (or duplicate deals) played to measure or rank: evaluations, curves, fitness."""
RECORDED_HANDS = Bounds(min=1, max=20_000, why_max="the recorded positions of a hand take about a megabyte of memory")
"""Hands whose decisions are recorded and held in memory to be fitted (teacher games, lists of a generation)."""
GENERATIONS = Bounds(min=1, max=10_000, why_max="each generation adds an entry (and a backend's archive a network or "
                                                 "mean) to every later state.json, which a resume reads up to 64 MiB; "
                                                 "ten thousand take weeks")
"""Generations of an evolution or of fitting, and the counts measured in them (a window, an archive, a curve's
spacing): ``snes.generations``, ``neural.generations``, ``neural.window``, ..."""
STEPS = Bounds(min=1, max=10**10, why_max="ten billion learner steps take weeks at the batched engine's rate of "
                                            "tens of thousands a second")
"""Learner steps: ``budget.total_timesteps`` and the step intervals of snapshots, evaluations and checkpoints."""
MINUTES = Bounds(min_exclusive=0.0, max=525_600, why_max="a year of training")
"""A wall-clock budget in minutes (``budget.max_minutes``, ``pretrain.max_minutes``)."""
PASSES = Bounds(min=1, max=1000, why_max="each pass over the data is time: a thousand take days")
"""Passes (epochs) over a batch of data: ``ppo.n_epochs``, ``pretrain.epochs``, ``neural.epochs``, ..."""
BATCH = Bounds(min=1, max=2**20, why_max="a minibatch is held in memory; a larger one takes gigabytes")
"""A minibatch or sample size, in steps or lists (``ppo.batch_size``, ``rllib.train_batch_size``, ...)."""
POPULATION = Bounds(min=2, max=1024, why_max="every candidate plays every deal each generation: more make a "
                                              "generation take days at the batched engine's rate")
"""Candidates of an evolution strategy per generation (``snes.population``, ``neural.es_population``)."""
SPREAD = Bounds(min_exclusive=0.0, max=1e6, why_max="the spreads a resume reads back are at most 1e6")
"""An evolution's first spread (``snes.sigma``, ``neural.es_sigma``): a state file's spreads are checked up to it."""
LOSS_WEIGHT = Bounds(min=0.0, max=1e3, why_max="a loss term weighted more swamps the others and overflows the "
                                                "float32 gradients")
"""The weight of a loss term or penalty (``ppo.ent_coef``, ``ppo.vf_coef``, ``neural.outcome_weight``, ...)."""
PROCESSES = Bounds(min=1, max=4096, why_max="each is a process or thread held in memory")
"""CPUs, threads or processes of a run (``threads``, ``ray.workers``, ``rllib.num_env_runners``, ...)."""
KEPT = Bounds(min=1, max=1000, why_max="each one kept is a network held in memory and written into every "
                                        "checkpoint")
"""Copies kept: snapshots of the pool, checkpoints on disk, past networks (``opponents.max_snapshots``, ...)."""
SEED = Bounds(min=0, max=2**63 - 1, why_max="a seed is a 64-bit integer of the generators' state")
"""The run's seed."""
LAYER_WIDTH = Bounds(min=1, max=2**16, why_max="a wider layer passes the model file's cap at any depth")
"""The width of one hidden layer of a network (each item of ``network.hidden``)."""


def setting(default: Any, help: str, bounds: Optional[Bounds] = None, **checks: Any) -> Any:
    """A dataclass field with its documentation and range checks: a shared :class:`Bounds` and its own ``min``,
    ``max``, ``min_exclusive`` (which win over the shared ones), and for a list ``max_items``."""
    factory = (lambda: copy.deepcopy(default)) if isinstance(default, (list, dict)) else None
    shared = {} if bounds is None else {key: value for key, value in dataclasses.asdict(bounds).items()
                                        if value is not None}
    metadata = {"help": help, **shared, **checks}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


@dataclasses.dataclass(frozen=True)
class Backend:
    """One training backend, as the config loader and :mod:`training.run` read it from :mod:`training.backends`."""

    name: str
    """The value of ``backend:`` that selects it."""
    summary: str
    """What it trains, one phrase (the help of ``backend``)."""
    section: str
    """The key of its own config section."""
    settings: type
    """The dataclass of that section (its fields made with :func:`setting`)."""
    check: Callable[[Any], None]
    """Its cross-key checks of a whole ``TrainConfig`` (raise :class:`ConfigError`), after every type and range."""
    trainer: str
    """``module:Class`` of its trainer, imported when a run starts: ``Class(config, folder, progress=, out=).run()``
    returns a :class:`training.common.TrainResult`."""
    check_resume: Optional[Callable[[Any, Any], None]] = None
    """``(config, run folder)``: refuse (:class:`ConfigError`) a ``--resume`` whose budget is already spent, before
    any work; ``None`` when the trainer checks its budget itself."""
    reads_ray: bool = False
    """Whether it plays its games where the ``ray`` section says (``ray.address``)."""
    sections: tuple = ()
    """``(key, dataclass)`` of the top-level sections it reads beyond its own and those every backend reads
    (``training.sections``), shared with the other backends that declare the same dataclass (the PPO backends'
    ``training.ppo_sections.PPO_SECTIONS``); a key of a shared section (``budget``) adds its keys to that section."""


def is_kernel_bot(spec: str) -> bool:
    """Whether ``spec`` names a bot the batched engine plays in its kernels (``agents.batched.bots``)."""
    try:
        return kernel_bot_code(spec) is not None
    except ValueError:
        return False


# ---------------------------------------------------------------------- reading a section
def build(cls: type, data: Any, prefix: str) -> Any:
    """The section ``cls`` from plain data, every value checked (:class:`ConfigError` naming ``prefix + key``)."""
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
            values[name] = build(kind, value, key + ".")
        else:
            values[name] = _checked_value(key, value, kind, fields[name].metadata)
    return cls(**values)


def _checked_value(key: str, value: Any, kind: Any, checks: typing.Mapping) -> Any:
    value = _typed(key, value, kind)
    if isinstance(value, list) and "max_items" in checks and len(value) > checks["max_items"]:
        raise ConfigError(f"{key} has {len(value)} items: give at most {checks['max_items']} (every one is written "
                          "into each checkpoint's state)")
    if isinstance(value, list) and all(isinstance(item, (int, float)) for item in value):
        for index, item in enumerate(value):  # the bounds of a list of numbers hold for each item
            _checked_value(f"{key}[{index}]", item, type(item), checks)
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise ConfigError(f"{key}={value!r} is not allowed: use a finite number")
        if "min" in checks and value < checks["min"]:
            why = f" ({checks['why_min']})" if "why_min" in checks else ""
            raise ConfigError(f"{key}={value!r} is not allowed: use a number >= {checks['min']}{why}")
        if "max" in checks and value > checks["max"]:
            why = f" ({checks['why_max']})" if "why_max" in checks else ""
            raise ConfigError(f"{key}={value!r} is not allowed: use a number <= {checks['max']}{why}")
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


def describe_section(cls: type, prefix: str = "") -> list[str]:
    """One line per key of ``cls`` (nested sections walked): the dotted key, its default, its help."""
    lines = []
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        if dataclasses.is_dataclass(hints[field.name]):
            lines += describe_section(hints[field.name], prefix + field.name + ".")
            continue
        default = field.default if field.default is not dataclasses.MISSING else field.default_factory()
        lines.append(f"{prefix + field.name:28s} {default!r:36s} {field.metadata.get('help', '')}")
    return lines
