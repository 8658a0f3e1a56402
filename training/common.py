"""What every training backend shares: the result of a run, the final results table, the evaluation of a
policy against bots, the run's seeds, schedules and clock.

The backends (:mod:`training.sb3.trainer` for SB3, :mod:`training.snes.trainer` for sNES, :mod:`training.rllib.trainer`
for RLlib, :mod:`training.neural.trainer`) import these; :mod:`training.run` reads a config and starts one of them.
"""

from __future__ import annotations

import dataclasses
import datetime
import sys
import time
from pathlib import Path
from typing import TextIO

from agents.loading import short_name
from skipbo_env.seeds import derived_seed


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
    from evaluation import run_tournament

    results = {}
    for opponent in opponents:
        tournament = run_tournament([policy, opponent], rules, games, seed, names=["learner", opponent],
                                    engine="auto")
        stats = tournament.agent_stats()["learner"]
        results[opponent] = {key: stats[key] for key in ("games", "wins", "draws", "losses", "win_rate", "ci95",
                                                         "mean_points")}
    return results


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
