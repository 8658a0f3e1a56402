"""The config sections every backend reads: the run's name, seed and rules, the time budget (``budget.max_minutes``),
the checkpoints and where Ray plays (``ray``), with their checks.

A backend's own section is its package's ``config.py`` (:mod:`training.backends` lists them); the sections only
some backends read are declared by those backends (``Backend.sections``: the PPO backends' ``env``, ``opponents``,
``network``, ``ppo``, ``evaluation`` and ``budget.total_timesteps`` are :mod:`training.ppo_sections`). The fields
are made with :func:`training.schema.setting` (default, help, bounds).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, Optional

from skipbo_env.envs.common import ENV_MAX_TURNS
from skipbo_env.rules import Rules
from training.schema import KEPT, MINUTES, PROCESSES, SEED, STEPS, ConfigError, setting


@dataclasses.dataclass
class BudgetConfig:
    max_minutes: Optional[float] = setting(None, "stop (with a checkpoint) once the run has trained this many "
                                                  "minutes over the whole run, resumes included (backend: neural: a "
                                                  "guard; pretraining has its own pretrain.max_minutes)", MINUTES)


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
    budget: BudgetConfig = dataclasses.field(default_factory=BudgetConfig)
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
    check_ray(config, ray_readers, own_section)


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
