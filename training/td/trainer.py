"""``backend: td``: the neural bot's value network learned by TD(λ) from the results of its hands.

The learner (:class:`training.td.learner.TDRun`) plays ``td.hands`` hands an iteration on the batched engine
(the network in every seat, or against a past snapshot of itself or a kernel bot, as ``td.opponents``
shares them), gives every stop and turn
end of the seats it learns from its λ-return and fits the network to them. This module runs it in a run folder:

- the budget is work, ``td.budget_hands``; a ``--resume`` with a larger one trains on;
- every ``td.checkpoint_every`` hands the whole state is saved (:meth:`RunFolder.save_checkpoint`:
  ``learner.npz`` and ``state.json``, :mod:`training.td.state`; numbers only, no game data) and the network
  written as ``model.json`` (``agents.load_policy("neural:model=RUN/model.json")`` plays it; the teacher start's
  residual model, ``skipbo-residual/2``: ``agents.load_policy("residual:model=RUN/model.json")`` on the batched
  engine);
- every ``td.curve_every`` hands, and before the first hand, a point of the learning curve: win rates against
  ``td.curve_opponents`` on held-out duplicate deals (the same deals at every point; the batched engine), with
  95% intervals, by hands played and CPU-hours of training, written as ``learning_curve.json`` and
  ``learning_curve.png``; the best point's network is ``best_model.json``;
- at the end of the budget, the final evaluation (``td.final_games`` deals against each curve opponent),
  ``evaluation.json`` and the summary.

Every random choice comes from the learner's generators, saved with it, and a curve point or a checkpoint draws
on none of them, so a run resumed from any checkpoint ends with the weights of one never stopped.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import TextIO

from skipbo_env.files import write_bytes_atomically, write_json_atomically
from skipbo_env.provenance import versions
from agents.batched.neural import input_fields
from training.checkpoint import RunFolder, compact_json
from training.common import (
    RunLog, TrainResult, clock, evaluate_policy, evaluation_line, keep_if_best, print_summary, progress_bar,
    training_seed, write_evaluation,
)
from training.config import TrainConfig
from training.distributed import WorkPool
from training.schema import SNAPSHOTS, ConfigError
from training.state_checks import read_json_object
from training.td.learner import TDRun, TDSettings, crossed
from training.td.state import LEARNER_FILE, check_inputs, checked_state, read_learner_arrays
from training.learning_curve import draw_learning_curve

MODEL_FILE = "model.json"
"""The run's network, the neural bot's format."""
BEST_MODEL_FILE = "best_model.json"
"""The network of the curve point with the best mean win rate."""
CURVE_FILE = "learning_curve.json"
CURVE_FORMAT = "skipbo-td-curve/1"
CURVE_SEED, FINAL_SEED = 1, 2
"""Keys of the curve's and the final evaluation's deal seeds (:func:`training.common.training_seed`)."""


class TDTrainer:
    """One ``backend: td`` run in its run folder: iterations, checkpoints, curve, final evaluation, summary."""

    def __init__(self, config: TrainConfig, folder: RunFolder, progress: bool, out: TextIO) -> None:
        self.config, self.folder, self.progress, self.log = config, folder, progress, RunLog(out)
        self.settings = config.td
        self.rules = config.make_rules()

    def learner_settings(self) -> TDSettings:
        """The learner's settings: the ``td`` section's of the same names (lists as tuples, dicts copied), the
        rules', the run's seed and threads."""
        rules, section = self.rules, self.settings
        named = {item.name: getattr(section, item.name) for item in dataclasses.fields(TDSettings)
                 if hasattr(section, item.name)}
        named = {name: tuple(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value
                 for name, value in named.items()}
        return TDSettings(**named, num_players=rules.num_players, stock_size=rules.stock_size, decks=rules.decks,
                          max_turns=rules.max_turns, seed=self.config.seed, threads=self.config.threads)

    # ------------------------------------------------------------------ state
    def load(self, checkpoint: Path | None = None) -> tuple[TDRun, dict]:
        """The learner and the run's state: from ``checkpoint`` (a checkpoint folder of the run; by default its
        last: ``--resume``), every value checked, or fresh where the run has none."""
        learner = TDRun(self.learner_settings())
        checkpoint = checkpoint or self.folder.latest_checkpoint()
        if checkpoint is None:
            return learner, {"wall_seconds": 0.0, "history": [], "best": None, "evaluation": None}
        state = checked_state(read_json_object(checkpoint / "state.json"), checkpoint, self.settings.max_snapshots)
        check_inputs(state, checkpoint, input_fields(self.rules.num_players))
        learner.restore(read_learner_arrays(checkpoint / LEARNER_FILE, learner, len(state["snapshot_hands"])), state)
        return learner, state

    def checkpoint(self, learner: TDRun, state: dict) -> None:
        state.update(learner.state_fields())
        model = compact_json(self.model_document(learner, state))
        self.folder.save_checkpoint(learner.hands_played, {LEARNER_FILE: learner.state_arrays(), MODEL_FILE: model},
                                    state, self.config.checkpoint.keep)
        write_bytes_atomically(self.folder.path / MODEL_FILE, model)

    # ------------------------------------------------------------------ the run
    def run(self) -> TrainResult:
        import torch

        torch.set_num_threads(self.config.threads)
        settings = self.settings
        learner, state = self.load()
        budget = settings.budget_hands
        if learner.hands_played >= budget and state["evaluation"] is not None:
            raise ConfigError(f"{self.folder.path} already trained {learner.hands_played:,} of td.budget_hands="
                              f"{budget}: give more, e.g. skipbo train --resume {self.folder.path} "
                              f"td.budget_hands={2 * budget}")
        if learner.hands_played < budget:
            state["evaluation"] = None  # a larger budget: the final evaluation is measured again at its end
        pool = (f"; a snapshot every {settings.snapshot_every:,} hands, the newest {settings.max_snapshots} kept, "
                f"{len(learner.pool)} now")
        shares = ", ".join(f"{share:.0%} {kind}" for kind, share in settings.opponents.items())
        model = ("correction to pretrained-2p's value" if settings.start == "teacher"
                 else "value network, valued from the turn's start" if settings.turn_baseline else "value network")
        drawn = (f"; {settings.rank_share:.0%} of its moves drawn among the teacher's best {settings.search_top}, "
                 f"fitted to their λ={settings.drawn_lam:g} returns" if settings.rank_share else "")
        if settings.correction_bound:
            model += f" within ±{settings.correction_bound:g} of its units"
        self.log.print(f"TD(λ={settings.lam:g}) from {settings.start}: a {settings.hidden[0]}x{settings.hidden[1]} "
                       f"{model}{drawn}, {settings.hands} hands an iteration ({shares}"
                       f"{'; stockpiles of ' + ', '.join(map(str, settings.stock_sizes)) + ' in turn' if settings.stock_sizes else ''}"
                       f"{pool if settings.opponents.get(SNAPSHOTS) else ''}"
                       f"); budget {budget:,} hands, "
                       f"{learner.hands_played:,} played")
        learner.work_pool = WorkPool(self.config.ray.address, self.config.ray.workers)
        if settings.chunk and settings.chunk < settings.hands:
            where = (learner.work_pool.describe() if learner.work_pool.on_ray
                     else f"on {self.config.threads} thread(s) here")
            self.log.print(f"self-play in parts of {settings.chunk} hands: {where}")
        bar = self.log.bar = progress_bar(budget, "hands (budget)", "hand", learner.hands_played, self.progress,
                                          self.log.out)
        try:
            if not state["history"]:
                self.timed(state, self.curve_point, learner, state)
            while learner.hands_played < budget:
                before = learner.hands_played
                figures = self.timed(state, learner.iterate)
                bar.update(learner.hands_played - before)
                bar.set_postfix({"loss": f"{figures['loss']:.3f}", "hands/CPU-s": f"{figures['hands_per_cpu_second']:.1f}"})
                if crossed(before, learner.hands_played, settings.curve_every):
                    self.timed(state, self.curve_point, learner, state)
                if crossed(before, learner.hands_played, settings.checkpoint_every) or learner.hands_played >= budget:
                    self.log.print(f"{learner.hands_played:,} hands ({learner.iterations:,} iterations, "
                                   f"{learner.positions_fitted:,} positions fitted, {learner.cpu_seconds / 3600:.2f} "
                                   f"CPU-hours): loss {figures['loss']:.4f}, {figures['hands_per_cpu_second']:.1f} "
                                   "hands a CPU-second; state saved")
                    self.checkpoint(learner, state)
            if state["evaluation"] is None:
                self.timed(state, self.final_evaluation, learner, state)
                self.checkpoint(learner, state)
        except KeyboardInterrupt:
            self.log.print(f"interrupted: resume with skipbo train --resume {self.folder.path}")
            raise
        finally:
            self.log.close_bar()
            learner.work_pool.close()
        self.write_curve(state)
        self.summary(learner, state)
        return TrainResult(self.folder.path, self.folder.path / MODEL_FILE, learner.hands_played, state["evaluation"],
                           state["history"])

    @staticmethod
    def timed(state: dict, work, *arguments):
        """``work(*arguments)``, its wall time added to ``state["wall_seconds"]``."""
        begin = time.perf_counter()
        try:
            return work(*arguments)
        finally:
            state["wall_seconds"] += time.perf_counter() - begin

    # ------------------------------------------------------------------ the curve
    def measure(self, learner: TDRun, games: int, key: int) -> dict:
        return evaluate_policy(learner.bot(), self.settings.curve_opponents, self.rules, games,
                               training_seed(self.config.seed, key))

    def curve_point(self, learner: TDRun, state: dict) -> None:
        """Measure the network on the curve's deals; record, draw and write the curve; keep the best network."""
        games = self.settings.curve_games
        results = self.measure(learner, games, CURVE_SEED)
        point = self.point(learner, state, results)
        state["history"].append(point)
        self.log.print(evaluation_line(learner.hands_played, state["wall_seconds"], results, games)
                       + f" at {point['cpu_hours']:.3f} CPU-hours")
        keep_if_best(state, point, self.folder.path / BEST_MODEL_FILE,
                     lambda: compact_json(self.model_document(learner, state)))
        self.write_curve(state)

    @staticmethod
    def point(learner: TDRun, state: dict, results: dict, **fields) -> dict:
        return {"timesteps": learner.hands_played, "iterations": learner.iterations,
                "positions": learner.positions_fitted, "cpu_hours": round(learner.cpu_seconds / 3600, 5),
                "wall_seconds": round(state["wall_seconds"], 1), "results": results, **fields}

    def final_evaluation(self, learner: TDRun, state: dict) -> None:
        games = self.settings.final_games
        self.log.print(f"final evaluation: {games} duplicate-deal games against each of "
                       f"{', '.join(self.settings.curve_opponents)}")
        results = self.measure(learner, games, FINAL_SEED)
        state["evaluation"] = results
        state["history"].append(self.point(learner, state, results, final=True))
        self.log.print(evaluation_line(learner.hands_played, state["wall_seconds"], results, games))
        write_evaluation(self.folder.evaluation_path, self.folder.path / MODEL_FILE, self.config.seed, self.rules,
                         results, state["history"], hands=learner.hands_played,
                         cpu_hours=round(learner.cpu_seconds / 3600, 5))

    def write_curve(self, state: dict) -> None:
        """``learning_curve.json`` (every point: hands, CPU-hours, win rates with 95% intervals) and its picture."""
        periodic = [point for point in state["history"] if not point.get("final")]
        write_json_atomically(self.folder.path / CURVE_FILE, {
            "format": CURVE_FORMAT, "x": ["timesteps (hands played)", "cpu_hours (of training)"],
            "games": self.settings.curve_games, "history": periodic, "final": state["evaluation"]})
        last = state["history"][-1]["timesteps"] if state["history"] else 0
        draw_learning_curve(periodic, state["evaluation"] or {}, last, self.folder.curve_path,
                            title=f"{self.config.name}: TD(λ) network's win rate (95% intervals)",
                            x_label="hands played (CPU-hours of training on top)", top_label=cpu_hours_label)

    # ------------------------------------------------------------------ files
    def model_document(self, learner: TDRun, state: dict) -> dict:
        return {**learner.model_dict(),
                "method": f"TD(λ={self.settings.lam:g}) from {self.settings.start}, self-play results "
                          "(training/td/trainer.py)",
                "rules": self.rules.to_dict(), "hands": learner.hands_played, "iterations": learner.iterations,
                "positions": learner.positions_fitted, "cpu_hours": round(learner.cpu_seconds / 3600, 5),
                "seed": self.config.seed, "command": self.folder.run_info().get("command"), "versions": versions()}

    def summary(self, learner: TDRun, state: dict) -> None:
        model = self.folder.path / MODEL_FILE
        print_summary(self.log, state["evaluation"], f"{self.config.name}: the network after "
                      f"{learner.hands_played:,} hands ({learner.cpu_seconds / 3600:.2f} CPU-hours of training, "
                      f"{clock(state['wall_seconds'])})", [
                          ("model", model),
                          ("", f"play it: skipbo play --opponents neural:model={model}; measure it: "
                               f"skipbo evaluate --agents neural:model={model} planner --games 2000"
                           if self.settings.start == "scratch" else "measure it (on the batched engine): skipbo "
                           f"evaluate --agents residual:model={model} planner --games 2000"),
                          ("evaluation", self.folder.evaluation_path), ("curve", self.folder.curve_path),
                          ("curve data", self.folder.path / CURVE_FILE)])


def cpu_hours_label(point: dict) -> str:
    """The top axis's label of a curve point: its CPU-hours of training."""
    return f"{point['cpu_hours']:.2g} h"

