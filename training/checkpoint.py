"""Run folders and checkpoints: atomic writes, and resuming a run that was killed.

A run folder::

    runs/NAME-YYYYmmdd-HHMMSS/
        config.yaml            the resolved config (every key), as the run started
        run.json               rules, seed, versions, command line, start time
        tensorboard/           TensorBoard event files (PPO losses, episode length, win rates)
        checkpoints/
            latest.json        {"checkpoint": "step_000100000", ...}: the last complete checkpoint
            step_000100000/    one checkpoint (see below); the oldest are pruned
        model.zip              the final policy (agents.load_policy("runs/.../model.zip"))
        best_model.zip         the policy of the best periodic evaluation (mean win rate)
        evaluation.json        the final evaluation tables
        learning_curve.png     the curve of the periodic evaluations (training.learning_curve)

A checkpoint folder holds ``learner.pt`` (the whole actor-critic ``state_dict``),
``optimizer.pt`` (Adam's state), ``pool.pt`` (the snapshot weights of the opponent pool),
``state.json`` (steps, schedules, generator states, evaluation history; compact JSON), a copy of
``run.json`` and ``config.yaml``, and ``model.zip`` (the policy at that step, loadable like any
model). Every file is written to a temporary name and renamed, and the folder itself is built
under a temporary name and renamed into place, under a name no folder has (a second checkpoint
of the same step is ``step_000100000-2``), before ``latest.json`` points to it; only then are old
checkpoints pruned. So at every instant ``latest.json`` names a complete folder, and a kill at
any moment leaves a run that resumes (tests/training/test_checkpoints.py kills a save at each
of its steps). Without ``latest.json`` a resume falls back to the newest complete checkpoint and
says so; a run folder without any checkpoint is refused, never restarted from the beginning.

Every value read back is checked (:mod:`training.state_checks`): a state file is read as every
named file is (a regular file of bounded size) and each field for type, range and finiteness;
every tensor file is read back with ``torch.load(weights_only=True)`` (resuming never unpickles
objects) and its floating-point tensors checked to be finite.
"""

from __future__ import annotations

import datetime
import io
import os
import re
import shutil
import tempfile
from pathlib import Path

from skipbo_env.files import (
    FileRefused,
    current_umask,
    json_text,
    fsync_directory,
    read_file_bytes,
    write_bytes_atomically,
    write_json_atomically,
    write_text_atomically,
)
from training.schema import ConfigError
from training.state_checks import (
    COUNT,
    PROBABILITY,
    SECONDS,
    CheckpointError,
    Field,
    check_fields,
    check_finite_tensors,
    finite_numbers,
    list_of,
    mapping_of,
    optional,
    read_json_object,
    record,
)

CHECKPOINTS = "checkpoints"
LATEST = "latest.json"
TENSORBOARD = "tensorboard"
CHECKPOINT_NAME = re.compile(r"step_(\d{9,})(?:-(\d+))?")
"""``step_NNNNNNNNN``, or ``step_NNNNNNNNN-K`` for the K-th checkpoint of the same step."""
MAX_TENSOR_BYTES = 2**31
"""The largest tensor file read back (a model file may be 256 MB; the optimizer holds twice the weights)."""


def tensors_to_bytes(tensors) -> bytes:
    """``torch.save`` of plain containers of tensors, into bytes."""
    import torch

    buffer = io.BytesIO()
    torch.save(tensors, buffer)
    return buffer.getvalue()


def load_tensors(path: str | Path):
    """Read a tensor file written by :func:`tensors_to_bytes`, never unpickling objects;
    :class:`CheckpointError` when it is missing, is not such a file or holds a NaN or infinite value."""
    import torch

    try:
        data = read_file_bytes(path, max_bytes=MAX_TENSOR_BYTES, what="tensor file")
    except FileRefused as error:
        raise CheckpointError(f"cannot resume: {error}") from None
    try:
        tensors = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises RuntimeError, EOFError, UnpicklingError, ... for a broken file
        raise CheckpointError(f"cannot resume from {path}: it is not a readable tensor file "
                              f"({type(error).__name__}: {' '.join(str(error).split())[:300]})") from None
    check_finite_tensors(tensors, path)
    return tensors


# ---------------------------------------------------------------------- run folders
class RunFolder:
    """The folder of one training run: its checkpoints, logs and final model."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @classmethod
    def create(cls, output_dir: str | Path, name: str, config_yaml: str, run_info: dict) -> "RunFolder":
        """A new, uniquely named run folder with ``config.yaml`` and ``run.json`` written in it."""
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        base = Path(output_dir) / f"{name}-{stamp}"
        path, suffix = base, 1
        while True:
            try:
                path.mkdir(parents=True)
                break
            except FileExistsError:
                suffix += 1
                path = base.with_name(f"{base.name}-{suffix}")
        folder = cls(path)
        write_text_atomically(folder.config_path, config_yaml)
        write_json_atomically(folder.run_info_path, run_info)
        return folder

    @classmethod
    def open(cls, path: str | Path) -> "RunFolder":
        """An existing run folder, checked to be one (for ``--resume``)."""
        folder = cls(path)
        if not folder.path.is_dir():
            raise FileNotFoundError(f"run folder {str(folder.path)!r} does not exist")
        if not folder.config_path.is_file():
            raise FileNotFoundError(f"{str(folder.path)!r} is not a run folder: it has no config.yaml")
        return folder

    @property
    def config_path(self) -> Path:
        return self.path / "config.yaml"

    @property
    def run_info_path(self) -> Path:
        return self.path / "run.json"

    @property
    def tensorboard_dir(self) -> Path:
        return self.path / TENSORBOARD

    @property
    def checkpoints_dir(self) -> Path:
        return self.path / CHECKPOINTS

    @property
    def model_path(self) -> Path:
        return self.path / "model.zip"

    @property
    def best_model_path(self) -> Path:
        return self.path / "best_model.zip"

    @property
    def evaluation_path(self) -> Path:
        return self.path / "evaluation.json"

    @property
    def curve_path(self) -> Path:
        return self.path / "learning_curve.png"

    def run_info(self) -> dict:
        return read_json_object(self.run_info_path)

    # ------------------------------------------------------------------ checkpoints
    def save_checkpoint(self, step: int, files: dict[str, bytes], state: dict, keep: int) -> Path:
        """Write a complete checkpoint folder atomically, point ``latest.json`` at it, prune old ones.

        The steps, in order (a kill between any two leaves ``latest.json`` naming a complete folder):
        build the folder under a temporary name; rename it to a name no folder has; flush the folder's
        entries; replace ``latest.json`` atomically; prune (never the folder ``latest.json`` names)."""
        self.checkpoints_dir.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=self.checkpoints_dir, prefix=f".step_{step:09d}."))
        os.chmod(staging, 0o777 & ~current_umask())
        try:
            for file_name, data in files.items():
                write_bytes_atomically(staging / file_name, data)
            write_bytes_atomically(staging / "state.json", compact_json(state))
            shutil.copy2(self.run_info_path, staging / "run.json")
            shutil.copy2(self.config_path, staging / "config.yaml")
            final = self._unused_name(step)
            os.rename(staging, final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        fsync_directory(self.checkpoints_dir)
        write_json_atomically(self.checkpoints_dir / LATEST, {"checkpoint": final.name, "step": step})
        self._prune(keep, final.name)
        return final

    def _unused_name(self, step: int) -> Path:
        """``step_NNNNNNNNN``, or ``step_NNNNNNNNN-K`` with the first K no folder has yet."""
        name = self.checkpoints_dir / f"step_{step:09d}"
        again = 2
        while name.exists():
            name = self.checkpoints_dir / f"step_{step:09d}-{again}"
            again += 1
        return name

    def checkpoints(self) -> list[Path]:
        """The complete checkpoint folders (renamed into place, with a ``state.json``), oldest first."""
        if not self.checkpoints_dir.is_dir():
            return []
        found = [path for path in self.checkpoints_dir.iterdir()
                 if CHECKPOINT_NAME.fullmatch(path.name) and (path / "state.json").is_file()]
        return sorted(found, key=lambda path: checkpoint_order(path.name))

    def latest_checkpoint(self) -> Path | None:
        """The checkpoint ``latest.json`` names; without ``latest.json`` the newest complete checkpoint (see
        :meth:`missing_pointer`); ``None`` when the run has none yet."""
        pointer = self.checkpoints_dir / LATEST
        if not pointer.exists():
            found = self.checkpoints()
            return found[-1] if found else None
        name = read_json_object(pointer).get("checkpoint")
        if not isinstance(name, str) or not CHECKPOINT_NAME.fullmatch(name):
            raise CheckpointError(f"{pointer} names no checkpoint folder ({name!r}); it should be "
                                  '{"checkpoint": "step_NNNNNNNNN", ...}')
        checkpoint = self.checkpoints_dir / name
        if not (checkpoint / "state.json").is_file():
            raise CheckpointError(f"{pointer} points to {checkpoint.name}, which is missing or incomplete")
        return checkpoint

    def missing_pointer(self) -> str | None:
        """One line for a resume when ``latest.json`` is missing: which checkpoint it falls back to. A run
        folder with no checkpoint at all is refused (:class:`CheckpointError`): resuming it would start over."""
        if (self.checkpoints_dir / LATEST).exists():
            return None
        found = self.checkpoints()
        if not found:
            raise CheckpointError(f"cannot resume {self.path}: it has no checkpoint (it stopped before its first "
                                  f"one); start the run again: skipbo train {self.config_path}")
        return (f"{self.checkpoints_dir / LATEST} is missing: resuming from the newest complete checkpoint, "
                f"{found[-1].name}")

    def _prune(self, keep: int, latest: str) -> None:
        finished = self.checkpoints()
        for old in finished[:-keep]:
            if old.name != latest:
                shutil.rmtree(old, ignore_errors=True)
        for leftover in self.checkpoints_dir.glob(".step_*"):
            shutil.rmtree(leftover, ignore_errors=True)


def compact_json(data) -> bytes:
    """``data`` as JSON without spaces or indentation: a checkpoint's ``state.json`` and the neural backend's
    model files hold whole networks, which indentation would make several times larger than what a resume reads
    back (:data:`training.state_checks.MAX_STATE_BYTES`, ``agents.neural.MAX_MODEL_BYTES``; ``neural.hidden`` is
    checked against both)."""
    return json_text(data, sort_keys=True, compact=True).encode()


def checkpoint_order(name: str) -> tuple[int, int]:
    """``(step, K)`` of a checkpoint folder's name (K is 1 for ``step_NNNNNNNNN``), for sorting by age."""
    found = CHECKPOINT_NAME.fullmatch(name)
    return int(found.group(1)), int(found.group(2) or 1)


def step_of(checkpoint: Path) -> int:
    """The step a checkpoint folder is named for."""
    return checkpoint_order(checkpoint.name)[0]


def check_step(value: int, checkpoint: Path, field: str) -> None:
    """Refuse a state whose ``field`` (its step or generation) is not the step its checkpoint folder is named for."""
    if value != step_of(checkpoint):
        raise CheckpointError(f"cannot resume from {checkpoint / 'state.json'}: {field!r} is {value}, but the "
                              f"checkpoint folder {checkpoint.name} is of step {step_of(checkpoint)}")


def read_checkpoint_state(checkpoint: Path, counters: tuple[str, ...], extra: dict[str, Field]) -> dict:
    """A checkpoint's ``state.json``, every value a resumed PPO run reads checked (:mod:`training.state_checks`):
    the backend's ``counters`` (``STATE_COUNTERS`` of :mod:`training.sb3.config` or :mod:`training.rllib.config`),
    the clock, the snapshot steps, the evaluation history, the best evaluation, and the backend's ``extra``
    fields; ``timesteps`` must be the step the checkpoint folder is named for."""
    path = checkpoint / "state.json"
    state = check_fields(read_json_object(path), {**{key: COUNT for key in counters}, **PPO_STATE, **extra},
                         path)
    check_step(state["timesteps"], checkpoint, "timesteps")
    for key, value in (("snapshot_steps", max(state["snapshot_steps"], default=0)),
                       ("best", (state["best"] or {}).get("timesteps", 0))):
        if value > state["timesteps"]:
            raise CheckpointError(f"cannot resume from {path}: {key!r} names step {value}, after the checkpoint's "
                                  f"step {state['timesteps']}")
    return state


RESULTS = mapping_of(record({"games": COUNT, "win_rate": PROBABILITY, "ci95": finite_numbers(2, 0, 1)}))
"""An evaluation: per opponent (or table) its games, win rate and 95% interval (other keys unchecked)."""
HISTORY_POINT = {"timesteps": COUNT, "results": RESULTS}
"""The fields of a point of the learning curve every backend writes (the step it was measured at, its results)."""
HISTORY = list_of(record(HISTORY_POINT))
"""The periodic evaluations of a run, oldest first."""
PPO_STATE = {"wall_seconds": SECONDS, "snapshot_steps": list_of(COUNT), "history": HISTORY,
             "best": optional(record({"score": PROBABILITY, "timesteps": COUNT}))}
"""The fields both PPO trainers (SB3 and RLlib) save beside their counters."""


def check_ppo_budget_left(config, folder: RunFolder, counters: tuple[str, ...], extra: dict[str, Field],
                          clock: str) -> None:
    """``--resume`` of a PPO run (``check_resume`` of sb3 and rllib): refuse, naming the key to raise, a finished
    run (its final evaluation written) whose ``budget.total_timesteps`` or ``budget.max_minutes`` is spent;
    ``clock`` is the state's field the minutes count (the minutes of PPO, or the wall time)."""
    checkpoint = folder.latest_checkpoint()
    if checkpoint is None:
        return
    state = read_checkpoint_state(checkpoint, counters, extra)
    if not folder.evaluation_path.is_file():
        return
    budget = config.budget
    if state["timesteps"] >= budget.total_timesteps:
        raise ConfigError(f"{folder.path} already trained {state['timesteps']:,} of budget.total_timesteps="
                          f"{budget.total_timesteps:,} steps: give more, e.g. skipbo train --resume {folder.path} "
                          f"budget.total_timesteps={2 * budget.total_timesteps}")
    trained = state[clock]
    if budget.max_minutes is not None and trained >= 60 * budget.max_minutes:
        raise ConfigError(f"{folder.path} already trained {trained / 60:.1f} of budget.max_minutes="
                          f"{budget.max_minutes:g} minutes: give more, e.g. skipbo train --resume {folder.path} "
                          f"budget.max_minutes={2 * budget.max_minutes:g}")
