"""``skipbo train CONFIG``: read a training config, open the run folder and start the backend it names.

:func:`train` checks the config (``training.config``) and every bot spec it names, creates the run folder
(``training.checkpoint``: resolved ``config.yaml``, ``run.json``), or with ``resume`` opens an existing one,
and hands the run to the trainer of ``backend``: ``sb3`` (:mod:`training.trainer`), ``snes``
(:mod:`training.learned`), ``rllib`` (:mod:`training.rllib.trainer`) or ``neural`` (:mod:`training.neural`).
What every backend shares (the result, the results table, the evaluation, seeds and clock) is in
:mod:`training.common`.

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
from training.checkpoint import RLLIB_STATE_COUNTERS, STATE_COUNTERS, RunFolder, read_checkpoint_state
from training.common import TrainResult, utc_now
from training.config import SELF, SNAPSHOTS, ConfigError, TrainConfig, dump_config, load_config
from training.trainer import SB3_STATE, Trainer


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
    """Run (or continue, when ``folder`` holds a checkpoint) the run with the trainer of ``config.backend``."""
    note = busy_machine_note(config.threads)
    if note:
        print(note, file=out, flush=True)
    if config.backend == "neural":
        from training.neural import NeuralTrainer

        return NeuralTrainer(config, folder, progress=progress, out=out).run()
    if config.backend == "snes":
        from training.learned import SNESTrainer

        return SNESTrainer(config, folder, progress=progress, out=out).run()
    if config.backend == "rllib":
        from training.rllib.trainer import RLlibTrainer

        return RLlibTrainer(config, folder, progress=progress, out=out).run()
    return Trainer(config, folder, progress=progress, out=out).run()


def check_same_network(config: TrainConfig, saved: TrainConfig, folder: RunFolder) -> None:
    """On ``--resume`` the checkpoint's weights fix the network: an override may not change it."""
    if config.network != saved.network:
        raise ConfigError(f"network cannot change on --resume: the checkpoints of {folder.path} hold "
                          f"network.hidden={saved.network.hidden} with activation {saved.network.activation!r}")


def check_budget_left(config: TrainConfig, folder: RunFolder) -> None:
    """On ``--resume``: refuse (naming the key to raise) a finished run whose step or time budget is already
    spent. A run killed after its last checkpoint but before its final evaluation was written resumes to
    write it."""
    checkpoint = folder.latest_checkpoint()
    if checkpoint is None or config.backend in ("snes", "neural"):  # these trainers check their own budget
        return
    if config.backend == "rllib":
        from training.rllib.trainer import RLLIB_STATE

        state = read_checkpoint_state(checkpoint, RLLIB_STATE_COUNTERS, RLLIB_STATE)
    else:
        state = read_checkpoint_state(checkpoint, STATE_COUNTERS, SB3_STATE)
    if not folder.evaluation_path.is_file():
        return
    budget = config.budget
    if state["timesteps"] >= budget.total_timesteps:
        raise ConfigError(f"{folder.path} already trained {state['timesteps']:,} of budget.total_timesteps="
                          f"{budget.total_timesteps:,} steps: give more, e.g. skipbo train --resume {folder.path} "
                          f"budget.total_timesteps={2 * budget.total_timesteps}")
    trained = state["wall_seconds"] if config.backend == "rllib" else state["training_seconds"]  # what each budget counts
    if budget.max_minutes is not None and trained >= 60 * budget.max_minutes:
        raise ConfigError(f"{folder.path} already trained {trained / 60:.1f} of budget.max_minutes="
                          f"{budget.max_minutes:g} minutes: give more, e.g. skipbo train --resume {folder.path} "
                          f"budget.max_minutes={2 * budget.max_minutes:g}")


def check_specs(config: TrainConfig) -> None:
    """Load every bot the run will use once, so a bad name stops the run before it starts."""
    specs = [("opponents.mix", kind) for kind in config.opponents.mix if kind not in (SNAPSHOTS, SELF)]
    specs += [("evaluation.opponents", spec) for spec in config.evaluation.opponents]
    specs += [("evaluation.final_opponents", spec) for spec in config.evaluation.final_opponents]
    if config.pretrain.enabled:
        specs.append(("pretrain.teacher", config.pretrain.teacher))
    for key, spec in specs:
        try:
            load_policy(spec)
        except (ValueError, OSError) as error:
            raise ConfigError(f"{key}: {error}") from None
