"""The table of the bots and shipped models, drawn from ``docs/strength.jsonl``, the one source of
their win rates.

README.md and docs/bots.md hold the table between the lines :data:`BEGIN` and :data:`END`;
``tests/docs/test_docs.py`` fails when either differs from :func:`render_table`. To add a bot or a
model, add one line to docs/strength.jsonl (JSON Lines: one row a line) and redraw both tables:

    python -m tests.docs.strength_table --write

A row is ``{"name": ..., "made": ..., "figures": [...]}``; a figure is ``{"win": 78.3, "ci": [77.0,
79.6], "vs": "`planner`", "games": 4000}`` (percentages, as printed), and with ``"source"`` (an
evaluation JSON written by ``skipbo evaluate --json``), ``"agent"`` and optionally ``"opponent"``
the test also checks the figure against that file (the pairwise rate, or with no opponent the
agent's rate over all its games). A ``"source"`` in ``docs/leaderboard/`` is a benchmark result
(``skipbo benchmark --json``): ``"agent"`` is its policy's spec and ``"opponent"`` the rung, so the
table and the leaderboard show the same measurement.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from skipbo_env.files import read_file_text, write_text_atomically

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "docs" / "strength.jsonl"
PAGES = (ROOT / "README.md", ROOT / "docs" / "bots.md")
BEGIN = "<!-- strength table: drawn from docs/strength.jsonl by `python -m tests.docs.strength_table --write` -->"
END = "<!-- end of strength table -->"
MAX_PAGE_BYTES = 1 << 20
HEADER = ("| bot or model | how it was made | strength (two players unless said, 30-card stockpiles, duplicate deals, "
          "win rate [95% Wilson interval]) |\n|---|---|---|")


def load_rows(path: Path = SOURCE) -> list[dict]:
    """The rows of the strength file, one JSON object a line."""
    return [json.loads(line) for line in read_file_text(path, max_bytes=MAX_PAGE_BYTES).splitlines() if line.strip()]


def render_figure(figure: dict) -> str:
    """One win rate as printed: ``78.3% [77.0%, 79.6%] vs `planner` (4,000 games)``."""
    low, high = figure["ci"]
    return f"{figure['win']:.1f}% [{low:.1f}%, {high:.1f}%] vs {figure['vs']} ({figure['games']:,} games)"


def render_row(row: dict) -> str:
    strength = "; ".join(render_figure(figure) for figure in row["figures"]) or "baseline"
    return f"| {row['name']} | {row['made']} | {strength} |"


def render_table(rows: list[dict]) -> str:
    """The markdown table between :data:`BEGIN` and :data:`END`, those lines included."""
    return "\n".join([BEGIN, HEADER, *(render_row(row) for row in rows), END])


def table_in(text: str) -> str:
    """The table a page holds, from :data:`BEGIN` to :data:`END`; ValueError when it has none."""
    start, stop = text.find(BEGIN), text.find(END)
    if start < 0 or stop < start:
        raise ValueError("no strength table: the page lacks the BEGIN/END marker lines")
    return text[start:stop + len(END)]


def redraw(path: Path, rows: list[dict]) -> bool:
    """Replace the table in ``path`` with the one drawn from ``rows``; whether the file changed."""
    text = read_file_text(path, max_bytes=MAX_PAGE_BYTES)
    new = text.replace(table_in(text), render_table(rows))
    if new != text:
        write_text_atomically(path, new)
    return new != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.docs.strength_table", description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="redraw the tables in README.md and docs/bots.md")
    args = parser.parse_args(argv)
    rows = load_rows()
    if not args.write:
        print(render_table(rows))
        return 0
    for path in PAGES:
        print(f"{path.relative_to(ROOT)}: {'redrawn' if redraw(path, rows) else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
