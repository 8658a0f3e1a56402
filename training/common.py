"""What every training backend shares, written once and called by each trainer: the result of a run, its log
(:class:`RunLog`: lines around the progress bar, :func:`progress_bar`), the evaluation of a policy against bots and
the line it prints, the evaluation file (:func:`write_evaluation`), the best model (:func:`keep_if_best`), the
summary at the end (:func:`print_summary`: the results table and where the files are), the run's seeds,
schedules and clock. The run folder and checkpoints are :mod:`training.checkpoint`, the curve
:mod:`training.learning_curve`.

The backends (:mod:`training.backends`: ``training/sb3``, ``training/rllib``, ``training/snes``,
``training/neural``, ``training/td``) import these; :mod:`training.run` reads a config and starts one of them.
"""

from __future__ import annotations

import dataclasses
import datetime
import sys
import time
from pathlib import Path
from typing import Callable, TextIO

import numpy as np

from agents.loading import short_name, tag_name
from skipbo_env.files import write_bytes_atomically, write_json_atomically
from skipbo_env.provenance import versions
from skipbo_env.seeds import derived_seed
from evaluation import run_tournament
from training.learning_curve import draw_learning_curve
from skipbo_env.encoding import OBS_SIZE

EVALUATION_FORMAT = "skipbo-train-evaluation/1"
"""The ``format`` of a run's ``evaluation.json``."""


@dataclasses.dataclass
class TrainResult:
    """What a finished run produced."""

    run_dir: Path
    model_path: Path
    timesteps: int
    evaluation: dict        # opponent -> {"win_rate", "ci95", "games", "wins", "draws", ...}
    history: list[dict]     # one record per periodic evaluation (the training curve)


def print_results_table(evaluation: dict, title: str, out: TextIO) -> None:
    """The final evaluation as a table: per opponent its games, wins, draws, win rate and 95% interval."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for column in ("opponent", "games", "wins", "draws", "win rate", "95% interval"):
        table.add_column(column, justify="left" if column == "opponent" else "right")
    for opponent, stats in evaluation.items():
        table.add_row(short_name(opponent), str(stats["games"]), str(stats["wins"]), str(stats["draws"]),
                      f"{stats['win_rate']:.1%}", f"{stats['ci95'][0]:.1%} - {stats['ci95'][1]:.1%}")
    Console(file=out, width=100).print(table)


def evaluate_policy(policy, opponents: list[str], rules, games: int, seed: int) -> dict:
    """Win rate and 95% interval of ``policy`` against each opponent (duplicate deals).

    The games run on the batched engine when it can play both (``engine="auto"``: a network and
    the shipped bots, game for game the same result as the python engine, about 25 times faster
    against ``planner``), else on the python engine.
    """
    results = {}
    for opponent in opponents:
        tournament = run_tournament([policy, opponent], rules, games, seed, names=["learner", opponent],
                                    engine="auto")
        stats = tournament.agent_stats()["learner"]
        results[opponent] = {key: stats[key] for key in ("games", "wins", "draws", "losses", "win_rate", "ci95",
                                                         "mean_points")}
    return results


def evaluation_line(step: int, seconds: float, results: dict, games: int) -> str:
    """The log line of a periodic evaluation: each opponent's win rate and 95% interval."""
    summary = ", ".join(f"{short_name(o)} {s['win_rate']:.1%} [{s['ci95'][0]:.1%}, {s['ci95'][1]:.1%}]"
                        for o, s in results.items())
    return f"step {step:>10,} ({clock(seconds)}): win rate vs {summary} ({games} games each)"


def log_win_rates(prefix: str, results: dict, scalar: Callable[[str, float], None]) -> None:
    """Each opponent's win rate and 95% interval as TensorBoard scalars ``PREFIX/win_rate_vs_NAME``,
    ``PREFIX/ci95_low_vs_NAME``, ``PREFIX/ci95_high_vs_NAME`` through ``scalar(tag, value)``."""
    for opponent, stats in results.items():
        name = tag_name(opponent)
        scalar(f"{prefix}/win_rate_vs_{name}", stats["win_rate"])
        scalar(f"{prefix}/ci95_low_vs_{name}", stats["ci95"][0])
        scalar(f"{prefix}/ci95_high_vs_{name}", stats["ci95"][1])


def mean_win_rate(results: dict) -> float:
    """The mean of the win rates of an evaluation (what the best model is chosen by)."""
    return float(np.mean([stats["win_rate"] for stats in results.values()]))


def keep_if_best(state: dict, record: dict, path: Path, model: Callable[[], bytes]) -> None:
    """Write ``model()`` to ``path`` (the run's ``best_model.zip``) and note it in ``state["best"]`` when the
    evaluation ``record`` (``timesteps``, ``results``) has the best mean win rate so far."""
    score = mean_win_rate(record["results"])
    best = state.get("best")
    if best is None or score > best["score"]:
        state["best"] = {"score": score, "timesteps": record["timesteps"]}
        write_bytes_atomically(path, model())


def print_best(state: dict, path: Path, log: "RunLog") -> None:
    """Where the best periodic evaluation's policy is (``state["best"]`` of :func:`keep_if_best`, a PPO run's), when
    it is not the final one."""
    best, history = state["best"], state["history"]
    if best is None or best["timesteps"] == state["timesteps"]:
        return
    mean = {record["timesteps"]: mean_win_rate(record["results"]) for record in history}
    last = history[-1]["timesteps"]
    if best["timesteps"] == history[0]["timesteps"] and last != best["timesteps"]:
        log.print(f"no later periodic evaluation beat the one before PPO (mean win rate {best['score']:.1%}; "
                  f"the last, at step {last:,}: {mean[last]:.1%}); that starting policy is {path}")
        return
    log.print(f"best periodic evaluation at step {best['timesteps']:,} (mean win rate {best['score']:.1%}): {path}")


def write_evaluation(path: Path, model: Path, seed: int, rules, results: dict, history: list, **fields) -> None:
    """The run's ``evaluation.json``: the final evaluation's ``results`` (opponent -> stats) of ``model`` on duplicate
    deals of ``seed``, the curve (``history``) and the backend's ``fields`` (its step, a reference...)."""
    write_json_atomically(path, {
        "format": EVALUATION_FORMAT, "model": str(model), "seed": seed, **fields, "rules": rules.to_dict(),
        "duplicate": True, "results": results, "history": history, "versions": versions(), "created": utc_now(),
    })


def print_summary(log: "RunLog", evaluation: dict, title: str, files: list[tuple[str, object]],
                  notes: list[str] = ()) -> None:
    """The end of a run: the final evaluation as a table, the backend's ``notes`` on it, then one line per
    ``(label, text)`` of ``files`` (where the model, the evaluation, the curve are, how to play them), the labels
    in one column."""
    print_results_table(evaluation, title, log.out)
    for note in notes:
        log.print(note)
    for label, text in files:
        log.print(f"{label + ':' if label else '':<13}{text}")


def print_ppo_summary(log: "RunLog", name: str, state: dict, folder, evaluation: dict, wall_seconds: float) -> None:
    """The end of a PPO run (SB3 or RLlib): its learning curve drawn, the final results table, where its files are
    and how to play them, and the best periodic evaluation's policy when it is not the final one."""
    model_path = folder.model_path
    draw_learning_curve(state["history"], evaluation, state["timesteps"], folder.curve_path,
                        title=f"{name}: win rate of the learner (95% intervals)")
    print_summary(log, evaluation, f"{name}: learner after {state['timesteps']:,} steps ({clock(wall_seconds)})", [
        ("model", model_path),
        ("", f"play it: skipbo play --opponents {model_path}; measure it: "
             f"skipbo evaluate --agents {model_path} greedy planner --games 2000"),
        ("tensorboard", f"tensorboard --logdir {folder.tensorboard_dir}"),
        ("evaluation", folder.evaluation_path), ("curve", folder.curve_path)])
    print_best(state, folder.best_model_path, log)


def ppo_model_metadata(config, rules, state: dict, trained_with: str, **fields) -> dict:
    """The metadata of a PPO backend's model file (``agents.saved_model``): the network, rules, seed, step, config,
    versions, the last evaluation, how it was trained, and the backend's ``fields`` (which win over these)."""
    return {
        "obs_size": OBS_SIZE, "hidden": list(config.network.hidden), "activation": config.network.activation,
        "rules": rules.to_dict(), "seed": config.seed, "timesteps": state["timesteps"], "config": config.to_dict(),
        "versions": versions(), "created": utc_now(), "trained_with": trained_with,
        "last_evaluation": state["history"][-1] if state["history"] else None, **fields,
    }


def final_ppo_evaluation(config, rules, policy, log: "RunLog") -> tuple[dict, int]:
    """A PPO run's final evaluation: ``policy`` against each of ``evaluation.final_opponents`` on
    ``evaluation.final_games`` duplicate deals, said in the log; returns the results and the deals' seed."""
    settings = config.evaluation
    log.print(f"final evaluation: {settings.final_games} duplicate-deal games against each of "
              f"{', '.join(map(short_name, settings.final_opponents))}")
    seed = training_seed(config.seed, 5)
    start = time.perf_counter()
    results = evaluate_policy(policy, settings.final_opponents, rules, settings.final_games, seed)
    log.print(f"final evaluation done in {clock(time.perf_counter() - start)}")
    return results, seed


def training_seed(seed: int, *key: int) -> int:
    """A training seed: the 32-bit :func:`skipbo_env.seeds.derived_seed` (the width runs have always used)."""
    return derived_seed(seed, *key, bits=32)


def next_due(step: int, every: int) -> int:
    """The first multiple of ``every`` after ``step`` (when a schedule next runs)."""
    return (step // every + 1) * every


def clock(seconds: float) -> str:
    """``seconds`` as ``12m05s`` or ``1h02m05s`` (the log's clock)."""
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{seconds:02d}s" if hours else f"{minutes}m{seconds:02d}s"


def utc_now() -> str:
    """The time now, UTC, to the second (ISO 8601), as run folders and model files record it."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class RunLog:
    """A run's log on ``out``: each line printed around the progress bar (:attr:`bar`, while one is shown), so the
    bar stays at the bottom of a terminal."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.bar = None

    def print(self, line: str) -> None:
        if self.bar is not None:
            self.bar.clear()
        print(line, file=self.out, flush=True)
        if self.bar is not None:
            self.bar.refresh()

    def close_bar(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


LOG_SECONDS = 30.0
"""Seconds between two progress lines when the output is not a terminal."""


def progress_bar(total: int, description: str, unit: str, initial: int, progress: bool, out: TextIO):
    """A tqdm bar on stderr in a terminal (its time left from the mean rate since the start, pauses for
    fitting and evaluating included); otherwise a :class:`ProgressLines` log line every :data:`LOG_SECONDS`
    on ``out``; nothing with ``progress=False``."""
    from tqdm import tqdm

    if progress and not sys.stderr.isatty():
        return ProgressLines(total, description, unit, initial, out)
    return tqdm(total=total, initial=initial, unit=unit, desc=description, disable=not progress, file=sys.stderr,
                dynamic_ncols=True, mininterval=0.5, smoothing=0.0)


class ProgressLines:
    """Progress for output that is not a terminal: a line every :data:`LOG_SECONDS` seconds
    (done, rate, time left, the bar's postfix), with the part of ``tqdm``'s interface the trainer uses."""

    def __init__(self, total: int, description: str, unit: str, initial: int, out: TextIO) -> None:
        self.total, self.description, self.unit, self.out = total, description, unit, out
        self.n = self._start_n = initial
        self._start = self._last = time.perf_counter()
        self._postfix: dict = {}

    def update(self, count: int) -> None:
        self.n += count
        now = time.perf_counter()
        if now - self._last >= LOG_SECONDS:
            self._last = now
            self._write(now)

    def _write(self, now: float) -> None:
        rate = (self.n - self._start_n) / max(now - self._start, 1e-9)
        left = f", {clock((self.total - self.n) / rate)} left" if rate > 0 and self.n < self.total else ""
        postfix = "".join(f", {key} {value}" for key, value in self._postfix.items())
        print(f"{self.description}: {self.n:,}/{self.total:,} {self.unit}s ({self.n / max(self.total, 1):.0%}), "
              f"{rate:,.0f} {self.unit}s/s{left}{postfix}", file=self.out, flush=True)

    def set_postfix(self, postfix: dict, refresh: bool = False) -> None:
        self._postfix = dict(postfix)

    def clear(self) -> None:
        pass

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass
