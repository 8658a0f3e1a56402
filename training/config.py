"""Training configurations: the YAML schema of the configs, its checks and overrides, and the shipped configs.

A run is described by one YAML file. The shipped configs are ``configs/*.yaml`` at the repository root and travel
inside the package (a wheel installs them as ``training/configs/``; :func:`shipped_configs`, ``skipbo train
--list-configs``): ``skipbo train quickstart`` runs ``configs/quickstart.yaml`` wherever the package is installed.
A CONFIG is a shipped config's name or the path of a YAML file (:func:`config_path`); a config's old name
(:data:`RENAMED_CONFIGS`) still names it, with a one-line note, and so does a path ``configs/NAME.yaml`` or
``training/configs/NAME.yaml`` (where a checkout kept them before) when no such file exists. Every section and key
is listed by ``skipbo train --list-keys`` with its default; a key the schema does not know, or a value of the
wrong type or range, raises :class:`ConfigError` naming the dotted key and what is allowed, before anything is
trained.

``skipbo train CONFIG key.path=value ...`` overrides single keys; each value is read as YAML
(``ppo.learning_rate=1e-4``, ``network.hidden=[128,128]``, ``pretrain.enabled=false``).

Sections (see ``configs/quickstart.yaml`` for a commented example):

- the keys every backend shares (:mod:`training.sections`): ``name``, ``seed``, ``device``, ``output_dir``,
  ``threads``; ``rules`` (any ``skipbo_env.Rules`` setting, RULES.md, checked by ``Rules`` itself);
  ``budget.max_minutes``; ``checkpoint``; ``ray`` (where ``backend: snes`` and ``backend: neural`` play their
  games: this process, or Ray tasks on a local instance or a cluster, :mod:`training.distributed`; the result for a
  seed is the same);
- the sections some backends declare (``Backend.sections``, :func:`declared_sections`): the two PPO backends'
  ``env``, ``opponents`` (the self-play pool), ``network``, ``ppo``, ``evaluation`` and ``budget.total_timesteps``
  (:mod:`training.ppo_sections`), each added once, a ``budget`` key to the shared ``budget`` section;
- ``backend``: which backend trains (:mod:`training.backends`: ``sb3``, the default, ``rllib``, ``snes``,
  ``neural``, ``td``), and one section per backend, declared in its package's ``config.py``: ``pretrain``
  (:mod:`training.sb3.config`), ``rllib`` (:mod:`training.rllib.config`), ``snes`` (:mod:`training.snes.config`),
  ``neural`` (:mod:`training.neural.config`), ``td`` (:mod:`training.td.config`).
"""

from __future__ import annotations

import copy
import dataclasses
import typing
from pathlib import Path
from typing import Literal

import yaml

from skipbo_env.files import FileRefused, read_file_text
from training.backends import BACKENDS
from training.schema import ConfigError, build, describe_section, setting
from training.sections import SharedSettings, check_shared

MAX_CONFIG_BYTES = 2**20
"""The largest config file read (a config is a few kilobytes)."""

DEFAULT_BACKEND = next(iter(BACKENDS))
"""The backend of a config without a ``backend:`` key: the first of :data:`training.backends.BACKEND_PACKAGES`."""



def backend_help(backends: dict = BACKENDS) -> str:
    """The help of the ``backend`` key: each backend's name and summary."""
    return "; ".join(f"{name}: {backend.summary}" for name, backend in backends.items())


def declared_sections(backends: dict = BACKENDS) -> dict[str, list[type]]:
    """``{key: [dataclass, ...]}`` of the sections the backends declare beyond their own (``Backend.sections``),
    each dataclass once however many backends declare it, in the order they are first declared."""
    declared: dict[str, list[type]] = {}
    for backend in backends.values():
        for key, cls in backend.sections:
            if cls not in declared.setdefault(key, []):
                declared[key].append(cls)
    return declared


def _fields_of(cls: type) -> list[tuple]:
    """``(name, type, field)`` copies of the fields of the dataclass ``cls``, for a section made of several."""
    hints = typing.get_type_hints(cls)
    fields = []
    for field in dataclasses.fields(cls):
        kept = {"metadata": field.metadata}
        if field.default is not dataclasses.MISSING:
            kept["default"] = field.default
        if field.default_factory is not dataclasses.MISSING:
            kept["default_factory"] = field.default_factory
        fields.append((field.name, hints[field.name], dataclasses.field(**kept)))
    return fields


def section_of(key: str, classes: list[type]) -> type:
    """The section ``key`` of a whole config: the one dataclass declaring it, or one holding the keys of all of
    them (the shared section of that name first, :class:`training.sections.SharedSettings`)."""
    shared = typing.get_type_hints(SharedSettings).get(key)
    parts = ([shared] if shared is not None else []) + classes
    if len(parts) == 1:
        return parts[0]
    fields = [field for part in parts for field in _fields_of(part)]
    names = [name for name, _, _ in fields]
    if len(set(names)) != len(names):
        raise TypeError(f"the section {key} is declared twice with the same key: {sorted(names)}")
    return dataclasses.make_dataclass(parts[0].__name__, fields, namespace={"__module__": __name__})


TrainConfig = dataclasses.make_dataclass(
    "TrainConfig",
    [("backend", Literal[tuple(BACKENDS)], setting(DEFAULT_BACKEND, backend_help()))]
    + [(key, section, dataclasses.field(default_factory=section))
       for key, section in ((key, section_of(key, classes)) for key, classes in declared_sections().items())]
    + [(backend.section, backend.settings, dataclasses.field(default_factory=backend.settings))
       for backend in BACKENDS.values()],
    bases=(SharedSettings,), namespace={"__module__": __name__, "__doc__": (
        "A whole run's config: the shared keys (:class:`training.sections.SharedSettings`), ``backend``, the "
        "sections some backends declare (``Backend.sections``, :func:`declared_sections`) and every backend's "
        "section (:data:`training.backends.BACKENDS`). It holds every section whichever backend runs, so a config "
        "may keep another backend's keys.")})


# ---------------------------------------------------------------------- the shipped configs
SHIPPED_CONFIGS = Path(__file__).resolve().parent / "configs"
"""The shipped configs in an installed wheel (``setup.py`` installs the repository's ``configs/`` there)."""
CHECKOUT_CONFIGS = Path(__file__).resolve().parents[1] / "configs"
"""The shipped configs in a checkout (and in an editable install): ``configs/`` at the repository root."""
RENAMED_CONFIGS = {
    "pretrained_2p": "ppo_from_planner_2p",
    "learned_2p": "snes_2p",
    "learned_4p": "snes_4p",
}
"""Old names of shipped configs -> their names now (a config is named for what it trains and how)."""
OLD_CONFIG_FOLDERS = (Path("configs"), Path("training") / "configs")
"""Where a checkout kept the shipped configs: a missing ``FOLDER/NAME.yaml`` there names the shipped ``NAME``."""


def shipped_configs() -> dict[str, Path]:
    """The shipped configs by name: ``{"quickstart": .../configs/quickstart.yaml, ...}``."""
    folder = SHIPPED_CONFIGS if SHIPPED_CONFIGS.is_dir() else CHECKOUT_CONFIGS
    return {path.stem: path for path in sorted(folder.glob("*.yaml"))}


def _shipped_name(config: str | Path) -> str | None:
    """The shipped config's name ``config`` means (its name, its old name, its old path), ``None`` for a file."""
    path, shipped = Path(config), shipped_configs()
    name = str(config)
    if name not in shipped and name not in RENAMED_CONFIGS:
        if path.exists() or path.parent not in OLD_CONFIG_FOLDERS or path.suffix != ".yaml":
            return None
        name = path.stem
    name = RENAMED_CONFIGS.get(name, name)
    return name if name in shipped else None


def config_path(config: str | Path) -> Path:
    """The file a CONFIG names: a shipped config's name (``quickstart``) or old name, else a path; a path
    ``configs/NAME.yaml`` or ``training/configs/NAME.yaml`` that does not exist names the shipped ``NAME``.
    Raises :class:`ConfigError` naming the shipped configs when it names nothing."""
    name = _shipped_name(config)
    if name is not None:
        return shipped_configs()[name]
    path = Path(config)
    if path.exists():
        return path
    raise ConfigError(f"config file {str(path)!r} does not exist: give a YAML file or a shipped config "
                      f"({', '.join(shipped_configs())}; skipbo train --list-configs)")


def renamed_config_note(config: str | Path) -> str | None:
    """One line when ``config`` names a shipped config by its old name (:data:`RENAMED_CONFIGS`)."""
    old = Path(config).stem if Path(config).suffix == ".yaml" else str(config)
    if old not in RENAMED_CONFIGS or _shipped_name(config) is None:
        return None
    return f"note: the config {old!r} is now called {RENAMED_CONFIGS[old]!r} (the old name still works)"


# ---------------------------------------------------------------------- loading
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
    """A checked :class:`TrainConfig` from plain data (as read from YAML): every key's type and range, the rules,
    the shared keys together (:func:`training.sections.check_shared`), then the backend's own checks."""
    config = build(TrainConfig, data, "")
    try:
        config.make_rules()
    except (TypeError, ValueError) as error:
        raise ConfigError(f"rules: {error}") from None
    backend = BACKENDS[config.backend]
    check_shared(config, [name for name, other in BACKENDS.items() if other.reads_ray], backend.section)
    backend.check(config)
    return config


def dump_config(config: TrainConfig) -> str:
    """The resolved config as YAML (every key, defaults included)."""
    return yaml.safe_dump(config.to_dict(), sort_keys=False)


def describe_schema() -> str:
    """Every key with its default and help, for ``skipbo train --list-keys``: the keys every backend reads, then
    ``backend``, then under each backend of :data:`training.backends.BACKENDS` (read now) its own section and the
    sections it declares (those an earlier backend declared too are named, not listed again)."""
    lines = describe_section(SharedSettings)
    lines.append(f"{'backend':28s} {DEFAULT_BACKEND!r:36s} {backend_help()}")
    listed: dict[tuple[str, type], str] = {}
    for name, backend in BACKENDS.items():
        lines.append(f"-- backend: {name}: {backend.summary}")
        lines += describe_section(backend.settings, backend.section + ".")
        again: dict[str, list[str]] = {}
        for key, cls in backend.sections:
            if (key, cls) in listed:
                again.setdefault(listed[key, cls], []).append(key)
            else:
                listed[key, cls] = name
                lines += describe_section(cls, key + ".")
        lines += [f"-- backend: {name} reads {', '.join(keys)} too, as listed under backend: {first}"
                  for first, keys in again.items()]
    return "\n".join(lines)
