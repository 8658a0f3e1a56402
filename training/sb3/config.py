"""``backend: sb3``'s config: its section (``pretrain``: behaviour cloning before PPO), its checks and its resume
state. It declares the PPO sections it reads, as ``backend: rllib`` does (:mod:`training.ppo_sections`: ``env``,
``opponents``, ``network``, ``ppo``, ``evaluation``, ``budget.total_timesteps``)."""

from __future__ import annotations

import dataclasses
from typing import Optional

from training.schema import (
    BATCH, LEARNING_RATE, MINUTES, PASSES, RECORDED_HANDS, SELF, Backend, ConfigError, setting,
)
from training.ppo_sections import MAX_PYTHON_ENVS, PPO_SECTIONS, check_ppo_sections
from training.state_checks import MAPPING, SECONDS, one_of, optional
from training.checkpoint import check_ppo_budget_left


@dataclasses.dataclass
class PretrainConfig:
    enabled: bool = setting(False, "warm-start the policy by behaviour cloning the teacher bot")
    teacher: str = setting("planner", "the bot whose decisions are imitated (agents.load_policy spec)")
    games: int = setting(300, "teacher games played to collect (observation, mask, action) data",
                         RECORDED_HANDS)
    epochs: int = setting(10, "passes over the collected data", PASSES)
    batch_size: int = setting(512, "minibatch size", BATCH, min=2)
    learning_rate: float = setting(1e-3, "Adam step size", LEARNING_RATE)
    value: bool = setting(True, "also fit the value network to the game outcomes")
    dagger_rounds: int = setting(0, "DAgger rounds after cloning: the learner plays, the teacher labels its "
                                     "decisions, the policy is refit on all the data", min=0,
                                 max=1000, why_max="each round plays and refits on all the data so far: a "
                                 "thousand take days")
    dagger_games: int = setting(200, "games the learner plays in each DAgger round", RECORDED_HANDS)
    dagger_epochs: int = setting(2, "passes over all the data after each DAgger round", PASSES)
    max_minutes: Optional[float] = setting(None, "wall-clock budget of the whole imitation phase (games, DAgger, "
                                                  "fitting); past it no new game starts and no further epoch or "
                                                  "round runs", MINUTES)




def check(config) -> None:
    """A whole config with ``backend: sb3``: no ``self`` seat, the shared PPO checks, a rollout the chosen
    environments can hold and a minibatch within it."""
    if SELF in config.opponents.mix:
        raise ConfigError(f"opponents.mix.{SELF}: the learner in other seats is a backend: rllib kind; "
                          "with backend: sb3 use snapshots")
    check_ppo_sections(config)
    if config.env.vec_env != "vector" and config.env.num_envs > MAX_PYTHON_ENVS:
        raise ConfigError(f"env.num_envs={config.env.num_envs} is too many for env.vec_env={config.env.vec_env!r}: "
                          f"use at most {MAX_PYTHON_ENVS}, or env.vec_env=vector")
    rollout = config.ppo.n_steps * config.env.num_envs
    if config.ppo.batch_size > rollout:
        raise ConfigError(
            f"ppo.batch_size={config.ppo.batch_size} is larger than a rollout "
            f"(ppo.n_steps x env.num_envs = {rollout}): lower it or raise n_steps"
        )


# ---------------------------------------------------------------------- resume state
STATE_COUNTERS = ("timesteps", "updates", "next_snapshot", "next_evaluation", "next_checkpoint")
"""The counters of an SB3 checkpoint's ``state.json`` (the RLlib trainer counts iterations instead of updates)."""
STOPPED_BY = {
    "steps": "budget.total_timesteps reached",
    "time": "the time budget is spent (budget.max_minutes={minutes} minutes of PPO)",
    "target": "the target is reached (budget.target_win_rate={target} against {opponent})",
    "interrupt": "interrupted (Ctrl-C)",
}
"""Why a run stopped, as the log says it."""
SB3_STATE = {"training_seconds": SECONDS, "pretrain": optional(MAPPING), "stopped_by": optional(one_of(*STOPPED_BY))}
"""The fields of an SB3 checkpoint's state beyond the counters, clock, snapshots and history of every PPO run."""


def check_resume(config, folder) -> None:
    """``--resume``: refuse a finished run whose steps or minutes of PPO (``training_seconds``) are spent."""
    check_ppo_budget_left(config, folder, STATE_COUNTERS, SB3_STATE, clock="training_seconds")


BACKEND = Backend(
    name="sb3", summary="MaskablePPO on one machine", section="pretrain", settings=PretrainConfig, check=check,
    trainer="training.sb3.trainer:Trainer", check_resume=check_resume, sections=PPO_SECTIONS)
