"""The leaderboard of ``docs/leaderboard.md``, drawn from the benchmark result files in ``docs/leaderboard/``.

Each ``docs/leaderboard/*.json`` is the ``--json`` file of one complete ``skipbo benchmark`` run; the page's
tables (one per table set, best rating first) are :func:`render` of them, between two marker lines. Below
them, the table of how each training backend's shipped config made its player, with the compute read from the
file its run wrote (:func:`compute`): that table names the training backends, so it is drawn one layer up,
by ``training.leaderboard``, which also writes the page. A test keeps the page in step with the files: after
adding or replacing a file, run ``python -m training.leaderboard --write``.
"""

from __future__ import annotations

import json
from pathlib import Path

from agents.saved_model import read_model
from evaluation.benchmark import PROTOCOL, TABLE_SETS

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "docs" / "leaderboard"
PAGE = ROOT / "docs" / "leaderboard.md"
BEGIN = "<!-- leaderboard: drawn from docs/leaderboard/*.json by `python -m training.leaderboard --write` -->"
END = "<!-- end of leaderboard -->"


COMPUTE_FIELDS = (
    ("timesteps", lambda n: f"{n:,} PPO steps"),
    ("pretrain.games", lambda n: f"after cloning on {n:,} games"),
    ("games", lambda n: f"{n:,} hands"),
    ("hands", lambda n: f"{n:,} hands"),
    ("generation", lambda n: f"in {n} generations"),
    ("cpu_hours", lambda h: f"{h:.2f} CPU-hours"),
    ("cpu_seconds", lambda s: f"{s / 3600:.2f} CPU-hours"),
    ("wall_seconds", lambda s: f"{s / 3600:.2f} hours of wall time"),
    ("hardware", str),
)
"""The fields of a run's record that say what it cost, in the order the page names them, each with its words
(``a.b``: field ``b`` of field ``a``). A record without a time field gets "no time recorded"."""
TIME_FIELDS = ("cpu_hours", "cpu_seconds", "wall_seconds")


def load_records(folder: Path = FOLDER) -> list[dict]:
    """Every result file of ``folder``, each a complete run of this protocol (``ValueError`` names one that is not)."""
    records = []
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text())
        if record.get("protocol") != PROTOCOL or not record.get("complete"):
            raise ValueError(f"{path}: not a complete {PROTOCOL} result (a partial run or another protocol)")
        record["file"] = path.name
        records.append(record)
    return records


def render(records: list[dict]) -> str:
    """The tables of the page: one per table set, rows by rating, best first."""
    parts = []
    for players, table in TABLE_SETS.items():
        rows = sorted((r for r in records if r["players"] == players), key=lambda r: -r["rating"]["ordinal"])
        if not rows:
            continue
        rungs = [rung.spec for rung in table.ladder]
        parts.append(f"### {players} players\n")
        parts.append("| player | tier | rating | " + " | ".join(f"vs `{rung}`" for rung in rungs)
                     + " | ms/decision | CPU time | file |")
        parts.append("|---|---|---|" + "---|" * len(rungs) + "---|---|---|")
        for record in rows:
            by_rung = {rung["rung"]: rung for rung in record["rungs"]}
            cells = [_cell(by_rung[rung]) for rung in rungs]
            rating = record["rating"]
            parts.append(f"| `{record['policy']['spec']}` | {record['tier']} | {rating['ordinal']:.1f} "
                         f"({rating['mu']:.1f} ± {rating['sigma']:.1f}) | " + " | ".join(cells)
                         + f" | {_milliseconds(record['ms_per_decision'])} | {_cpu_time(record['cpu_seconds'])} "
                         f"| [{record['file']}](leaderboard/{record['file']}) |")
        parts.append("")
    return "\n".join(parts).rstrip() + "\n"


def compute(record: Path) -> str:
    """What a run cost, in words, from its record: a model file's metadata (``.zip``) or a JSON record."""
    data = read_model(record)[1] if record.suffix == ".zip" else json.loads(record.read_text())
    found = {field: _field(data, field) for field, _ in COMPUTE_FIELDS}
    words = [say(found[field]) for field, say in COMPUTE_FIELDS if found[field] is not None]
    if all(found[field] is None for field in TIME_FIELDS):
        words.append("no time recorded")
    return ", ".join(words)


def _field(data: dict, field: str):
    """``data``'s value at ``field`` (``a.b``: field ``b`` of field ``a``), ``None`` where it has none."""
    for key in field.split("."):
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _cell(rung: dict) -> str:
    """Win rate [interval], then the margin ± its half width."""
    low, high = rung["win_ci95"]
    interval = rung["margin_ci95"]  # None for a run of one deal
    half = f"{(interval[1] - interval[0]) / 2:.1f}" if interval else "undefined"
    return f"{100 * rung['win_rate']:.1f}% [{100 * low:.1f}, {100 * high:.1f}], {rung['margin']:+.1f} ± {half}"


def _cpu_time(seconds: float) -> str:
    """The run's CPU time in seconds, minutes or hours."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.2f} h"


def _milliseconds(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:.3f}" if value >= 0.001 else f"{value:.5f}"


def table_in(page: str) -> str:
    """The generated part of ``page``: what lies between the marker lines."""
    return page.split(BEGIN + "\n", 1)[1].split(END, 1)[0]


def write_page(text: str, page: Path = PAGE) -> None:
    """Replace the generated part of ``page`` (between the marker lines) by ``text``."""
    before, rest = page.read_text().split(BEGIN + "\n", 1)
    after = rest.split(END, 1)[1]
    page.write_text(before + BEGIN + "\n" + text + END + after)
