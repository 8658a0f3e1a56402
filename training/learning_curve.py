"""The learning curve of a run as a picture: ``learning_curve.png`` in the run folder.

One line per periodic evaluation opponent (``evaluation.opponents``): the learner's win rate
at each evaluation step, its 95% Wilson interval shaded; the final evaluation
(``evaluation.final_opponents``, more games) as points with error bars at the last step. When
the records hold their ``wall_seconds``, the top axis shows the wall time (or what ``top_label``
says of a record: the TD backend's CPU-hours).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Callable

from agents.loading import short_name
from skipbo_env.files import write_bytes_atomically


def draw_learning_curve(history: list[dict], final: dict, final_step: int, path: Path, title: str,
                        x_label: str = "learner steps", references: dict | None = None,
                        reference_label: str = "reference", top_label: Callable[[dict], str] | None = None) -> None:
    """Draw ``history`` (the trainer's periodic evaluation records: ``timesteps``, ``results``, optionally
    ``wall_seconds``) and ``final`` (opponent -> stats) to ``path``; ``references`` (opponent -> win rate), a
    dashed level per opponent in its colour (another player's result on the same deals, e.g. a teacher's);
    ``top_label(record)``: the top axis's label at a record's step (default: its wall time in minutes)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(8, 4.5), dpi=100)
    colours: dict[str, str] = {}
    opponents = list(dict.fromkeys(opponent for record in history for opponent in record["results"]))
    for opponent in opponents:
        records = [record for record in history if opponent in record["results"]]
        steps = [record["timesteps"] for record in records]
        rates = [record["results"][opponent]["win_rate"] for record in records]
        low = [record["results"][opponent]["ci95"][0] for record in records]
        high = [record["results"][opponent]["ci95"][1] for record in records]
        line, = axes.plot(steps, rates, marker="o", label=f"vs {short_name(opponent)}")
        colours[opponent] = line.get_color()
        axes.fill_between(steps, low, high, color=line.get_color(), alpha=0.2)
    for opponent, rate in (references or {}).items():
        axes.axhline(rate, linestyle="--", linewidth=1, color=colours.get(opponent, "grey"),
                     label=f"{reference_label} vs {short_name(opponent)}")
    for opponent, stats in final.items():
        rate, (low, high) = stats["win_rate"], stats["ci95"]
        axes.errorbar([final_step], [rate], yerr=[[rate - low], [high - rate]], fmt="s", capsize=4,
                      color=colours.get(opponent), label=f"final vs {short_name(opponent)} ({stats['games']} games)")
    axes.set_xlabel(x_label)
    _top_axis(axes, history, top_label)
    axes.set_ylabel("win rate")
    axes.set_ylim(0, 1)
    axes.grid(alpha=0.3)
    axes.set_title(title)
    axes.legend(loc="best", fontsize="small")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    pyplot.close(figure)
    write_bytes_atomically(Path(path), buffer.getvalue())


def _wall_minutes(record: dict) -> str:
    return f"{record['wall_seconds'] / 60:.0f} min"


def _top_axis(axes, history: list[dict], label: Callable[[dict], str] | None) -> None:
    """``label(record)`` (default: the minutes of wall time) on the top axis, at up to six of the records' steps."""
    timed = history if label is not None else [record for record in history if "wall_seconds" in record]
    if len(timed) < 2:
        return
    marks = timed[::max(1, len(timed) // 6)]
    top = axes.secondary_xaxis("top")
    top.set_xticks([record["timesteps"] for record in marks], [(label or _wall_minutes)(record) for record in marks])
