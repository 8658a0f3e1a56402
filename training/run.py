"""``skipbo train CONFIG``: read a training config, open the run folder and start the backend it names.

:func:`train` checks the config (``training.config``) and every bot spec it names, creates the run folder
(``training.checkpoint``: resolved ``config.yaml``, ``run.json``), or with ``resume`` opens an existing one,
and hands the run to the trainer of ``backend``, as the table of backends says (:mod:`training.backends`:
``sb3``, ``rllib``, ``snes``, ``neural``, ``td``, one package each). What every backend shares (the result, progress,
the evaluation and its file, the best model, the summary, seeds and clock) is in :mod:`training.common`.

``skipbo train --resume RUN_DIR`` continues a run from its last checkpoint (after a kill, a
Ctrl-C or a spent budget) with the run's own config; overrides may follow (for example a larger
``budget.max_minutes`` or ``budget.total_timesteps`` to train on), except of ``network``, which
the checkpoint fixes. A run whose budget is already spent is refused, naming the key to raise.

Safety: opponent, evaluation and teacher specs are ``agents.load_policy`` specs. Saved model
files among them cannot run code; a ``module:Class`` or ``file.py:Class`` spec imports and runs
that code, also when it comes from a config file or from the saved config of a run folder given
to ``--resume``: train only configs and run folders you trust.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TextIO

from agents.loading import load_policy
from skipbo_env.encoding import OBS_SIZE
from skipbo_env.files import check_creatable
from skipbo_env.provenance import versions
from training.backends import BACKENDS, trainer_class
from training.checkpoint import RunFolder
from training.common import TrainResult, utc_now
from training.config import ConfigError, TrainConfig, dump_config, load_config, renamed_config_note
from training.schema import SELF, SNAPSHOTS


def train(config: TrainConfig | str | Path | None, overrides: list[str] = (), *, resume: str | Path | None = None,
          progress: bool = True, out: TextIO | None = None, command: str | None = None) -> TrainResult:
    """Run (or with ``resume``, continue) a training run; see the module docstring.

    ``config`` is a :class:`TrainConfig` or a YAML path (ignored when resuming: the run's own
    config is used, with ``overrides`` applied).
    """
    out = out if out is not None else sys.stdout
    if resume is not None:
        folder = RunFolder.open(resume)
        config = load_config(folder.config_path, overrides)
        check_same_network(config, load_config(folder.config_path), folder)
        check_specs(config)
        fallback = folder.missing_pointer()
        check_budget_left(config, folder)
        if fallback is not None:
            print(fallback, file=out, flush=True)
        return run_backend(config, folder, progress, out)
    if not isinstance(config, TrainConfig):
        note = renamed_config_note(config)
        if note:
            print(note, file=out, flush=True)
        config = load_config(config, overrides)
    elif overrides:
        raise ConfigError("overrides apply to a config file; edit the TrainConfig object instead")
    check_specs(config)
    check_creatable(Path(config.output_dir))
    folder = RunFolder.create(config.output_dir, config.name, dump_config(config), {
        "command": command, "seed": config.seed, "rules": config.make_rules().to_dict(),
        "versions": versions(), "created": utc_now(), "obs_size": OBS_SIZE,
    })
    try:
        return run_backend(config, folder, progress, out)
    except Exception:
        if folder.latest_checkpoint() is None:  # nothing to resume: leave no empty run folder behind
            shutil.rmtree(folder.path, ignore_errors=True)
        raise


def busy_machine_note(threads: int) -> str | None:
    """A note when the machine's cores are already busy and ``threads`` torch threads would share them: threads
    that wait on each other fit many times slower (two runs of ``threads: 2`` on two cores: 10 to 40 times)."""
    cores = os.cpu_count() or 1
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if threads <= 1 or load + threads <= cores + 0.5:
        return None
    return (f"note: this machine is busy (load {load:.1f} on {cores} cores), and threads={threads} will wait on the "
            "other work's threads: beside another run, give each threads=1")


def run_backend(config: TrainConfig, folder: RunFolder, progress: bool, out: TextIO) -> TrainResult:
    """Run (or continue, when ``folder`` holds a checkpoint) the run with the trainer of ``config.backend``
    (:data:`training.backends.BACKENDS`)."""
    note = busy_machine_note(config.threads)
    if note:
        print(note, file=out, flush=True)
    trainer = trainer_class(BACKENDS[config.backend])
    return trainer(config, folder, progress=progress, out=out).run()


def reads(config: TrainConfig, section: str) -> bool:
    """Whether the run's backend reads ``section`` beyond the shared ones (declared in ``Backend.sections``)."""
    return any(key == section for key, _ in BACKENDS[config.backend].sections)


def check_same_network(config: TrainConfig, saved: TrainConfig, folder: RunFolder) -> None:
    """On ``--resume`` the checkpoint's weights fix the network (of a backend that reads ``network``): an
    override may not change it."""
    if reads(config, "network") and config.network != saved.network:
        raise ConfigError(f"network cannot change on --resume: the checkpoints of {folder.path} hold "
                          f"network.hidden={saved.network.hidden} with activation {saved.network.activation!r}")


def check_budget_left(config: TrainConfig, folder: RunFolder) -> None:
    """On ``--resume``: refuse (naming the key to raise) a finished run whose budget is already spent, with the
    backend's own check (``check_resume`` of its :class:`training.schema.Backend`; a backend without one checks
    in its trainer). A run killed after its last checkpoint but before its final evaluation resumes to write it."""
    check_resume = BACKENDS[config.backend].check_resume
    if check_resume is not None:
        check_resume(config, folder)


def check_specs(config: TrainConfig) -> None:
    """Load every bot the run will use once, so a bad name stops the run before it starts (the sections its
    backend reads: ``opponents`` and ``evaluation`` are the PPO backends')."""
    specs = []
    if reads(config, "opponents"):
        specs += [("opponents.mix", kind) for kind in config.opponents.mix if kind not in (SNAPSHOTS, SELF)]
    if reads(config, "evaluation"):
        specs += [("evaluation.opponents", spec) for spec in config.evaluation.opponents]
        specs += [("evaluation.final_opponents", spec) for spec in config.evaluation.final_opponents]
    if config.pretrain.enabled:
        specs.append(("pretrain.teacher", config.pretrain.teacher))
    for key, spec in specs:
        try:
            load_policy(spec)
        except (ValueError, OSError) as error:
            raise ConfigError(f"{key}: {error}") from None
