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

A checkpoint folder holds ``learner.pt`` (the whole actor-critic ``state_dict``),
``optimizer.pt`` (Adam's state), ``pool.pt`` (the snapshot weights of the opponent pool),
``state.json`` (steps, schedules, generator states, evaluation history), a copy of
``run.json`` and ``config.yaml``, and ``model.zip`` (the policy at that step, loadable like any
model). Every file is written to a temporary name and renamed, and the folder itself is built
under a temporary name and renamed into place before ``latest.json`` points to it, so a kill at
any moment leaves the previous checkpoint whole. Every tensor file is read back with
``torch.load(weights_only=True)``: resuming never unpickles objects either.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from skipbo_env.files import current_umask, fsync_directory, write_bytes_atomically, write_json_atomically, write_text_atomically

CHECKPOINTS = "checkpoints"
LATEST = "latest.json"
TENSORBOARD = "tensorboard"
CHECKPOINT_NAME = re.compile(r"step_\d{9,}")
STATE_COUNTERS = ("timesteps", "updates", "next_snapshot", "next_evaluation", "next_checkpoint")
RLLIB_STATE_COUNTERS = ("timesteps", "iterations", "next_snapshot", "next_evaluation", "next_checkpoint")
"""The counters of a checkpoint's state: the SB3 trainer counts updates, the RLlib trainer iterations."""


class CheckpointError(ValueError):
    """A run folder or checkpoint that cannot be resumed; the message names the file and what is wrong."""


def tensors_to_bytes(tensors) -> bytes:
    """``torch.save`` of plain containers of tensors, into bytes."""
    import torch

    buffer = io.BytesIO()
    torch.save(tensors, buffer)
    return buffer.getvalue()


def load_tensors(path: str | Path):
    """Read a tensor file written by :func:`tensors_to_bytes`, never unpickling objects;
    :class:`CheckpointError` when it is missing or is not such a file."""
    import torch

    try:
        return torch.load(Path(path), map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises RuntimeError, EOFError, UnpicklingError, ... for a broken file
        raise CheckpointError(f"cannot resume from {path}: it is not a readable tensor file "
                              f"({type(error).__name__}: {error})") from None


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

    def run_info(self) -> dict:
        return json.loads(self.run_info_path.read_text())

    # ------------------------------------------------------------------ checkpoints
    def save_checkpoint(self, step: int, files: dict[str, bytes], state: dict, keep: int) -> Path:
        """Write a complete checkpoint folder atomically, point ``latest.json`` at it, prune old ones."""
        self.checkpoints_dir.mkdir(parents=True, exist_ok=True)
        name = f"step_{step:09d}"
        staging = Path(tempfile.mkdtemp(dir=self.checkpoints_dir, prefix=f".{name}."))
        os.chmod(staging, 0o777 & ~current_umask())
        try:
            for file_name, data in files.items():
                write_bytes_atomically(staging / file_name, data)
            write_json_atomically(staging / "state.json", state)
            shutil.copy2(self.run_info_path, staging / "run.json")
            shutil.copy2(self.config_path, staging / "config.yaml")
            final = self.checkpoints_dir / name
            if final.exists():
                shutil.rmtree(final)
            os.replace(staging, final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        fsync_directory(self.checkpoints_dir)
        write_json_atomically(self.checkpoints_dir / LATEST, {"checkpoint": name, "step": step})
        self._prune(keep, name)
        return final

    def latest_checkpoint(self) -> Path | None:
        """The last complete checkpoint folder, or ``None`` when the run has none yet."""
        pointer = self.checkpoints_dir / LATEST
        if not pointer.is_file():
            return None
        name = read_json_object(pointer).get("checkpoint")
        if not isinstance(name, str) or not CHECKPOINT_NAME.fullmatch(name):
            raise CheckpointError(f"{pointer} names no checkpoint folder ({name!r}); it should be "
                                  '{"checkpoint": "step_NNNNNNNNN", ...}')
        checkpoint = self.checkpoints_dir / name
        if not (checkpoint / "state.json").is_file():
            raise CheckpointError(f"{pointer} points to {checkpoint.name}, which is missing or incomplete")
        return checkpoint

    def _prune(self, keep: int, latest: str) -> None:
        finished = sorted(p for p in self.checkpoints_dir.glob("step_*") if p.is_dir())
        for old in finished[:-keep]:
            if old.name != latest:
                shutil.rmtree(old, ignore_errors=True)
        for leftover in self.checkpoints_dir.glob(".step_*"):
            shutil.rmtree(leftover, ignore_errors=True)


def read_checkpoint_state(checkpoint: Path, counters: tuple[str, ...] = STATE_COUNTERS) -> dict:
    """A checkpoint's ``state.json``, checked to hold the ``counters`` and lists a resumed run needs
    (the SB3 trainer's by default; the RLlib trainer counts iterations instead of updates)."""
    path = checkpoint / "state.json"
    state = read_json_object(path)
    for key in counters:
        if not _is_count(state.get(key)):
            raise CheckpointError(f"{path}: {key!r} must be an integer >= 0, not {state.get(key)!r}")
    if not isinstance(state.get("wall_seconds"), (int, float)) or isinstance(state["wall_seconds"], bool):
        raise CheckpointError(f"{path}: 'wall_seconds' must be a number, not {state.get('wall_seconds')!r}")
    steps = state.get("snapshot_steps")
    if not isinstance(steps, list) or not all(_is_count(step) for step in steps):
        raise CheckpointError(f"{path}: 'snapshot_steps' must be a list of steps, not {steps!r}")
    if not isinstance(state.get("history"), list):
        raise CheckpointError(f"{path}: 'history' must be a list of evaluations")
    best = state.get("best")
    if best is not None and not (isinstance(best, dict) and _is_count(best.get("timesteps"))
                                 and isinstance(best.get("score"), (int, float))):
        raise CheckpointError(f"{path}: 'best' must be null or {{\"score\": number, \"timesteps\": step}}")
    return state


def read_json_object(path: Path) -> dict:
    """The JSON object in ``path``; :class:`CheckpointError` naming the file when it holds anything else."""
    try:
        with path.open("rb") as stream:
            data = json.loads(stream.read(2**24).decode("utf-8"))  # a state file is kilobytes
    except (ValueError, RecursionError) as error:
        raise CheckpointError(f"{path} is not valid JSON ({type(error).__name__}: {error})") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path} must hold a JSON object, not {type(data).__name__}")
    return data


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
