"""The leaderboard page's table of how each training backend's shipped config made its player, and the writer of
the page (``python -m training.leaderboard --write``).

The page's rating tables are :func:`evaluation.leaderboard.render` of the benchmark result files; below them,
one row per player a training backend's shipped config made, for every backend of
:data:`training.backends.BACKENDS` in its order: its backend, its config, the row of what it made (its tier and
rating) and the compute read from the file its run wrote (:func:`evaluation.leaderboard.compute`). The players are
the table of shipped players (:data:`agents.shipped.SHIPPED_PLAYERS`) and :data:`BRIEF_RUNS`; a backend that made
none gets a row saying so. The table names the backends, so it lives here, above the evaluation layer.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import yaml

from agents.shipped import SHIPPED_PLAYERS
from evaluation.leaderboard import PAGE, ROOT, compute, load_records, render, write_page
from training.backends import BACKENDS
from training.config import DEFAULT_BACKEND

HEADING = "### How the training backends' shipped configs made their players\n"


@dataclasses.dataclass(frozen=True)
class Made:
    """A training backend's shipped config, the leaderboard row of the player it made, and the file its run
    wrote with the counts and the time of that run (paths from the repository root)."""

    config: str
    result: str
    """The player's file in ``docs/leaderboard/``."""
    record: str
    """The model file or the run record that holds the compute (``evaluation.leaderboard.COMPUTE_FIELDS``)."""


BRIEF_RUNS = (
    Made("configs/rllib_2p.yaml", "rllib-2p-2p.json", "docs/leaderboard/trained/rllib-2p.json"),
)
"""Leaderboard rows of a backend that ships no player: a brief run of its config, its model beside its record."""


def made_by() -> tuple[Made, ...]:
    """Every row of the table: each shipped player (:data:`agents.shipped.SHIPPED_PLAYERS`) and each brief run."""
    return tuple(Made(player.config, player.leaderboard, player.record) for player in SHIPPED_PLAYERS) + BRIEF_RUNS


def backend(config: Path) -> str:
    """A config file's ``backend:`` (:data:`training.config.DEFAULT_BACKEND` when it has none)."""
    return yaml.safe_load(config.read_text()).get("backend", DEFAULT_BACKEND)


def render_made(records: list[dict]) -> str:
    """The table of the training backends' shipped configs: backend, config, the row of what each made (its
    tier and rating), and the compute read from its run's record; a backend that made no player, one row saying
    so."""
    by_file = {record["file"]: record for record in records}
    rows = made_by()
    parts = ["| backend | config | player | tier | rating | compute | from |", "|---|---|---|---|---|---|---|"]
    for name, trainer in BACKENDS.items():
        mine = [made for made in rows if backend(ROOT / made.config) == name]
        if not mine:
            parts.append(f"| {name} | | no shipped player yet ({trainer.summary}) | | | | |")
        for made in mine:
            record = by_file.get(made.result)
            player = (f"[`{record['policy']['spec']}`](leaderboard/{made.result})" if record
                      else f"no result file ({made.result})")
            tier, rating = (record["tier"], f"{record['rating']['ordinal']:.1f}") if record else ("", "")
            parts.append(f"| {name} | `{made.config}` | {player} | {tier} | {rating} "
                         f"| {compute(ROOT / made.record)} | `{made.record}` |")
    return "\n".join(parts) + "\n"


def render_page(records: list[dict]) -> str:
    """The generated part of ``docs/leaderboard.md``: the rating tables, then the table of what made them."""
    return render(records) + "\n" + HEADING + "\n" + render_made(records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.leaderboard", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the tables of docs/leaderboard.md")
    args = parser.parse_args(argv)
    if args.write:
        write_page(render_page(load_records()), PAGE)
    else:
        sys.stdout.write(render_page(load_records()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
