"""``skipbo train CONFIG`` with ``backend: rllib``: RLlib PPO self-play, locally or on a Ray cluster.

What a run does, in order (each step is a method of :class:`RLlibTrainer`):

1. Join Ray: a local instance (``rllib.address: null``, bound to 127.0.0.1) or a running
   cluster (``rllib.address: auto`` or ``HOST:PORT``), and register the environments
   (:mod:`training.rllib.env`).
2. Build RLlib's PPO (new API stack) on the multi-agent environment: the modules of
   :mod:`training.rllib.seating` (the learner, ``opponents.max_snapshots`` snapshot slots, one
   bot module per bot of ``opponents.mix``), only the learner trained; ``rllib.num_env_runners``
   env runners with ``rllib.num_envs_per_env_runner`` environments each, ``rllib.num_learners``
   learners. The ``ppo`` section maps onto RLlib's PPO settings (:func:`ppo_settings`).
3. A new run optionally starts from a model file (``rllib.warm_start``); its policy becomes the
   first snapshot, is evaluated and checkpointed. A resumed run (``--resume RUN_DIR``) loads
   its last checkpoint instead.
4. Train, one RLlib iteration (``rllib.train_batch_size`` env steps) at a time, until
   ``budget.total_timesteps`` learner decisions, ``budget.max_minutes`` or ``rllib.iterations``.
   After an iteration: the training metrics go to TensorBoard (:mod:`training.rllib.metrics`,
   RLlib's losses); snapshots, evaluations (the tournament harness, duplicate deals against
   ``evaluation.opponents``) and checkpoints follow their ``every_steps`` schedules.
5. At the end, as the SB3 path (:mod:`training.common`): a last checkpoint, ``model.zip`` in the safe model
   format, the final evaluation, the learning curve, the summary table.

Checkpoints hold the modules and the optimizer as plain tensors (``learner.pt``, read with
``weights_only=True``) and the schedules in ``state.json``; RLlib's own checkpoints (pickled
objects) are not used, so resuming never unpickles anything either.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TextIO

import numpy as np

from agents.network import NetworkPolicy
from agents.saved_model import encode_model, read_model
from skipbo_env.provenance import versions
from skipbo_env.files import write_bytes_atomically
from training.checkpoint import (CheckpointError, RunFolder, load_tensors,
                                 read_checkpoint_state, tensors_to_bytes)
from training.common import (
    RunLog, TrainResult, clock, evaluate_policy, evaluation_line, final_ppo_evaluation, keep_if_best, log_win_rates,
    next_due, ppo_model_metadata, print_ppo_summary, training_seed, write_evaluation,
)
from training.config import ConfigError, TrainConfig
from training.rllib.config import RLLIB_STATE, STATE_COUNTERS
from training.rllib.seating import LEARNER, SeatDrawer, bot_modules, snapshot_module
from agents.saved_model import SavedModelError
from skipbo_env.actions import NUM_ACTIONS
from evaluation.ray_runner import RayConnectionError, connect_ray
from skipbo_env.envs.aec import observation_space

LEARNER_STATE = "learner.pt"


def ppo_settings(config: TrainConfig) -> dict:
    """The ``ppo`` section as keyword arguments of RLlib's ``PPOConfig.training``."""
    ppo = config.ppo
    return {
        "lr": ppo.learning_rate, "gamma": ppo.gamma, "lambda_": ppo.gae_lambda, "clip_param": ppo.clip_range,
        "entropy_coeff": ppo.ent_coef, "vf_loss_coeff": ppo.vf_coef, "grad_clip": ppo.max_grad_norm,
        "grad_clip_by": "global_norm", "num_epochs": ppo.n_epochs, "minibatch_size": ppo.batch_size,
        "train_batch_size_per_learner": config.rllib.train_batch_size // max(1, config.rllib.num_learners),
        "use_kl_loss": False, "vf_clip_param": float("inf"),
    }


def warm_start_weights(config: TrainConfig) -> dict[str, np.ndarray] | None:
    """The policy weights of ``rllib.warm_start``, checked against ``network``; ``ConfigError`` if they do not fit.

    A model of an earlier observation layout (``agents/pretrained/ppo-2p.zip`` reads 731
    values) starts the learner with the same logits (:func:`training.rllib.module.read_whole_observation`).
    """
    from training.rllib.module import check_policy_weights, read_whole_observation

    path = config.rllib.warm_start
    if path is None:
        return None
    try:
        tensors, metadata = read_model(path)
        weights = read_whole_observation(tensors)
        check_policy_weights(weights, config.network.hidden, path)
    except (SavedModelError, ValueError) as error:
        raise ConfigError(f"rllib.warm_start: {error}") from None
    if metadata["activation"] != config.network.activation:
        raise ConfigError(f"rllib.warm_start: {path} uses activation {metadata['activation']!r}, "
                          f"network.activation is {config.network.activation!r}")
    return weights


def build_algorithm_config(config: TrainConfig, drawer: SeatDrawer):
    """RLlib's ``PPOConfig`` for a run (no Ray connection needed to build it)."""
    from gymnasium import spaces
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from training.rllib.env import ENV_NAME
    from training.rllib.metrics import SelfPlayMetrics
    from training.rllib.module import bot_spec, policy_spec

    observations, actions = observation_space(), spaces.Discrete(NUM_ACTIONS)
    network = (list(config.network.hidden), config.network.activation)
    modules = {LEARNER: policy_spec(observations, actions, *network)}
    for slot in range(config.opponents.max_snapshots):
        modules[snapshot_module(slot)] = policy_spec(observations, actions, *network)
    for index, (spec, module_id) in enumerate(bot_modules(config.opponents.mix).items()):
        modules[module_id] = bot_spec(observations, actions, spec, training_seed(config.seed, 6, index))
    settings = config.rllib
    return (
        PPOConfig()
        # RLlib's env pre-check steps every new env with action_space.sample(), blind to the
        # mask: an illegal move that ends the hand with PettingZoo's warning, in every env runner.
        # tests/rllib runs that check on the env instead.
        .environment(ENV_NAME, env_config=dict(config.rules), disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=settings.num_env_runners, num_envs_per_env_runner=settings.num_envs_per_env_runner,
                     num_cpus_per_env_runner=settings.num_cpus_per_env_runner, rollout_fragment_length="auto")
        .learners(num_learners=settings.num_learners)
        .multi_agent(policies=set(modules), policy_mapping_fn=drawer, policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .training(**ppo_settings(config))
        .callbacks(SelfPlayMetrics)
        .debugging(seed=config.seed)
        .python_environment(extra_python_environs_for_worker={"OMP_NUM_THREADS": str(config.threads)})
    )


def local_cpus(config: TrainConfig) -> int:
    """CPUs of a local Ray instance: the machine's, or what the run reserves when that is more
    (Ray then shares the cores: env runners, learners and the driver each reserve theirs)."""
    import math
    import os

    settings = config.rllib
    wanted = 1 + settings.num_learners + settings.num_env_runners * settings.num_cpus_per_env_runner
    return max(os.cpu_count() or 1, math.ceil(wanted))


class RLlibTrainer:
    """One ``backend: rllib`` run: Ray, the algorithm, the schedules and the run folder's files."""

    def __init__(self, config: TrainConfig, folder: RunFolder, progress: bool, out: TextIO) -> None:
        self.config = config
        self.folder = folder
        self.rules = config.make_rules()
        self.progress = progress
        self.state = {
            "timesteps": 0, "iterations": 0, "wall_seconds": 0.0, "history": [], "best": None,
            "snapshot_steps": [], "snapshots_added": 0, "warm_start": config.rllib.warm_start,
            "next_snapshot": config.opponents.snapshot_every, "next_evaluation": config.evaluation.every_steps,
            "next_checkpoint": config.checkpoint.every_steps,
        }
        self.training_metrics: dict[str, float] = {}
        self._session_start = time.perf_counter()
        self._wall_before = 0.0
        self.log = RunLog(out)
        self.algorithm = None
        self.writer = None

    # ------------------------------------------------------------------ the run
    def run(self) -> TrainResult:
        import ray

        warm_start = warm_start_weights(self.config)
        try:
            started_ray = connect_ray(self.config.rllib.address, num_cpus=local_cpus(self.config))
        except RayConnectionError as error:
            raise ConfigError(f"rllib.address: {error}") from None
        try:
            return self._run(warm_start)
        finally:
            if self.algorithm is not None:
                self.algorithm.stop()
            if self.writer is not None:
                self.writer.close()
            if started_ray:
                ray.shutdown()

    def _run(self, warm_start: dict | None) -> TrainResult:
        from torch.utils.tensorboard import SummaryWriter

        from training.rllib.env import register

        register()
        checkpoint = self.folder.latest_checkpoint()
        saved = self._read_checkpoint(checkpoint) if checkpoint is not None else None
        self.drawer = SeatDrawer(self.config.opponents.mix, self.rules.num_players, self.config.env.random_seat,
                                 training_seed(self.config.seed, 7))
        self.algorithm = build_algorithm_config(self.config, self.drawer).build_algo()
        self.writer = SummaryWriter(str(self.folder.tensorboard_dir))
        self.log.print(f"run folder: {self.folder.path}")
        self.log.print(f"ray: {self._describe_cluster()}")
        if checkpoint is not None:
            self._restore(checkpoint, *saved)
            self.log.print(f"resumed from {checkpoint.name} at step {self.state['timesteps']:,}")
        else:
            if warm_start is not None:
                self._set_modules({LEARNER: warm_start})
                self.log.print(f"warm start: the learner's policy from {self.config.rllib.warm_start}")
            self._add_snapshot(0)
            self._evaluate()
            self._save_checkpoint()
        try:
            self._learn()
        except KeyboardInterrupt:
            self._save_checkpoint()
            self.log.print(f"interrupted: checkpoint at step {self.state['timesteps']:,} saved; "
                           f"continue with: skipbo train --resume {self.folder.path}")
            raise
        self._save_checkpoint()
        model_path = self._export_model()
        evaluation = self._final_evaluation()
        print_ppo_summary(self.log, self.config.name, self.state, self.folder, evaluation, self._wall_seconds())
        return TrainResult(self.folder.path, model_path, self.state["timesteps"], evaluation, self.state["history"])

    def _describe_cluster(self) -> str:
        import ray

        settings = self.config.rllib
        learners = f"{settings.num_learners} learner(s)" if settings.num_learners else "learning in the driver"
        return (f"{len(ray.nodes())} node(s), {ray.cluster_resources().get('CPU', 0):g} CPUs; "
                f"{settings.num_env_runners} env runner(s) x {settings.num_envs_per_env_runner} env(s), {learners}")

    def _learn(self) -> None:
        budget = self.config.budget
        iterations = self.config.rllib.iterations
        while self.state["timesteps"] < budget.total_timesteps:
            if iterations is not None and self.state["iterations"] >= iterations:
                break
            if budget.max_minutes is not None and self._wall_seconds() >= 60 * budget.max_minutes:
                break
            result = self.algorithm.train()
            self.state["iterations"] += 1
            self.state["timesteps"] += _learner_steps(result)
            self._log_training(result)
            self._scheduled_work()

    def _scheduled_work(self) -> None:
        step = self.state["timesteps"]
        if step >= self.state["next_snapshot"]:
            self._add_snapshot(step)
            self.state["next_snapshot"] = next_due(step, self.config.opponents.snapshot_every)
        if step >= self.state["next_evaluation"]:
            self._evaluate()
            self.state["next_evaluation"] = next_due(step, self.config.evaluation.every_steps)
        if step >= self.state["next_checkpoint"]:
            self.state["next_checkpoint"] = next_due(step, self.config.checkpoint.every_steps)
            self._save_checkpoint()

    # ------------------------------------------------------------------ modules
    def learner_weights(self) -> dict[str, np.ndarray]:
        """The learner's policy in the layout of :mod:`agents.network`."""
        from training.rllib.module import policy_weights

        return policy_weights(self._module_states([LEARNER])[LEARNER])

    def _module_states(self, module_ids: list[str]) -> dict[str, dict]:
        return self.algorithm.learner_group.get_weights(module_ids=module_ids)

    def _set_modules(self, states: dict[str, dict]) -> None:
        """Set module weights on the learners and every env runner (missing tensors stay as they are)."""
        self.algorithm.learner_group.set_weights(states)
        self.algorithm.env_runner_group.sync_weights(policies=list(states), from_worker_or_learner_group=self.algorithm
                                                     .learner_group, inference_only=True, timeout_seconds=None)

    def _add_snapshot(self, step: int) -> None:
        """A frozen copy of the learner fills the next snapshot slot (the oldest is overwritten)."""
        slots = self.config.opponents.max_snapshots
        slot = self.state["snapshots_added"] % slots
        self._set_modules({snapshot_module(slot): self._module_states([LEARNER])[LEARNER]})
        steps = self.state["snapshot_steps"]
        if len(steps) < slots:
            steps.append(step)
        else:
            steps[slot] = step
        self.state["snapshots_added"] += 1
        self._share_kept_snapshots()

    def _share_kept_snapshots(self) -> None:
        kept = len(self.state["snapshot_steps"])
        self.drawer.kept_snapshots = kept

        def update(env_runner) -> None:
            env_runner.config.policy_mapping_fn.kept_snapshots = kept

        self.algorithm.env_runner_group.foreach_env_runner(update, local_env_runner=True)

    # ------------------------------------------------------------------ evaluation and logging
    def _evaluate(self) -> None:
        config = self.config.evaluation
        policy = NetworkPolicy(self.learner_weights(), self.config.network.hidden, self.config.network.activation)
        start = time.perf_counter()
        results = evaluate_policy(policy, config.opponents, self.rules, config.games, training_seed(self.config.seed, 4))
        record = {"timesteps": self.state["timesteps"], "wall_seconds": round(self._wall_seconds(), 1),
                  "seconds": round(time.perf_counter() - start, 1), "results": results,
                  "training": dict(self.training_metrics)}
        self.state["history"].append(record)
        keep_if_best(self.state, record, self.folder.best_model_path,
                     lambda: encode_model(self.learner_weights(), self._model_metadata()))
        step = self.state["timesteps"]
        log_win_rates("eval", results, lambda tag, value: self.writer.add_scalar(tag, value, step))
        self.writer.flush()
        self.log.print(evaluation_line(step, self._wall_seconds(), results, config.games))

    def _log_training(self, result: dict) -> None:
        from training.rllib.metrics import WIN_RATE_PREFIX

        step = self.state["timesteps"]
        runners = result.get("env_runners", {})
        metrics = {key: float(value) for key, value in runners.items()  # nan: no such hand ended lately
                   if key.startswith((WIN_RATE_PREFIX, "hand/")) and np.isscalar(value) and np.isfinite(value)}
        learner = result.get("learners", {}).get(LEARNER, {})
        for key in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "vf_explained_var", "curr_lr"):
            if key in learner and np.isscalar(learner[key]):
                metrics[f"ppo/{key}"] = float(learner[key])
        seconds = result.get("time_this_iter_s")
        if seconds:
            metrics["rllib/env_steps_per_second"] = _env_steps(result) / seconds
        for key, value in metrics.items():
            self.writer.add_scalar(key, value, step)
        self.writer.flush()
        self.training_metrics = metrics
        rates = ", ".join(f"{key.removeprefix(WIN_RATE_PREFIX)} {value:.0%}" for key, value in sorted(metrics.items())
                          if key.startswith(WIN_RATE_PREFIX))
        turns = metrics.get("hand/turns")
        self.log.print(f"iteration {self.state['iterations']}: step {step:,} ({clock(self._wall_seconds())}); "
                       f"training win rate vs {rates or '-'}; "
                       + (f"{turns:.1f} turns a hand" if turns is not None else "no hand finished yet"))

    # ------------------------------------------------------------------ checkpoints
    def _save_checkpoint(self) -> None:
        self.state["wall_seconds"] = round(self._wall_seconds(), 1)
        files = {
            LEARNER_STATE: tensors_to_bytes(_as_tensors(self._learner_state())),
            "model.zip": encode_model(self.learner_weights(), self._model_metadata()),
        }
        self.folder.save_checkpoint(self.state["timesteps"], files, self.state, self.config.checkpoint.keep)

    def _learner_state(self) -> dict:
        """The trained and frozen modules' weights and the optimizer state (plain containers)."""
        from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_OPTIMIZER, COMPONENT_RL_MODULE

        state = self.algorithm.learner_group.get_state(
            components=[f"{COMPONENT_LEARNER}/{COMPONENT_RL_MODULE}", f"{COMPONENT_LEARNER}/{COMPONENT_OPTIMIZER}"])
        learner = state[COMPONENT_LEARNER]
        return {COMPONENT_RL_MODULE: learner[COMPONENT_RL_MODULE], COMPONENT_OPTIMIZER: learner[COMPONENT_OPTIMIZER]}

    def _read_checkpoint(self, checkpoint: Path) -> tuple[dict, dict]:
        """``(state, learner state)`` of ``checkpoint``, each checked, before anything is built or written (a refused
        resume leaves the run folder as it was)."""
        from ray.rllib.core import COMPONENT_OPTIMIZER, COMPONENT_RL_MODULE

        state = read_checkpoint_state(checkpoint, STATE_COUNTERS, RLLIB_STATE)
        if len(state["snapshot_steps"]) > min(state["snapshots_added"], self.config.opponents.max_snapshots):
            raise CheckpointError(f"cannot resume from {checkpoint / 'state.json'}: 'snapshot_steps' lists "
                                  f"{len(state['snapshot_steps'])} snapshots; at most snapshots_added="
                                  f"{state['snapshots_added']} and opponents.max_snapshots="
                                  f"{self.config.opponents.max_snapshots} are kept")
        saved = load_tensors(checkpoint / LEARNER_STATE)
        if not isinstance(saved, dict) or not {COMPONENT_RL_MODULE, COMPONENT_OPTIMIZER} <= set(saved) \
                or not isinstance(saved[COMPONENT_RL_MODULE], dict):
            raise CheckpointError(f"cannot resume from {checkpoint / LEARNER_STATE}: it does not hold the modules "
                                  f"({COMPONENT_RL_MODULE!r}) and the optimizer ({COMPONENT_OPTIMIZER!r})")
        return state, saved

    def _restore(self, checkpoint: Path, state: dict, saved: dict) -> None:
        from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_RL_MODULE

        self.state.update(state)
        try:
            self.algorithm.learner_group.set_state({COMPONENT_LEARNER: saved})
        except (RuntimeError, KeyError, TypeError, ValueError) as error:  # torch's words for tensors of another shape
            raise CheckpointError(f"cannot resume from {checkpoint / LEARNER_STATE}: its modules do not fit the "
                                  f"config ({type(error).__name__}: {' '.join(str(error).split())[:300]})") from None
        modules = [module_id for module_id, weights in saved[COMPONENT_RL_MODULE].items() if weights]
        self.algorithm.env_runner_group.sync_weights(policies=modules, from_worker_or_learner_group=self.algorithm
                                                     .learner_group, inference_only=True, timeout_seconds=None)
        self._share_kept_snapshots()
        self._wall_before = self.state["wall_seconds"]

    # ------------------------------------------------------------------ the end
    def _model_metadata(self) -> dict:
        import ray

        return ppo_model_metadata(self.config, self.rules, self.state, "skipbo train (backend: rllib): RLlib PPO "
                                  "self-play against an opponent pool", versions={**versions(), "ray": ray.__version__},
                                  pretrain=None, warm_start=self.config.rllib.warm_start)

    def _export_model(self) -> Path:
        write_bytes_atomically(self.folder.model_path, encode_model(self.learner_weights(), self._model_metadata()))
        return self.folder.model_path

    def _final_evaluation(self) -> dict:
        policy = NetworkPolicy(self.learner_weights(), self.config.network.hidden, self.config.network.activation)
        results, seed = final_ppo_evaluation(self.config, self.rules, policy, self.log)
        step = self.state["timesteps"]
        log_win_rates("final", results, lambda tag, value: self.writer.add_scalar(tag, value, step))
        self.writer.flush()
        write_evaluation(self.folder.evaluation_path, self.folder.model_path, seed, self.rules, results,
                         self.state["history"], timesteps=step)
        return results

    def _wall_seconds(self) -> float:
        return self._wall_before + time.perf_counter() - self._session_start


def _learner_steps(result: dict) -> int:
    """Learner decisions sampled in one iteration."""
    sampled = result.get("env_runners", {}).get("num_module_steps_sampled", {})
    return int(sampled.get(LEARNER, 0))


def _env_steps(result: dict) -> float:
    return float(result.get("env_runners", {}).get("num_env_steps_sampled", 0))


def _as_tensors(tree):
    """numpy arrays (and numpy scalars) of a nested state as torch tensors, for a ``weights_only`` file."""
    import torch

    if isinstance(tree, dict):
        return {key: _as_tensors(value) for key, value in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_as_tensors(value) for value in tree)
    if isinstance(tree, (np.ndarray, np.generic)):
        return torch.from_numpy(np.array(tree))
    return tree
