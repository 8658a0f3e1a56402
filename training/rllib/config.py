"""``backend: rllib``'s config: its section (``rllib``: where and how RLlib trains), its checks and its resume
state. It declares the PPO sections it reads, as ``backend: sb3`` does (:mod:`training.ppo_sections`); ``ray`` is not its: ``rllib.address``
says where it trains."""

from __future__ import annotations

import dataclasses
from typing import Optional

from training.schema import BATCH, PROCESSES, Backend, ConfigError, setting
from training.ppo_sections import PPO_SECTIONS, check_ppo_sections
from training.state_checks import COUNT, TEXT, optional
from training.checkpoint import check_ppo_budget_left


@dataclasses.dataclass
class RLlibConfig:
    address: Optional[str] = setting(None, "Ray cluster to train on: null starts a local Ray instance; 'auto' or "
                                            "HOST:PORT joins a running cluster (ray start --head)")
    num_env_runners: int = setting(2, "RLlib env runners (processes playing hands), 0: sample in the driver",
                                   PROCESSES, min=0)
    num_envs_per_env_runner: int = setting(1, "environments stepped together in each env runner", BATCH)
    num_cpus_per_env_runner: float = setting(1.0, "CPUs Ray reserves for each env runner (fractions share a core)",
                                              min_exclusive=0.0, max=PROCESSES.max, why_max=PROCESSES.why_max)
    num_learners: int = setting(0, "learner processes (0: learn in the driver process)", PROCESSES,
                               min=0)
    train_batch_size: int = setting(4000, "env steps (all seats) sampled per training iteration", BATCH,
                                    min=2)
    iterations: Optional[int] = setting(None, "stop after this many training iterations (null: when the budget "
                                               "is spent)", min=1, max=10**7,
                                    why_max="an iteration takes a second or more: ten million are months")
    warm_start: Optional[str] = setting(None, "a project model file (agents.saved_model format, same network) "
                                               "whose policy weights the learner starts from")




def check(config) -> None:
    """A whole config with ``backend: rllib``: a minibatch within an iteration's batch, no pretraining, no
    subprocess environments (RLlib's env runners step them), then the shared PPO checks."""
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
    check_ppo_sections(config)


# ---------------------------------------------------------------------- resume state
STATE_COUNTERS = ("timesteps", "iterations", "next_snapshot", "next_evaluation", "next_checkpoint")
"""The counters of an RLlib checkpoint's ``state.json`` (the SB3 trainer counts updates instead of iterations)."""
RLLIB_STATE = {"snapshots_added": COUNT, "warm_start": optional(TEXT)}
"""The fields of an RLlib checkpoint's state beyond the counters, clock, snapshots and history of every PPO run."""


def check_resume(config, folder) -> None:
    """``--resume``: refuse a finished run whose steps or wall minutes (``wall_seconds``) are spent."""
    check_ppo_budget_left(config, folder, STATE_COUNTERS, RLLIB_STATE, clock="wall_seconds")


BACKEND = Backend(
    name="rllib", summary="RLlib PPO, locally or on a Ray cluster (see the rllib section)", section="rllib",
    settings=RLlibConfig, check=check, trainer="training.rllib.trainer:RLlibTrainer", check_resume=check_resume,
    sections=PPO_SECTIONS)
