"""The report of a benchmark run (:mod:`evaluation.benchmark`): the printed scorecard, its JSON file and its plot."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from skipbo_env.files import json_text, write_bytes_atomically, write_text_atomically


def print_scorecard(record: dict, file=None) -> None:
    """The scorecard of ``record`` (:meth:`~evaluation.benchmark.Scorecard.to_json`) as a table, with the
    command, the protocol, the deal hash and the versions above it."""
    from rich.console import Console
    from rich.table import Table

    out = file or sys.stdout
    console = Console(file=out)
    if not console.is_terminal:
        console = Console(file=out, width=130)
    deal_set = record["deal_set"]
    print("\n".join([
        f"$ {record['command']}",
        f"protocol {record['protocol']}, tier {record['tier']}, {record['players']} players: "
        f"{deal_set['deals']:,} of the tier's {deal_set['tier_deals']:,} deals"
        + ("" if record["complete"] else " (partial run: not comparable with complete ones)"),
        f"deal hash {deal_set['hash']}",
        f"versions {json.dumps(record['versions'])}",
        f"{record['cpu_seconds']:.1f} CPU-seconds, {record['wall_seconds']:.1f} s with {record['workers']} worker(s)",
    ]), file=out, flush=True)
    table = Table(title=f"{record['policy']['name']} against the ladder (95% intervals; margin = its points - the rung's)")
    for column in ("rung", "games", "wins", "draws", "win rate", "95% CI", "margin", "95% CI ", "ms/decision",
                   "engine"):
        table.add_column(column, justify="left" if column in ("rung", "engine") else "right")
    for rung in record["rungs"]:
        low, high = rung["win_ci95"]
        margin_interval = rung["margin_ci95"]  # None: one deal, no interval
        table.add_row(rung["rung"], f"{rung['games']:,}", f"{rung['wins']:,}", f"{rung['draws']:,}",
                      f"{rung['win_rate']:.1%}", f"{low:.1%} - {high:.1%}", f"{rung['margin']:+.1f}",
                      f"{margin_interval[0]:+.1f} .. {margin_interval[1]:+.1f}" if margin_interval else "undefined",
                      _milliseconds(rung["ms_per_decision"]),
                      rung["engine"])
    console.print(table)
    if record["rating"] is not None:
        rating = record["rating"]
        console.print(f"rating: {rating['ordinal']:.2f} (mu {rating['mu']:.2f}, sigma {rating['sigma']:.2f}); "
                      f"mean time a decision: {_milliseconds(record['ms_per_decision'])} ms", soft_wrap=True)
    if record["interrupted"]:
        console.print("[bold red]benchmark interrupted[/]")


def _milliseconds(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:.3f}" if value >= 0.001 else f"{value:.5f}"


def write_scorecard_json(record: dict, path: str) -> None:
    """``record`` to ``path``, atomically."""
    write_text_atomically(path, json_text(record, indent=1) + "\n")


def write_scorecard_plot(record: dict, path: str) -> None:
    """Win rates and margins by rung with their 95% intervals, side by side (format from the suffix)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rungs = record["rungs"]
    labels = [rung["rung"] for rung in rungs]
    figure, (wins, margins) = plt.subplots(1, 2, figsize=(max(7.0, 1.6 * len(rungs) + 3), 4))
    for axes, value, interval, colour in ((wins, "win_rate", "win_ci95", "#4C72B0"),
                                          (margins, "margin", "margin_ci95", "#DD8452")):
        values = [rung[value] for rung in rungs]
        bounds = [rung[interval] or (v, v) for v, rung in zip(values, rungs)]  # no interval: no error bar
        errors = [[max(0.0, v - low) for v, (low, _) in zip(values, bounds)],
                  [max(0.0, high - v) for v, (_, high) in zip(values, bounds)]]
        axes.bar(labels, values, yerr=errors, capsize=6, color=colour)
        axes.tick_params(axis="x", labelrotation=20)
    wins.set_ylim(0, 1.05)
    wins.set_ylabel("win rate (95% Wilson interval)")
    margins.axhline(0, color="black", linewidth=0.8)
    margins.set_ylabel("points margin a hand (95% interval)")
    figure.suptitle(f"{record['policy']['name']}: {record['protocol']} {record['tier']}, {record['players']} players, "
                    f"{record['deal_set']['deals']:,} deals", fontsize=10)
    figure.tight_layout()
    image = io.BytesIO()
    figure.savefig(image, dpi=120, format=Path(path).suffix.lstrip(".") or None)
    plt.close(figure)
    write_bytes_atomically(path, image.getvalue())
