"""The report of a tournament: the printed tables, the bar chart and the JSON file.

:func:`print_report` prints the command, seed, rules and versions, then a table per agent (win
rate with its 95% Wilson interval, points, turns, actions, time per action), the pairwise table
and the ratings (with three agents or more); :func:`write_plot` draws the win rates with their
intervals; :func:`write_json` writes :meth:`~evaluation.results.TournamentResult.to_json`, atomically.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from skipbo_env.files import json_text, write_bytes_atomically, write_text_atomically
from skipbo_env.provenance import versions
from evaluation.results import TournamentResult


def print_report(result: TournamentResult, command: str, file=None) -> None:
    """The tables of a tournament (rich), preceded by the command, seed, rules and versions."""
    from rich.console import Console

    out = file or sys.stdout
    console = Console(file=out)
    if not console.is_terminal:
        console = Console(file=out, width=130)
    print("\n".join(_header_lines(result, command)), file=out, flush=True)
    _print_agents(console, result)
    if len(result.names) > 2:
        _print_pairwise(console, result)
    if len(result.names) > 2 and result.games:
        _print_ratings(console, result)
    if result.error:
        console.print(f"[bold red]tournament stopped:[/] {result.error}")
    elif result.interrupted:
        console.print("[bold red]tournament interrupted[/]")


def _header_lines(result: TournamentResult, command: str) -> list[str]:
    deals = len({g.deal for g in result.games})
    lines = [
        f"$ {command}",
        f"seed {result.seed}; versions {json.dumps(versions())}",
        f"rules: {json.dumps(result.rules.to_dict())}",
        f"{len(result.games)} games ("
        + (f"duplicate deals: {deals} deals" if result.duplicate else "one deal each")
        + f", {len(result.seatings)} seatings per set"
        + (", every order of the agents" if result.seat_orders == "all" else "")
        + f") in {result.elapsed_s:.1f} s "
        + f"({len(result.games) / max(result.elapsed_s, 1e-9):,.0f} games/s) with {result.workers} "
        + ("kernel thread(s)" if result.engine == "vector" else "worker(s)"),
        f"engine: {result.engine} ({result.engine_reason})",
    ]
    if result.games_scheduled != result.games_requested:
        lines.append(f"note: {result.games_requested} games requested, rounded up to {result.games_scheduled} "
                     f"(whole sets of {len(result.seatings)} seatings)")
    return lines


def _print_agents(console, result: TournamentResult) -> None:
    from rich.table import Table

    table = Table(title="results per agent (win rate with 95% Wilson interval)")
    for column in ("agent", "games", "wins", "draws", "win rate", "95% CI", "points/hand", "turns/hand",
                   "actions/turn", "ms/action"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    for name, s in result.agent_stats().items():
        if not s["games"]:
            table.add_row(name, "0", "", "", "", "", "", "", "", "")
            continue
        lo, hi = s["ci95"]
        table.add_row(name, str(s["games"]), str(s["wins"]), str(s["draws"]), f"{s['win_rate']:.1%}",
                      f"{lo:.1%} - {hi:.1%}", f"{s['mean_points']:.1f}", f"{s['mean_turns']:.1f}",
                      f"{s['mean_actions_per_turn']:.2f}", _milliseconds(s["ms_per_action"]))
    console.print(table)


def _milliseconds(value: float | None) -> str:
    """Three decimals, five below 0.001 (the vector engine's kernel bots take microseconds)."""
    if value is None:
        return ""
    return f"{value:.3f}" if value >= 0.001 else f"{value:.5f}"


def _print_pairwise(console, result: TournamentResult) -> None:
    from rich.table import Table

    pairwise = result.pairwise()
    table = Table(title="pairwise: row agent's share of the games won by row or column agent (games together)")
    table.add_column("")
    for name in result.names:
        table.add_column(name, justify="right")
    for row in result.names:
        cells = []
        for column in result.names:
            cell = pairwise[row].get(column)
            if cell is None or cell["win_rate"] is None:
                cells.append("-")
            else:
                cells.append(f"{cell['win_rate']:.1%} ({cell['games']})")
        table.add_row(row, *cells)
    console.print(table)


def _print_ratings(console, result: TournamentResult) -> None:
    from rich.table import Table

    ratings = result.ratings()
    table = Table(title="ratings")
    for column in ("agent", "mu", "sigma", "ordinal"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    ordered = sorted(ratings["agents"].items(), key=lambda item: -item[1]["ordinal"])
    for name, r in ordered:
        table.add_row(name, f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['ordinal']:.2f}")
    console.print(table)
    console.print(f"rating method: {ratings['method']}", soft_wrap=True)


def write_plot(result: TournamentResult, path: str) -> None:
    """A bar chart of the win rates with their 95% Wilson intervals as error bars, written atomically
    (the format from the suffix of ``path``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stats = [(name, s) for name, s in result.agent_stats().items() if s["games"]]
    rates = [s["win_rate"] for _, s in stats]
    errors = [[max(0.0, r - s["ci95"][0]) for r, (_, s) in zip(rates, stats)],
              [max(0.0, s["ci95"][1] - r) for r, (_, s) in zip(rates, stats)]]
    figure, axes = plt.subplots(figsize=(max(4.0, 1.4 * len(stats) + 2), 4))
    axes.bar([name for name, _ in stats], rates, yerr=errors, capsize=6, color="#4C72B0")
    axes.set_ylim(0, 1.1)
    axes.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    axes.set_ylabel("win rate (95% Wilson interval)")
    rules = result.rules
    variant = "partners" if rules.partners else "singles"
    axes.set_title(f"{len(result.games)} games, {rules.num_players} players ({variant}), "
                   f"stockpiles of {rules.stock_size}, seed {result.seed}", fontsize=9)
    for x, (rate, (_, s)) in enumerate(zip(rates, stats)):
        axes.text(x, s["ci95"][1] + 0.02, f"{rate:.1%}", ha="center", fontsize=9)
    figure.tight_layout()
    image = io.BytesIO()
    figure.savefig(image, dpi=120, format=Path(path).suffix.lstrip(".") or None)
    plt.close(figure)
    write_bytes_atomically(path, image.getvalue())


def write_json(result: TournamentResult, path: str, command: str | None = None) -> None:
    """Every figure of the tournament (:meth:`~evaluation.results.TournamentResult.to_json`) to ``path``, atomically."""
    write_text_atomically(path, json_text(result.to_json(command), indent=1))
