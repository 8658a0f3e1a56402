"""``backend: sb3`` (the default): masked PPO self-play against a pool of opponents (:class:`Trainer`).

:func:`training.run.train` reads the config and starts this trainer (or another backend's).

What a run does, in order (each step is a method of :class:`Trainer`):

1. Read and check the config (``training.config``): a bad key or value stops here, naming it.
   Every opponent and evaluation spec is loaded once, so a misspelt bot also stops here
   (:func:`training.run.train`, for every backend).
2. Create the run folder (``training.checkpoint``): resolved ``config.yaml``, ``run.json``.
3. Build ``env.num_envs`` single-agent environments, each seat of the other players filled by
   a :class:`training.sb3.selfplay.PoolOpponent`, and a ``MaskablePPO`` (sb3-contrib) learner.
   With ``env.vec_env: vector`` the hands run on the batched engine instead
   (:class:`training.sb3.selfplay_vector.VectorSelfPlayEnv`), the opponents drawn from the same pool.
   A user's own opponent class (no batched interface) is asked game by game; the log says so once.
4. Optionally (``pretrain.enabled``) clone the teacher bot's decisions (``training.sb3.pretrain``), on
   the batched engine for a kernel bot teacher, within ``pretrain.max_minutes``.
5. Train, until ``budget.total_timesteps``, ``budget.max_minutes`` of PPO (over the whole run,
   resumes included), ``budget.target_win_rate`` or Ctrl-C; the log says which ended it and how
   to continue. Every ``opponents.snapshot_every`` steps a frozen copy of the learner joins the
   pool; every ``evaluation.every_steps`` steps the learner (argmax play) meets each evaluation
   bot in a duplicate-deal tournament (``evaluation.tournament``), and the win rate and its 95%
   Wilson interval go to TensorBoard (``eval/``), the progress bar and the log; every
   ``checkpoint.every_steps`` steps a checkpoint is written atomically. SB3's losses
   (``train/*``) go to TensorBoard after every update. Progress shows as a bar in a terminal
   and as a log line every :data:`training.common.LOG_SECONDS` seconds otherwise.
6. At the end: a last checkpoint, the policy exported to ``model.zip`` (safe format of
   ``agents.saved_model``), a final evaluation against ``evaluation.final_opponents``
   written to ``evaluation.json``, to TensorBoard (``final/``) and printed as a table, the
   learning curve drawn to ``learning_curve.png``, and where the logs and the model are.
"""

from __future__ import annotations

import dataclasses
import time
from collections import defaultdict, deque
from pathlib import Path
from typing import TextIO

import numpy as np

from agents.loading import load_policy, short_name, tag_name
from agents.network import NetworkPolicy
from agents.saved_model import encode_model
from skipbo_env.encoding import OBS_SIZE
from skipbo_env.files import write_bytes_atomically
from training.checkpoint import (
    CheckpointError,
    RunFolder,
    load_tensors,
    read_checkpoint_state,
    tensors_to_bytes,
)
from training.common import (
    RunLog, TrainResult, clock, evaluate_policy, evaluation_line, final_ppo_evaluation, keep_if_best, log_win_rates,
    next_due, ppo_model_metadata, print_ppo_summary, progress_bar, training_seed, write_evaluation,
)
from training.config import TrainConfig
from training.sb3.config import SB3_STATE, STATE_COUNTERS, STOPPED_BY
from training.sb3.selfplay import OpponentPool, PoolOpponent, SelfPlayEnv
from agents.batched.seating import compile_kernels
from agents.batched.bots import kernel_bot_code
from training.sb3.pretrain import clone_teacher, collect_teacher_games, concatenate
from skipbo_env.envs.single_agent import SingleAgentEnv

PROGRESS_WINDOW = 200
"""Hands per opponent kind in the progress bar's training win rate."""


def limit_threads(threads: int) -> None:
    """Torch and numpy's BLAS on ``threads`` threads (``threads:``). The snapshots and the evaluation play
    numpy networks on small batches; a BLAS spreading those over every core is many times slower on a
    busy machine (42 ms against 1.1 ms for a 20-row forward pass of a 256x256 network on two loaded cores)."""
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(threads)
    threadpool_limits(limits=threads, user_api="blas")


def learner_weights(model) -> dict[str, np.ndarray]:
    """The policy half of the SB3 actor-critic, in the layout of :mod:`agents.network`, always reading the
    whole observation: a network of ``network.inputs: table`` gets zero weights for the values it skips."""
    weights = {name.removeprefix("mlp_extractor."): tensor.detach().cpu().numpy().copy()
               for name, tensor in model.policy.state_dict().items()
               if name.startswith(("mlp_extractor.policy_net.", "action_net."))}
    inputs = getattr(model.policy.features_extractor, "inputs", None)
    first = "policy_net.0.weight"
    if inputs is not None and first in weights:
        read = weights[first]
        weights[first] = np.zeros((read.shape[0], OBS_SIZE), dtype=read.dtype)
        weights[first][:, inputs.cpu().numpy()] = read
    return weights


# ---------------------------------------------------------------------- the trainer
class Trainer:
    """One run: environments, learner, pool, schedules, and the files in the run folder."""

    def __init__(self, config: TrainConfig, folder: RunFolder, progress: bool, out: TextIO) -> None:
        self.config = config
        self.folder = folder
        self.rules = config.make_rules()
        self.progress = progress
        self.snapshots: list[tuple[int, dict]] = []
        self.state = {
            "timesteps": 0, "updates": 0, "wall_seconds": 0.0, "history": [], "pretrain": None,
            "next_snapshot": config.opponents.snapshot_every,
            "next_evaluation": config.evaluation.every_steps,
            "next_checkpoint": config.checkpoint.every_steps, "best": None,
            "training_seconds": 0.0, "stopped_by": None,
        }
        self.training_results: dict[str, deque] = defaultdict(lambda: deque(maxlen=PROGRESS_WINDOW))
        self._session_start = time.perf_counter()
        self._wall_before = 0.0
        self._training_before = 0.0
        self._training_start: float | None = None
        self._stop: str | None = None
        self.log = RunLog(out)
        self.model = None
        self.vec_env = None

    # ------------------------------------------------------------------ set-up
    def _build(self, env_seed: int) -> None:
        """Environments and learner; ``env_seed`` seeds SB3 (deals, sampling) and the pool seats."""
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.logger import configure
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

        from training.sb3.network import policy_kwargs

        config = self.config
        limit_threads(config.threads)
        if config.env.vec_env == "vector":
            vector_env = vector_selfplay_env(config, self.rules, env_seed)
            for kind in vector_env.per_game_players():
                self.log.print(f"opponent {kind!r} has no batched interface (act_batch or logits): the batched engine "
                               "asks it game by game, slower than the shipped bots and snapshots")
            self.vec_env = VecMonitor(vector_env)
        else:
            factories = [env_factory(config, self.rules, index, env_seed) for index in range(config.env.num_envs)]
            vec_class = SubprocVecEnv if config.env.vec_env == "subproc" else DummyVecEnv
            self.vec_env = VecMonitor(vec_class(factories))
        ppo = config.ppo
        self.model = MaskablePPO(
            "MlpPolicy", self.vec_env, learning_rate=ppo.learning_rate, n_steps=ppo.n_steps,
            batch_size=ppo.batch_size, n_epochs=ppo.n_epochs, gamma=ppo.gamma, gae_lambda=ppo.gae_lambda,
            clip_range=ppo.clip_range, ent_coef=ppo.ent_coef, vf_coef=ppo.vf_coef, max_grad_norm=ppo.max_grad_norm,
            target_kl=ppo.target_kl, seed=env_seed, device=config.device, verbose=0,
            policy_kwargs=policy_kwargs(config.network, self.rules.num_players),
        )
        self.model.set_logger(configure(str(self.folder.tensorboard_dir), ["tensorboard"]))

    @staticmethod
    def _read_checkpoint(checkpoint: Path) -> dict:
        """Every file of ``checkpoint`` a resume reads, each checked, before anything is built or written (a refused
        resume leaves the run folder as it was)."""
        return {"state": read_checkpoint_state(checkpoint, STATE_COUNTERS, SB3_STATE),
                **{name: load_tensors(checkpoint / f"{name}.pt") for name in ("learner", "optimizer", "pool")}}

    def _restore(self, checkpoint: Path, saved: dict) -> None:
        state = saved["state"]
        self.state.update(state)
        try:
            self.model.policy.load_state_dict(saved["learner"])
            self.model.policy.optimizer.load_state_dict(saved["optimizer"])
        except (RuntimeError, KeyError, TypeError) as error:  # torch's words for weights of another shape
            raise CheckpointError(f"cannot resume from {checkpoint}: its weights do not fit the network of the "
                                  f"config ({type(error).__name__}: {' '.join(str(error).split())[:300]})") from None
        self.model.num_timesteps = state["timesteps"]
        self.model._n_updates = state["updates"]
        pool = saved["pool"]
        shapes = {name: value.shape for name, value in learner_weights(self.model).items()}
        for step in state["snapshot_steps"]:
            self._add_snapshot(_pool_snapshot(pool, step, shapes, checkpoint / "pool.pt"), step)
        self._wall_before = state["wall_seconds"]
        self._training_before = state["training_seconds"]

    # ------------------------------------------------------------------ the run
    def run(self) -> TrainResult:
        checkpoint = self.folder.latest_checkpoint()
        saved = self._read_checkpoint(checkpoint) if checkpoint else None
        self._build(env_seed=training_seed(self.config.seed, 1, saved["state"]["timesteps"] if saved else 0))
        self.log.print(f"run folder: {self.folder.path}")
        self._compile_kernels()
        if checkpoint is not None:
            self._restore(checkpoint, saved)
            self.log.print(f"resumed from {checkpoint.name} at step {self.state['timesteps']:,}")
        else:
            if self.config.pretrain.enabled:
                self._pretrain()
            self._add_snapshot(learner_weights(self.model), 0)
            self._evaluate()
            self._save_checkpoint()
        try:
            self._learn()
        except KeyboardInterrupt:
            self._end_training()
            self._stop = "interrupt"
            self._save_checkpoint()
            self._print_stop()
            raise
        finally:
            self.log.close_bar()
        self._save_checkpoint()
        self._print_stop()
        model_path = self._export_model()
        evaluation = self._final_evaluation()
        self.vec_env.close()
        print_ppo_summary(self.log, self.config.name, self.state, self.folder, evaluation, self._wall_seconds())
        return TrainResult(self.folder.path, model_path, self.state["timesteps"], evaluation, self.state["history"])

    def _compile_kernels(self) -> None:
        """Compile the batched engine and the kernel bots the run uses before any clock starts (on a first
        run about a minute of one core, then numba's cache), so the time budgets go to learning."""
        config = self.config
        specs = [*config.opponents.mix, *config.evaluation.opponents, *config.evaluation.final_opponents]
        if config.pretrain.enabled:
            specs.append(config.pretrain.teacher)
        bots = tuple(dict.fromkeys(spec for spec in specs if kernel_bot_code(spec) is not None))
        if config.env.vec_env != "vector" and not bots:
            return
        start = time.perf_counter()
        compile_kernels(self.rules.decks, bots or ("random",))
        self.log.print(f"batched engine ready in {clock(time.perf_counter() - start)} (numba kernels, compiled "
                       "on the first run, then read from the cache)")

    def _pretrain(self) -> None:
        settings = self.config.pretrain
        gamma, shaping = self.config.ppo.gamma, self.config.env.shaping
        start = time.perf_counter()
        deadline = None if settings.max_minutes is None else start + 60 * settings.max_minutes
        phase_end = _phase_deadlines(start, deadline, settings.dagger_rounds)
        engine = "the batched engine" if kernel_bot_code(settings.teacher) is not None else "the rules engine"
        limit = "" if deadline is None else f" (at most {settings.max_minutes:g} minutes: pretrain.max_minutes)"
        self.log.print(f"pretraining: behaviour cloning {settings.teacher!r} over {settings.games:,} games on "
                       f"{engine}{limit}")
        data = self._collect(lambda on_game: collect_teacher_games(
            settings.teacher, self.rules, settings.games, training_seed(self.config.seed, 2), gamma, on_game=on_game,
            deadline=phase_end[0], shaping=shaping), settings.games, "teacher games")
        report = self._clone(data, settings.epochs, phase_end[0])
        for round_index in range(settings.dagger_rounds):
            if deadline is not None and time.perf_counter() > deadline:
                self.log.print(f"pretrain.max_minutes={settings.max_minutes:g} is spent: DAgger rounds "
                               f"{round_index + 1}-{settings.dagger_rounds} skipped")
                break
            student = NetworkPolicy(learner_weights(self.model), self.config.network.hidden,
                                    self.config.network.activation)
            self.log.print(f"DAgger round {round_index + 1}/{settings.dagger_rounds}: the learner plays "
                           f"{settings.dagger_games:,} games, {settings.teacher!r} labels its decisions")
            data = concatenate([data, self._collect(lambda on_game, student=student, round_index=round_index: collect_teacher_games(
                settings.teacher, self.rules, settings.dagger_games, training_seed(self.config.seed, 2, round_index + 1),
                gamma, student=student, on_game=on_game, deadline=phase_end[round_index + 1], shaping=shaping),
                settings.dagger_games, "learner games")])
            report = self._clone(data, settings.dagger_epochs, phase_end[round_index + 1])
        self.state["pretrain"] = {**dataclasses.asdict(report), "seconds": round(time.perf_counter() - start, 1)}
        self.log.print(f"pretraining done in {clock(time.perf_counter() - start)}: {report.games:,} games, "
                       f"{report.decisions:,} decisions, agreement {report.agreement:.1%}, "
                       f"value error {report.value_error:.3f}")
        logger = self.model.logger
        logger.record("pretrain/agreement", report.agreement)
        logger.record("pretrain/value_error", report.value_error)

    def _collect(self, collect, games: int, description: str):
        bar = self._progress_bar(games, description, "game")
        try:
            return collect(lambda done: bar.update(done - bar.n))
        finally:
            bar.close()

    def _clone(self, data, epochs: int, deadline: float | None):
        settings = self.config.pretrain
        return clone_teacher(
            self.model.policy, data, epochs, settings.batch_size, settings.learning_rate, settings.value,
            seed=training_seed(self.config.seed, 3, len(data)), deadline=deadline,
            on_epoch=lambda epoch, agreement: self.log.print(
                f"  epoch {epoch}/{epochs}: agrees with the teacher on {agreement:.1%} of held-out decisions"),
        )

    def _learn(self) -> None:
        budget = self.config.budget.total_timesteps
        remaining = budget - self.state["timesteps"]
        if remaining <= 0:
            self._stop = "steps"
            return
        self.log.bar = self._progress_bar(budget, "training", "step", initial=self.state["timesteps"])
        self._refresh_bar()
        self._training_start = time.perf_counter()
        self.model.learn(total_timesteps=remaining, callback=_schedule_callback(self), reset_num_timesteps=False)
        self._end_training()
        if self._stop is None:
            self._stop = "steps" if self.state["timesteps"] >= budget else "time"

    def _end_training(self) -> None:
        """Close the PPO phase: its time, the step count, and SB3's last losses (``train/*``) to TensorBoard."""
        if self._training_start is not None:
            self._training_before = self._training_seconds()
            self._training_start = None
        self._sync_state()
        self.model.logger.dump(self.state["timesteps"])
        self.log.close_bar()

    def _training_seconds(self) -> float:
        """Seconds of PPO over the whole run (this session's included)."""
        running = 0.0 if self._training_start is None else time.perf_counter() - self._training_start
        return self._training_before + running

    def _print_stop(self) -> None:
        """Why training ended and, when it ended early, how to continue."""
        budget = self.config.budget
        reason = STOPPED_BY[self._stop].format(minutes=f"{budget.max_minutes:g}" if budget.max_minutes else None,
                                               target=budget.target_win_rate, opponent=budget.target_opponent)
        self.state["stopped_by"] = self._stop
        step = self.state["timesteps"]
        self.log.print(f"training stopped at step {step:,} of {budget.total_timesteps:,} after "
                       f"{clock(self._training_seconds())} of PPO: {reason}")
        resume = f"skipbo train --resume {self.folder.path}"
        if self._stop == "time":
            self.log.print(f"continue with: {resume} budget.max_minutes={2 * budget.max_minutes:g}")
        elif self._stop == "target":
            self.log.print(f"continue with: {resume} budget.target_win_rate=null")
        elif self._stop == "interrupt":
            self.log.print(f"checkpoint at step {step:,} saved; continue with: {resume}")

    # ------------------------------------------------------------------ scheduled work
    def on_rollout_start(self) -> None:
        """Snapshots, evaluations and checkpoints that are due (weights are consistent here)."""
        self._sync_state()
        step = self.state["timesteps"]
        if self.config.ppo.anneal_lr:
            self._anneal_learning_rate()
        if step >= self.state["next_snapshot"]:
            self._add_snapshot(learner_weights(self.model), step)
            self.state["next_snapshot"] = next_due(step, self.config.opponents.snapshot_every)
        if step >= self.state["next_evaluation"]:
            self._evaluate()
            self.state["next_evaluation"] = next_due(step, self.config.evaluation.every_steps)
        if step >= self.state["next_checkpoint"]:
            self.state["next_checkpoint"] = next_due(step, self.config.checkpoint.every_steps)
            self._save_checkpoint()

    def budget_spent(self) -> float:
        """The share of PPO's budget used: of ``budget.total_timesteps`` or of ``budget.max_minutes``, the larger."""
        budget = self.config.budget
        spent = self.state["timesteps"] / budget.total_timesteps
        if budget.max_minutes is not None:
            spent = max(spent, self._training_seconds() / (60 * budget.max_minutes))
        return min(spent, 1.0)

    def _anneal_learning_rate(self) -> None:
        """``ppo.anneal_lr``: the next update's step size, ``ppo.learning_rate`` times the budget left."""
        from stable_baselines3.common.utils import ConstantSchedule

        self.model.lr_schedule = ConstantSchedule(self.config.ppo.learning_rate * (1.0 - self.budget_spent()))

    def on_step(self, infos: list[dict], num_steps: int) -> bool:
        """Count finished hands per opponent; ``False`` stops training when the wall time is up."""
        for info in infos:
            if "selfplay_result" in info:
                self.training_results[info["selfplay_opponents"]].append(info["selfplay_result"])
        if self.log.bar is not None:
            self.log.bar.update(num_steps)
            if self.log.bar.n % 2048 < num_steps:
                self._refresh_bar()
        if self._stop is not None:
            return False
        limit = self.config.budget.max_minutes
        if limit is not None and self._training_seconds() >= 60 * limit:
            self._stop = "time"
            return False
        return True

    def _add_snapshot(self, weights: dict, step: int) -> None:
        self.snapshots.append((step, weights))
        del self.snapshots[:-self.config.opponents.max_snapshots]
        self.state["snapshot_steps"] = [s for s, _ in self.snapshots]
        self.vec_env.env_method("add_snapshot", weights, step)

    def _evaluate(self) -> None:
        config = self.config.evaluation
        policy = NetworkPolicy(learner_weights(self.model), self.config.network.hidden, self.config.network.activation)
        start = time.perf_counter()
        results = evaluate_policy(policy, config.opponents, self.rules, config.games, training_seed(self.config.seed, 4))
        record = {"timesteps": self.state["timesteps"], "wall_seconds": round(self._wall_seconds(), 1),
                  "seconds": round(time.perf_counter() - start, 1), "results": results}
        self.state["history"].append(record)
        keep_if_best(self.state, record, self.folder.best_model_path,
                     lambda: encode_model(learner_weights(self.model), self._model_metadata()))
        logger = self.model.logger
        log_win_rates("eval", results, logger.record)
        for opponent, window in self.training_results.items():
            name = "+".join(tag_name(kind) for kind in opponent.split("+"))
            logger.record(f"selfplay/win_rate_vs_{name}", float(np.mean(np.array(window) > 0)))
        logger.dump(self.state["timesteps"])
        self.log.print(evaluation_line(self.state["timesteps"], self._wall_seconds(), results, config.games))
        self._refresh_bar()
        target = self.config.budget.target_win_rate
        if target is not None and record["timesteps"] > 0:
            if results[self.config.budget.target_opponent]["win_rate"] >= target:
                self._stop = "target"

    def _save_checkpoint(self) -> None:
        import torch

        self._sync_state()
        self.state["wall_seconds"] = round(self._wall_seconds(), 1)
        self.state["training_seconds"] = round(self._training_seconds(), 3)
        pool = {f"{step}/{name}": torch.from_numpy(value) for step, weights in self.snapshots
                for name, value in weights.items()}
        files = {
            "learner.pt": tensors_to_bytes(self.model.policy.state_dict()),
            "optimizer.pt": tensors_to_bytes(self.model.policy.optimizer.state_dict()),
            "pool.pt": tensors_to_bytes(pool),
            "model.zip": encode_model(learner_weights(self.model), self._model_metadata()),
        }
        self.folder.save_checkpoint(self.state["timesteps"], files, self.state, self.config.checkpoint.keep)

    def _sync_state(self) -> None:
        if self.model is not None:
            self.state["timesteps"] = int(self.model.num_timesteps)
            self.state["updates"] = int(self.model._n_updates)

    # ------------------------------------------------------------------ the end
    def _model_metadata(self) -> dict:
        return ppo_model_metadata(self.config, self.rules, self.state, "skipbo train: MaskablePPO (sb3-contrib) "
                                  "self-play against an opponent pool", pretrain=self.state["pretrain"])

    def _export_model(self) -> Path:
        model = encode_model(learner_weights(self.model), self._model_metadata())
        write_bytes_atomically(self.folder.model_path, model)
        return self.folder.model_path

    def _final_evaluation(self) -> dict:
        policy = NetworkPolicy(learner_weights(self.model), self.config.network.hidden, self.config.network.activation)
        results, seed = final_ppo_evaluation(self.config, self.rules, policy, self.log)
        log_win_rates("final", results, self.model.logger.record)
        self.model.logger.dump(self.state["timesteps"])
        write_evaluation(self.folder.evaluation_path, self.folder.model_path, seed, self.rules, results,
                         self.state["history"], timesteps=self.state["timesteps"])
        return results

    # ------------------------------------------------------------------ display
    def _progress_bar(self, total: int, description: str, unit: str, initial: int = 0):
        """``training.common.progress_bar``: a tqdm bar in a terminal, log lines otherwise."""
        return progress_bar(total, description, unit, initial, self.progress, self.log.out)

    def _refresh_bar(self) -> None:
        if self.log.bar is None:
            return
        postfix = {}
        if self.state["history"]:
            for opponent, stats in self.state["history"][-1]["results"].items():
                postfix[f"eval {short_name(opponent)}"] = f"{stats['win_rate']:.0%}"
        for opponent in sorted(self.training_results):
            window = self.training_results[opponent]
            line_up = "+".join(map(short_name, opponent.split("+")))
            postfix[f"vs {line_up}"] = f"{np.mean(np.array(window) > 0):.0%}"
        self.log.bar.set_postfix(postfix, refresh=False)

    def _wall_seconds(self) -> float:
        return self._wall_before + time.perf_counter() - self._session_start


def _schedule_callback(trainer: Trainer):
    """An SB3 callback that hands the rollout and step events to ``trainer`` (SB3 imported lazily)."""
    from stable_baselines3.common.callbacks import BaseCallback

    class Schedule(BaseCallback):
        """Hands SB3's callback events to the :class:`Trainer`."""

        def __init__(self, trainer: Trainer) -> None:
            super().__init__()
            self.trainer = trainer

        def _on_rollout_start(self) -> None:
            self.trainer.on_rollout_start()

        def _on_step(self) -> bool:
            return self.trainer.on_step(self.locals.get("infos", []), self.training_env.num_envs)

    return Schedule(trainer)


def _pool_snapshot(pool, step: int, shapes: dict, path: Path) -> dict[str, np.ndarray]:
    """The weights of the snapshot of ``step`` in a checkpoint's pool file, checked to be the learner's
    tensors (names and shapes; their finiteness is checked on reading)."""
    import torch

    prefix = f"{step}/"
    if not isinstance(pool, dict):
        raise CheckpointError(f"cannot resume from {path}: it holds no mapping of snapshot tensors")
    weights = {key[len(prefix):]: value for key, value in pool.items()
               if isinstance(key, str) and key.startswith(prefix)}
    if set(weights) != set(shapes) or not all(isinstance(value, torch.Tensor) and value.dtype == torch.float32
                                              and tuple(value.shape) == tuple(shapes[name])
                                              for name, value in weights.items()):
        raise CheckpointError(f"cannot resume from {path}: the snapshot of step {step} is missing or does not fit "
                              "the network (its tensors are not the learner's float32 weights)")
    return {name: value.numpy() for name, value in weights.items()}


def env_factory(config: TrainConfig, rules, index: int, seed: int):
    """A picklable recipe for environment ``index`` (SubprocVecEnv builds it in its own process)."""
    network = (list(config.network.hidden), config.network.activation)

    def make():
        pool = OpponentPool(config.opponents.mix, config.opponents.max_snapshots, network)
        opponents = [PoolOpponent(pool, training_seed(seed, index, seat), load_policy)
                     for seat in range(rules.num_players - 1)]
        env = SingleAgentEnv(opponents=opponents, rules=rules, random_seat=config.env.random_seat,
                             shaping=config.env.shaping, gamma=config.ppo.gamma)
        return SelfPlayEnv(env, pool, opponents)

    return make


def vector_selfplay_env(config: TrainConfig, rules, seed: int):
    """``env.vec_env: vector``: all ``env.num_envs`` hands on the batched engine, opponents from one pool."""
    from training.sb3.selfplay_vector import VectorSelfPlayEnv

    pool = OpponentPool(config.opponents.mix, config.opponents.max_snapshots,
                        (list(config.network.hidden), config.network.activation))
    return VectorSelfPlayEnv(rules, config.env.num_envs, pool, seed=seed,
                             learner_seat=None if config.env.random_seat else 0,
                             shaping=config.env.shaping, gamma=config.ppo.gamma)


def _phase_deadlines(start: float, deadline: float | None, rounds: int) -> list[float | None]:
    """When each imitation phase must end: cloning the teacher's games (75% of the budget when DAgger
    rounds follow), then each DAgger round an equal share of the rest."""
    if deadline is None:
        return [None] * (rounds + 1)
    first = 0.75 if rounds else 1.0
    shares = np.cumsum([first] + [(1.0 - first) / rounds] * rounds)
    return [start + (deadline - start) * share for share in shares]
